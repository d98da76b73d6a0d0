// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.verbs;

/**
 * A receive-queue work request, as ibv_recv_wr: where an incoming SEND may be placed.
 * Reusable; the scatter/gather entries are preallocated. Every entry's region needs
 * {@link AccessFlags#LOCAL_WRITE}, because the transport writes into it.
 */
public final class RecvRequest {
    private final ScatterGatherEntry[] sgList;
    private int numSge;
    private long wrId;

    /**
     * @param maxSge number of preallocated scatter/gather entries, 0..{@link QpAttributes#MAX_SGE}
     */
    public RecvRequest(final int maxSge) {
        sgList = WorkRequests.newSgList(maxSge);
    }

    /**
     * @return this, with no entries and wrId 0
     */
    public RecvRequest clear() {
        WorkRequests.clear(sgList, numSge);
        numSge = 0;
        wrId = 0;
        return this;
    }

    /**
     * @param other request to copy
     * @return this
     * @throws IllegalArgumentException if {@code other} has more SGEs than this request can hold
     */
    public RecvRequest copyFrom(final RecvRequest other) {
        numSge = WorkRequests.copy(other.sgList, other.numSge, sgList, numSge);
        wrId = other.wrId;
        return this;
    }

    /**
     * @param addr native address of the first byte
     * @param length byte count
     * @param lkey key of the region
     * @return this
     * @throws IllegalStateException if all preallocated entries are in use
     */
    public RecvRequest addSge(final long addr, final int length, final int lkey) {
        numSge = WorkRequests.add(sgList, numSge, addr, length, lkey);
        return this;
    }

    /**
     * @param index 0..{@link #maxSge()}-1
     * @return the entry, to read or to fill in place
     */
    public ScatterGatherEntry sge(final int index) {
        return sgList[index];
    }

    /**
     * @param numSge number of entries in use, 0..{@link #maxSge()}
     * @return this
     */
    public RecvRequest numSge(final int numSge) {
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
     * @return total bytes the entries in use can receive
     */
    public long totalLength() {
        return WorkRequests.totalLength(sgList, numSge);
    }

    /**
     * @param wrId the application's id, returned in the completion
     * @return this
     */
    public RecvRequest wrId(final long wrId) {
        this.wrId = wrId;
        return this;
    }

    /**
     * @return the application's id
     */
    public long wrId() {
        return wrId;
    }

    @Override
    public String toString() {
        return WorkRequests.appendSgList(new StringBuilder(96).append("RecvRequest{wrId=").append(wrId)
            .append(", sg="), sgList, numSge).append('}').toString();
    }
}
