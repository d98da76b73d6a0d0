// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.verbs;

/**
 * A send-queue work request, as ibv_send_wr. Reusable and allocation-free to refill: the
 * scatter/gather entries are preallocated up to the capacity given at construction, and every
 * setter returns {@code this} so a request is refilled in one expression. Posting copies what
 * the engine needs, so the application may refill the same object right after posting.
 */
public final class SendRequest {
    private final ScatterGatherEntry[] sgList;
    private int numSge;
    private long wrId;
    private WrOpcode opcode;
    private int sendFlags;
    private int immData;
    private long remoteAddr;
    private int rkey;
    private long compareAdd;
    private long swap;

    /**
     * @param maxSge number of preallocated scatter/gather entries, 0..{@link QpAttributes#MAX_SGE}
     */
    public SendRequest(final int maxSge) {
        sgList = WorkRequests.newSgList(maxSge);
    }

    /**
     * Forgets every field; the opcode becomes null, which validation rejects.
     *
     * @return this
     */
    public SendRequest clear() {
        WorkRequests.clear(sgList, numSge);
        numSge = 0;
        wrId = 0;
        opcode = null;
        sendFlags = 0;
        immData = 0;
        remoteAddr = 0;
        rkey = 0;
        compareAdd = 0;
        swap = 0;
        return this;
    }

    /**
     * Copies another request, e.g. into an engine-owned send-queue slot at post time.
     *
     * @param other request to copy
     * @return this
     * @throws IllegalArgumentException if {@code other} has more SGEs than this request can hold
     */
    public SendRequest copyFrom(final SendRequest other) {
        numSge = WorkRequests.copy(other.sgList, other.numSge, sgList, numSge);
        wrId = other.wrId;
        opcode = other.opcode;
        sendFlags = other.sendFlags;
        immData = other.immData;
        remoteAddr = other.remoteAddr;
        rkey = other.rkey;
        compareAdd = other.compareAdd;
        swap = other.swap;
        return this;
    }

    /**
     * Appends a scatter/gather entry.
     *
     * @param addr native address of the first byte
     * @param length byte count
     * @param lkey key of the region holding the bytes
     * @return this
     * @throws IllegalStateException if all preallocated entries are in use
     */
    public SendRequest addSge(final long addr, final int length, final int lkey) {
        numSge = WorkRequests.add(sgList, numSge, addr, length, lkey);
        return this;
    }

    /**
     * @param index 0..{@link #numSge()}-1, or up to {@link #maxSge()}-1 to fill in place before
     *     calling {@link #numSge(int)}
     * @return the entry, to read or to fill in place
     */
    public ScatterGatherEntry sge(final int index) {
        return sgList[index];
    }

    /**
     * @param numSge number of entries in use, 0..{@link #maxSge()}
     * @return this
     */
    public SendRequest numSge(final int numSge) {
        this.numSge = WorkRequests.checkNumSge(numSge, sgList.length);
        return this;
    }

    /**
     * @return number of entries in use
     */
    public int numSge() {
        return numSge;
    }

    /**
     * @return number of preallocated entries
     */
    public int maxSge() {
        return sgList.length;
    }

    /**
     * @return sum of the entry lengths in use (negative entries included as they are)
     */
    public long totalLength() {
        return WorkRequests.totalLength(sgList, numSge);
    }

    /**
     * @param wrId the application's id, returned in the completion
     * @return this
     */
    public SendRequest wrId(final long wrId) {
        this.wrId = wrId;
        return this;
    }

    /**
     * @return the application's id
     */
    public long wrId() {
        return wrId;
    }

    /**
     * @param opcode the operation
     * @return this
     */
    public SendRequest opcode(final WrOpcode opcode) {
        this.opcode = opcode;
        return this;
    }

    /**
     * @return the operation, or null after {@link #clear()}
     */
    public WrOpcode opcode() {
        return opcode;
    }

    /**
     * @param sendFlags {@link SendFlags} bits
     * @return this
     */
    public SendRequest sendFlags(final int sendFlags) {
        this.sendFlags = sendFlags;
        return this;
    }

    /**
     * @return {@link SendFlags} bits
     */
    public int sendFlags() {
        return sendFlags;
    }

    /**
     * @return whether a successful completion is wanted
     */
    public boolean isSignaled() {
        return (sendFlags & SendFlags.SIGNALED) != 0;
    }

    /**
     * @param immData immediate data for the *_WITH_IMM opcodes
     * @return this
     */
    public SendRequest immData(final int immData) {
        this.immData = immData;
        return this;
    }

    /**
     * @return immediate data
     */
    public int immData() {
        return immData;
    }

    /**
     * @param remoteAddr the peer's virtual address (its region's native address plus offset)
     *     for WRITE, READ and atomics
     * @return this
     */
    public SendRequest remoteAddr(final long remoteAddr) {
        this.remoteAddr = remoteAddr;
        return this;
    }

    /**
     * @return the peer's virtual address
     */
    public long remoteAddr() {
        return remoteAddr;
    }

    /**
     * @param rkey the peer's key for {@link #remoteAddr()}
     * @return this
     */
    public SendRequest rkey(final int rkey) {
        this.rkey = rkey;
        return this;
    }

    /**
     * @return the peer's key
     */
    public int rkey() {
        return rkey;
    }

    /**
     * @param compareAdd CMP_SWAP: value to compare with; FETCH_ADD: addend
     * @return this
     */
    public SendRequest compareAdd(final long compareAdd) {
        this.compareAdd = compareAdd;
        return this;
    }

    /**
     * @return compare value or addend
     */
    public long compareAdd() {
        return compareAdd;
    }

    /**
     * @param swap CMP_SWAP: value stored when the compare matches
     * @return this
     */
    public SendRequest swap(final long swap) {
        this.swap = swap;
        return this;
    }

    /**
     * @return swap value
     */
    public long swap() {
        return swap;
    }

    @Override
    public String toString() {
        final StringBuilder sb = new StringBuilder(160).append("SendRequest{wrId=").append(wrId)
            .append(", opcode=").append(opcode)
            .append(", sendFlags=").append(SendFlags.toString(sendFlags));
        if (opcode != null && opcode.hasImm()) {
            sb.append(", immData=0x").append(Integer.toHexString(immData));
        }
        if (opcode != null && opcode.usesRemoteAddress()) {
            sb.append(", remoteAddr=0x").append(Long.toHexString(remoteAddr))
                .append(", rkey=0x").append(Integer.toHexString(rkey));
        }
        if (opcode != null && opcode.isAtomic()) {
            sb.append(", compareAdd=").append(compareAdd).append(", swap=").append(swap);
        }
        return WorkRequests.appendSgList(sb.append(", sg="), sgList, numSge).append('}').toString();
    }
}
