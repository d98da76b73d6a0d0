// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.verbs;

/**
 * Completion status of a work request, with the libibverbs {@code IBV_WC_*} names and meanings
 * so that existing RDMA error handling maps one to one.
 */
public enum WcStatus {
    /** The operation completed and, for RC, was acknowledged by the peer. */
    SUCCESS,
    /** Local length error: a received message was longer than the posted receive buffers. */
    LOC_LEN_ERR,
    /** Local QP operation error: an internal inconsistency in the work request or the QP. */
    LOC_QP_OP_ERR,
    /** Local protection error: a scatter/gather entry names memory the lkey does not grant. */
    LOC_PROT_ERR,
    /** Flushed: the QP entered ERR before this request could be processed; nothing was done. */
    WR_FLUSH_ERR,
    /** Remote invalid request: the responder rejected the operation (e.g. opcode not allowed, message too long). */
    REM_INV_REQ_ERR,
    /** Remote access error: bad rkey, out-of-bounds range or missing permission at the responder. */
    REM_ACCESS_ERR,
    /** Remote operation error: the responder could not complete the operation. */
    REM_OP_ERR,
    /** Transport retry counter exceeded: no acknowledgement after retryCount retransmissions. */
    RETRY_EXC_ERR,
    /** RNR retry counter exceeded: the responder kept having no receive posted. */
    RNR_RETRY_EXC_ERR,
    /** Fatal error, e.g. the completion queue overflowed; the QP has been moved to ERR. */
    FATAL_ERR,
    /**
     * Bad response: the responder's acknowledgements contradict each other (it lacks a packet it
     * had reported received [REL-068]), so delivery of this or an earlier completed request can
     * no longer be vouched for; the QP has been moved to ERR.
     */
    BAD_RESP_ERR;

    private static final WcStatus[] VALUES = values();

    /**
     * @param ordinal an ordinal of this enum
     * @return the constant, without allocating (unlike {@code values()[i]})
     */
    public static WcStatus fromOrdinal(final int ordinal) {
        return VALUES[ordinal];
    }

    /**
     * @return whether this status reports a failure
     */
    public boolean isError() {
        return this != SUCCESS;
    }
}
