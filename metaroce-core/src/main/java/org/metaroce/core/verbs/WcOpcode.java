// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.verbs;

/**
 * What a completion reports on, with the libibverbs {@code IBV_WC_*} opcode names. Send-side
 * completions carry the requester's operation; receive-side ones say whether immediate data
 * arrived with a SEND or an RDMA WRITE.
 */
public enum WcOpcode {
    /** A SEND or SEND_WITH_IMM posted on the send queue. */
    SEND,
    /** An RDMA WRITE or WRITE_WITH_IMM posted on the send queue. */
    RDMA_WRITE,
    /** An RDMA READ posted on the send queue. */
    RDMA_READ,
    /** An atomic compare-and-swap posted on the send queue. */
    COMP_SWAP,
    /** An atomic fetch-and-add posted on the send queue. */
    FETCH_ADD,
    /** A receive consumed by an incoming SEND (with or without immediate data). */
    RECV,
    /** A receive consumed by an incoming RDMA WRITE_WITH_IMM; only the immediate data is delivered. */
    RECV_RDMA_WITH_IMM;

    private static final WcOpcode[] VALUES = values();

    /**
     * @param ordinal an ordinal of this enum
     * @return the constant, without allocating
     */
    public static WcOpcode fromOrdinal(final int ordinal) {
        return VALUES[ordinal];
    }

    /**
     * @return whether this completion came from the receive queue
     */
    public boolean isReceive() {
        return this == RECV || this == RECV_RDMA_WITH_IMM;
    }
}
