// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.verbs;

import java.nio.ByteBuffer;

import org.agrona.BufferUtil;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * Registered off-heap memory: the unit of local and remote access control, as ibv_mr.
 *
 * <p>{@link #address()} is the native address of the first byte, and it is what travels on the
 * wire as the remote virtual address, exactly as with real RDMA: a peer names memory by
 * {@code (rkey, address)} and the responder turns it into an offset with {@link #offsetOf(long)}.
 *
 * <p>The check methods run on every packet, so they return {@link MemoryAccessResult} codes
 * instead of throwing and never allocate. All range arithmetic is overflow-safe: a hostile
 * {@code (va, len)} pair can never pass a check by wrapping around.
 *
 * <p>Created by {@link ProtectionDomain#registerMemory}; not thread-safe (owned by the engine
 * thread together with its key space).
 */
public final class MemoryRegion {
    private final ProtectionDomain pd;
    private final int lkey;
    private final int rkey;
    private final int access;
    private final long address;
    private final int length;
    private final UnsafeBuffer buffer;
    /** The caller's buffer, held so the GC cannot free memory while peers may still access it. */
    private final Object keepAlive;
    private boolean valid = true;

    MemoryRegion(
        final ProtectionDomain pd,
        final int lkey,
        final int rkey,
        final int access,
        final long address,
        final int length,
        final Object keepAlive) {
        this.pd = pd;
        this.lkey = lkey;
        this.rkey = rkey;
        this.access = access;
        this.address = address;
        this.length = length;
        this.keepAlive = keepAlive;
        this.buffer = view(keepAlive, address, length);
    }

    /**
     * A buffer over exactly the region. Over a direct ByteBuffer's memory it is a slice of that
     * buffer (its own object: the caller's position and limit are never touched), so that the
     * engine can compute a packet's CRC-32C straight over the region with the JDK's intrinsic,
     * which takes only arrays and ByteBuffers, and a driver can send a payload from here without
     * copying it first; over other memory it wraps the raw address.
     */
    private static UnsafeBuffer view(final Object keepAlive, final long address, final int length) {
        if (keepAlive instanceof ByteBuffer bb && bb.isDirect()) {
            final long start = address - BufferUtil.address(bb);
            if (start >= 0 && start + length <= bb.capacity()) {
                final ByteBuffer slice = bb.duplicate().clear().position((int) start)
                    .limit((int) (start + length)).slice();
                return new UnsafeBuffer(slice);
            }
        }
        return new UnsafeBuffer(address, length);
    }

    /**
     * @return the protection domain; a key is only usable on queue pairs of the same domain
     */
    public ProtectionDomain pd() {
        return pd;
    }

    /**
     * @return the key local work requests use to name this memory in scatter/gather entries
     */
    public int lkey() {
        return lkey;
    }

    /**
     * @return the key peers use to name this memory in RDMA and atomic operations
     */
    public int rkey() {
        return rkey;
    }

    /**
     * @return the {@link AccessFlags} granted at registration
     */
    public int access() {
        return access;
    }

    /**
     * @return native address of the first byte, the remote virtual address of this region
     */
    public long address() {
        return address;
    }

    /**
     * @return length of the region in bytes
     */
    public int length() {
        return length;
    }

    /**
     * @return a buffer over exactly this region, owned by the region (rewrapping the caller's
     *     original buffer does not move it)
     */
    public UnsafeBuffer buffer() {
        return buffer;
    }

    /**
     * @return false once deregistered; every check then returns {@link MemoryAccessResult#INVALID_KEY}
     */
    public boolean isValid() {
        return valid;
    }

    void invalidate() {
        valid = false;
    }

    /**
     * @param va an address inside the region
     * @return the byte offset of {@code va} within {@link #buffer()}
     */
    public long offsetOf(final long va) {
        return va - address;
    }

    /**
     * Checks a local scatter/gather entry. Reading local memory needs only a valid key; writing
     * it (receive targets, READ and atomic results) needs {@link AccessFlags#LOCAL_WRITE}.
     *
     * @param addr first byte
     * @param len byte count
     * @param needWrite whether the operation writes the memory
     * @return a {@link MemoryAccessResult} code; checked in the order key, permission, bounds
     */
    public int checkLocal(final long addr, final int len, final boolean needWrite) {
        if (!valid) {
            return MemoryAccessResult.INVALID_KEY;
        }
        if (needWrite && (access & AccessFlags.LOCAL_WRITE) == 0) {
            return MemoryAccessResult.NO_PERMISSION;
        }
        return inBounds(addr, len) ? MemoryAccessResult.OK : MemoryAccessResult.OUT_OF_BOUNDS;
    }

    /**
     * Checks a peer's access to {@code [va, va + len)}.
     *
     * @param va remote virtual address from the wire (treated as unsigned 64-bit)
     * @param len byte count (negative is out of bounds)
     * @param requiredAccessFlag the {@link AccessFlags} bit(s) the operation needs
     * @return a {@link MemoryAccessResult} code; checked in the order key, permission, bounds
     */
    public int checkRemote(final long va, final long len, final int requiredAccessFlag) {
        if (!valid) {
            return MemoryAccessResult.INVALID_KEY;
        }
        if ((access & requiredAccessFlag) != requiredAccessFlag) {
            return MemoryAccessResult.NO_PERMISSION;
        }
        return inBounds(va, len) ? MemoryAccessResult.OK : MemoryAccessResult.OUT_OF_BOUNDS;
    }

    /**
     * Checks a peer's atomic on the 8 bytes at {@code va}.
     *
     * @param va remote virtual address of the target
     * @return a {@link MemoryAccessResult} code; checked in the order key, permission, bounds,
     *     alignment
     */
    public int checkAtomic(final long va) {
        final int result = checkRemote(va, 8, AccessFlags.REMOTE_ATOMIC);
        if (result != MemoryAccessResult.OK) {
            return result;
        }
        return (va & 7) == 0 ? MemoryAccessResult.OK : MemoryAccessResult.MISALIGNED;
    }

    private boolean inBounds(final long va, final long len) {
        if (len < 0 || Long.compareUnsigned(va, address) < 0) {
            return false;
        }
        final long offset = va - address; // unsigned, may exceed Long.MAX_VALUE
        return Long.compareUnsigned(offset, length) <= 0 && len <= length - offset;
    }

    @Override
    public String toString() {
        return "MemoryRegion{pd=" + pd.handle()
            + ", lkey=0x" + Integer.toHexString(lkey)
            + ", rkey=0x" + Integer.toHexString(rkey)
            + ", access=" + AccessFlags.toString(access)
            + ", address=0x" + Long.toHexString(address)
            + ", length=" + length
            + ", valid=" + valid + "}";
    }
}
