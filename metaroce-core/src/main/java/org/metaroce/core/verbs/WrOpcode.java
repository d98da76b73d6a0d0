// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.verbs;

/** Send work request operations, with the libibverbs {@code IBV_WR_*} names. */
public enum WrOpcode {
    /** Deliver the payload into the peer's next posted receive. */
    SEND(WcOpcode.SEND),
    /** SEND plus 32 bits of immediate data in the peer's receive completion. */
    SEND_WITH_IMM(WcOpcode.SEND),
    /** Write the payload to the peer's memory at (remoteAddr, rkey); the peer sees no completion. */
    RDMA_WRITE(WcOpcode.RDMA_WRITE),
    /** RDMA_WRITE that also consumes a peer receive and delivers immediate data. */
    RDMA_WRITE_WITH_IMM(WcOpcode.RDMA_WRITE),
    /** Read the peer's memory at (remoteAddr, rkey) into the local SGEs. */
    RDMA_READ(WcOpcode.RDMA_READ),
    /** 64-bit compare-and-swap at (remoteAddr, rkey); the original value lands in the single 8-byte SGE. */
    ATOMIC_CMP_SWAP(WcOpcode.COMP_SWAP),
    /** 64-bit fetch-and-add at (remoteAddr, rkey); the original value lands in the single 8-byte SGE. */
    ATOMIC_FETCH_ADD(WcOpcode.FETCH_ADD);

    private static final WrOpcode[] VALUES = values();

    private final WcOpcode wcOpcode;

    WrOpcode(final WcOpcode wcOpcode) {
        this.wcOpcode = wcOpcode;
    }

    /**
     * @param ordinal an ordinal of this enum
     * @return the constant, without allocating
     */
    public static WrOpcode fromOrdinal(final int ordinal) {
        return VALUES[ordinal];
    }

    /**
     * @return the opcode of the requester's completion for this operation
     */
    public WcOpcode wcOpcode() {
        return wcOpcode;
    }

    /**
     * @return whether the operation carries immediate data
     */
    public boolean hasImm() {
        return this == SEND_WITH_IMM || this == RDMA_WRITE_WITH_IMM;
    }

    /**
     * @return whether the operation is an atomic
     */
    public boolean isAtomic() {
        return this == ATOMIC_CMP_SWAP || this == ATOMIC_FETCH_ADD;
    }

    /**
     * @return whether the operation names remote memory by (remoteAddr, rkey)
     */
    public boolean usesRemoteAddress() {
        return this != SEND && this != SEND_WITH_IMM;
    }

    /**
     * @return whether the local SGEs are written (READ and atomic results), so they need
     *     {@link AccessFlags#LOCAL_WRITE}
     */
    public boolean writesLocalMemory() {
        return this == RDMA_READ || isAtomic();
    }

    /**
     * @return whether the operation consumes a receive at the peer
     */
    public boolean consumesRemoteReceive() {
        return this == SEND || this == SEND_WITH_IMM || this == RDMA_WRITE_WITH_IMM;
    }
}
