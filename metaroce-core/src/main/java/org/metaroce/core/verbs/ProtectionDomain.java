// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.verbs;

import java.nio.ByteBuffer;

import org.agrona.BufferUtil;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * Groups memory regions and queue pairs that may be used together, as ibv_pd: a key is honoured
 * only on queue pairs of the domain that registered it, so one tenant's rkey is useless on
 * another tenant's connection even if guessed.
 *
 * <p>Only off-heap memory can be registered. Heap arrays move during garbage collection, and a
 * peer's RDMA WRITE must land at a fixed native address announced on the wire.
 *
 * <p>Setup-time API (may throw, may allocate) except the lookups. Not thread-safe: owned by
 * the engine thread, like its {@link MemoryKeySpace}.
 */
public final class ProtectionDomain implements AutoCloseable {
    private final int handle;
    private final MemoryKeySpace keySpace;
    private int regionCount;
    /** Live queue pairs created in this domain: it cannot close while one exists [MEM-002]. */
    private int queuePairCount;
    private boolean closed;

    /**
     * @param pdHandle the domain's number, for logs and diagnostics
     * @param keySpace the device-wide key space this domain allocates keys from
     */
    private final OwningThread owningThread;

    public ProtectionDomain(final int pdHandle, final MemoryKeySpace keySpace) {
        this(pdHandle, keySpace, new OwningThread());
    }

    /**
     * @param pdHandle the handle
     * @param keySpace where keys come from
     * @param owningThread the endpoint's owning thread, checked on registration and deregistration
     */
    public ProtectionDomain(final int pdHandle, final MemoryKeySpace keySpace, final OwningThread owningThread) {
        if (keySpace == null) {
            throw new NullPointerException("keySpace");
        }
        this.handle = pdHandle;
        this.keySpace = keySpace;
        this.owningThread = owningThread;
    }

    /**
     * @return the domain's number
     */
    public int handle() {
        return handle;
    }

    /**
     * @return the key space the domain's keys come from
     */
    public MemoryKeySpace keySpace() {
        return keySpace;
    }

    /**
     * @return number of regions registered and not yet deregistered
     */
    public int regionCount() {
        return regionCount;
    }

    /** @return live queue pairs of this domain */
    public int queuePairCount() {
        return queuePairCount;
    }

    /**
     * Counts a queue pair created in this domain (called by the endpoint that creates it).
     *
     * @throws IllegalStateException if the domain is closed
     */
    public void attachQueuePair() {
        if (closed) {
            throw new IllegalStateException("protection domain " + handle + " is closed");
        }
        queuePairCount++;
    }

    /** Forgets a destroyed queue pair of this domain (called by the endpoint that destroys it). */
    public void detachQueuePair() {
        if (queuePairCount == 0) {
            throw new IllegalStateException("protection domain " + handle + " has no queue pair to detach");
        }
        queuePairCount--;
    }

    /**
     * @return whether {@link #close()} succeeded
     */
    public boolean isClosed() {
        return closed;
    }

    /**
     * Registers the bytes between the buffer's position and limit (its remaining bytes); the
     * position and limit are not changed. The region keeps the buffer reachable until it is
     * deregistered, so the memory cannot be freed while a peer may still write it.
     *
     * @param directBuffer a direct buffer
     * @param access {@link AccessFlags}, checked with {@link AccessFlags#validate(int)}
     * @return the new region
     * @throws IllegalArgumentException if the buffer is on-heap, empty, or read-only while write
     *     access is requested, or the access flags are invalid
     * @throws IllegalStateException if the domain is closed
     */
    public MemoryRegion registerMemory(final ByteBuffer directBuffer, final int access) {
        owningThread.check("registerMemory");
        checkOpen();
        if (directBuffer == null) {
            throw new NullPointerException("directBuffer");
        }
        if (!directBuffer.isDirect()) {
            throw new IllegalArgumentException(
                "registered memory must be off-heap: pass a direct ByteBuffer, not a heap buffer");
        }
        AccessFlags.validate(access);
        if (directBuffer.isReadOnly() && (access & AccessFlags.LOCAL_WRITE) != 0) {
            throw new IllegalArgumentException("a read-only buffer cannot be registered with "
                + AccessFlags.toString(access) + "; drop the write flags or pass a writable buffer");
        }
        final long address = BufferUtil.address(directBuffer) + directBuffer.position();
        return register(address, directBuffer.remaining(), access, directBuffer);
    }

    /**
     * Registers the whole capacity of an off-heap buffer (one wrapping a direct ByteBuffer or a
     * native address). The region gets its own {@link UnsafeBuffer}, so rewrapping
     * {@code buffer} later does not move the region; it does keep {@code buffer} reachable.
     * Memory wrapped by raw address must stay allocated until the region is deregistered.
     *
     * @param buffer an off-heap buffer: {@code byteArray() == null}
     * @param access {@link AccessFlags}, checked with {@link AccessFlags#validate(int)}
     * @return the new region
     * @throws IllegalArgumentException if the buffer is on-heap or empty, or the access flags
     *     are invalid
     * @throws IllegalStateException if the domain is closed
     */
    public MemoryRegion registerMemory(final UnsafeBuffer buffer, final int access) {
        owningThread.check("registerMemory");
        checkOpen();
        if (buffer == null) {
            throw new NullPointerException("buffer");
        }
        if (buffer.byteArray() != null) {
            throw new IllegalArgumentException(
                "registered memory must be off-heap: this UnsafeBuffer wraps a heap byte[]");
        }
        if (buffer.addressOffset() == 0) {
            throw new IllegalArgumentException(
                "registered memory must be off-heap: this UnsafeBuffer wraps no memory (address 0)");
        }
        AccessFlags.validate(access);
        final ByteBuffer byteBuffer = buffer.byteBuffer();
        final Object keepAlive = byteBuffer != null ? byteBuffer : buffer;
        return register(buffer.addressOffset(), buffer.capacity(), access, keepAlive);
    }

    /**
     * Releases a region's keys (they go into quarantine) and makes every later check on it fail
     * with {@link MemoryAccessResult#INVALID_KEY}.
     *
     * @param region a region registered through this domain and not yet deregistered
     * @throws IllegalArgumentException if the region belongs to another domain
     * @throws IllegalStateException if it was already deregistered
     */
    public void deregister(final MemoryRegion region) {
        owningThread.check("deregister");
        if (region == null) {
            throw new NullPointerException("region");
        }
        if (region.pd() != this) {
            throw new IllegalArgumentException("memory region belongs to protection domain "
                + region.pd().handle() + ", not " + handle + ": " + region);
        }
        if (!region.isValid()) {
            throw new IllegalStateException("memory region already deregistered: " + region);
        }
        keySpace.deregister(region);
        regionCount--;
    }

    /**
     * Finds a live region of this domain by rkey: what a responder must use, because an rkey
     * of another domain must be treated as invalid. Hot path: no allocation.
     *
     * @param rkey key from a peer's packet
     * @return the region, or null if the key is not live or belongs to another domain
     */
    public MemoryRegion lookupRkey(final int rkey) {
        final MemoryRegion region = keySpace.lookupRkey(rkey);
        return region != null && region.pd() == this ? region : null;
    }

    /**
     * Finds a live region of this domain by lkey. Hot path: no allocation.
     *
     * @param lkey key from a local scatter/gather entry
     * @return the region, or null if the key is not live or belongs to another domain
     */
    public MemoryRegion lookupLkey(final int lkey) {
        final MemoryRegion region = keySpace.lookupLkey(lkey);
        return region != null && region.pd() == this ? region : null;
    }

    /**
     * Closes the domain. Like ibv_dealloc_pd returning EBUSY, this refuses while regions are
     * registered: silently invalidating them would turn a lifecycle bug into remote-access
     * errors far away. Closing twice is allowed.
     *
     * @throws IllegalStateException if regions are still registered
     */
    @Override
    public void close() {
        if (regionCount > 0) {
            throw new IllegalStateException("protection domain " + handle + " still has "
                + regionCount + " registered memory region(s); deregister them before closing");
        }
        if (queuePairCount > 0) {
            throw new IllegalStateException("protection domain " + handle + " still has "
                + queuePairCount + " queue pair(s); destroy them before closing");
        }
        closed = true;
    }

    private MemoryRegion register(final long address, final int length, final int access, final Object keepAlive) {
        if (length <= 0) {
            throw new IllegalArgumentException("registered memory must be at least 1 byte, was " + length);
        }
        final MemoryRegion region = keySpace.register(this, address, length, access, keepAlive);
        regionCount++;
        return region;
    }

    private void checkOpen() {
        if (closed) {
            throw new IllegalStateException("protection domain " + handle + " is closed");
        }
    }

    @Override
    public String toString() {
        return "ProtectionDomain{handle=" + handle + ", regions=" + regionCount + ", queuePairs=" + queuePairCount
            + ", closed=" + closed + "}";
    }
}
