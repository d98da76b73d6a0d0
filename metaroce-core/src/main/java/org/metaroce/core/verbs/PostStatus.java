// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.verbs;

/**
 * Results of posting a work request. Posting is the application's hot path, so failures are
 * int codes (0 = OK) as with ibv_post_send's errno, never exceptions; {@link #describe(int)}
 * turns one into text for logs.
 *
 * <p>{@link WorkRequestValidator} produces the request-shape codes; QUEUE_FULL,
 * INVALID_QP_STATE and INVALID_OPCODE_FOR_QP depend on the queue pair and come from the engine.
 */
public final class PostStatus {
    /** Accepted. */
    public static final int OK = 0;
    /** The send or receive queue holds its maximum number of outstanding requests. */
    public static final int QUEUE_FULL = 1;
    /** The QP's state does not accept this kind of request (e.g. a send before RTS). */
    public static final int INVALID_QP_STATE = 2;
    /** An SGE's lkey names no live region of the QP's protection domain. */
    public static final int INVALID_LKEY = 3;
    /** An SGE length is negative, or the SGEs add up to more than 2^31 bytes. */
    public static final int LOCAL_LENGTH_ERROR = 4;
    /** More SGEs than the QP allows. */
    public static final int TOO_MANY_SGE = 5;
    /** The QP does not support this operation (e.g. READ/atomic with no outstanding budget). */
    public static final int INVALID_OPCODE_FOR_QP = 6;
    /**
     * A malformed request: no opcode, unknown flag bits, an atomic without exactly one 8-byte
     * SGE or with a misaligned remote address, INLINE on a READ or atomic.
     */
    public static final int INVALID_ARGUMENT = 7;
    /**
     * An SGE lies outside its region, or the region lacks LOCAL_WRITE where the request writes
     * local memory (READ and atomic results, receive buffers).
     */
    public static final int LOCAL_PROTECTION = 8;
    /** An INLINE request carries more bytes than the QP's inline limit. */
    public static final int INLINE_TOO_LARGE = 9;

    private PostStatus() {
    }

    /**
     * @param status a code from this class
     * @return its name, or "UNKNOWN(n)"
     */
    public static String describe(final int status) {
        switch (status) {
            case OK:
                return "OK";
            case QUEUE_FULL:
                return "QUEUE_FULL";
            case INVALID_QP_STATE:
                return "INVALID_QP_STATE";
            case INVALID_LKEY:
                return "INVALID_LKEY";
            case LOCAL_LENGTH_ERROR:
                return "LOCAL_LENGTH_ERROR";
            case TOO_MANY_SGE:
                return "TOO_MANY_SGE";
            case INVALID_OPCODE_FOR_QP:
                return "INVALID_OPCODE_FOR_QP";
            case INVALID_ARGUMENT:
                return "INVALID_ARGUMENT";
            case LOCAL_PROTECTION:
                return "LOCAL_PROTECTION";
            case INLINE_TOO_LARGE:
                return "INLINE_TOO_LARGE";
            default:
                return "UNKNOWN(" + status + ")";
        }
    }
}
