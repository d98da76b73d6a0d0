package org.metaroce.collectives;

/**
 * A byte range of local memory an operation uses: its native address and the local key of a
 * region covering it (0 when it is never the source of a WRITE).
 *
 * @param address native address of the first byte
 * @param lkey local key
 */
record Mem(long address, int lkey) {
    /** @return the memory {@code offset} bytes further, same key */
    Mem plus(final long offset) {
        return new Mem(address + offset, lkey);
    }
}
