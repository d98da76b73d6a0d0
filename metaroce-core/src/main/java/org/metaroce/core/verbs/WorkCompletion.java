// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.verbs;

/**
 * One completion, as ibv_wc. Mutable and reusable: applications preallocate an array of these
 * and hand it to {@link CompletionQueue#poll(WorkCompletion[], int)} again and again, so
 * polling never allocates.
 */
public final class WorkCompletion {
    /** {@link #wcFlags()} bit: {@link #immData()} is valid (as IBV_WC_WITH_IMM). */
    public static final int WC_WITH_IMM = 1;
    /**
     * {@link #wcFlags()} bit of a receive completion: the message was sent with SOLICITED, so it
     * wakes a completion channel armed for solicited completions only [OPS-035, OPS-040].
     */
    public static final int WC_SOLICITED = 2;

    private long wrId;
    private WcStatus status;
    private WcOpcode opcode;
    private int byteLen;
    private int immData;
    private int wcFlags;
    private int qpNum;
    private int srcQp;

    /**
     * Overwrites every field.
     *
     * @param wrId the work request id the application chose at post time
     * @param status outcome
     * @param opcode what completed
     * @param byteLen bytes transferred (receives: bytes received)
     * @param immData immediate data, meaningful when {@code wcFlags} has {@link #WC_WITH_IMM}
     * @param wcFlags {@link #WC_WITH_IMM} and {@link #WC_SOLICITED} bits
     * @param qpNum local QP number the work request belonged to
     * @param srcQp remote QP number (receives)
     * @return this
     */
    public WorkCompletion set(
        final long wrId,
        final WcStatus status,
        final WcOpcode opcode,
        final int byteLen,
        final int immData,
        final int wcFlags,
        final int qpNum,
        final int srcQp) {
        this.wrId = wrId;
        this.status = status;
        this.opcode = opcode;
        this.byteLen = byteLen;
        this.immData = immData;
        this.wcFlags = wcFlags;
        this.qpNum = qpNum;
        this.srcQp = srcQp;
        return this;
    }

    /**
     * @param other completion to copy
     * @return this
     */
    public WorkCompletion copyFrom(final WorkCompletion other) {
        return set(other.wrId, other.status, other.opcode, other.byteLen, other.immData,
            other.wcFlags, other.qpNum, other.srcQp);
    }

    /**
     * Clears every field; status and opcode become null so that reading an unfilled
     * completion fails loudly.
     *
     * @return this
     */
    public WorkCompletion reset() {
        return set(0, null, null, 0, 0, 0, 0, 0);
    }

    /**
     * @return the application's work request id
     */
    public long wrId() {
        return wrId;
    }

    /**
     * @return the outcome
     */
    public WcStatus status() {
        return status;
    }

    /**
     * @return what completed
     */
    public WcOpcode opcode() {
        return opcode;
    }

    /**
     * @return bytes transferred, an unsigned 32-bit value (a 2^31-byte message reads as
     *     negative; use {@link Integer#toUnsignedLong(int)})
     */
    public int byteLen() {
        return byteLen;
    }

    /**
     * @return immediate data, valid when {@link #hasImm()}
     */
    public int immData() {
        return immData;
    }

    /**
     * @return completion flags ({@link #WC_WITH_IMM})
     */
    public int wcFlags() {
        return wcFlags;
    }

    /**
     * @return whether immediate data arrived
     */
    public boolean hasImm() {
        return (wcFlags & WC_WITH_IMM) != 0;
    }

    /**
     * @return local QP number
     */
    public int qpNum() {
        return qpNum;
    }

    /**
     * @return remote QP number
     */
    public int srcQp() {
        return srcQp;
    }

    @Override
    public String toString() {
        return "WorkCompletion{wrId=" + wrId
            + ", status=" + status
            + ", opcode=" + opcode
            + ", byteLen=" + Integer.toUnsignedString(byteLen)
            + (hasImm() ? ", immData=0x" + Integer.toHexString(immData) : "")
            + ", wcFlags=" + wcFlags
            + ", qpNum=" + qpNum
            + ", srcQp=" + srcQp + "}";
    }
}
