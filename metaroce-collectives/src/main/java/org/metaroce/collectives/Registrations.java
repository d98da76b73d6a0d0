// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.collectives;

import java.nio.ByteBuffer;

import org.agrona.BufferUtil;
import org.agrona.concurrent.UnsafeBuffer;
import org.metaroce.core.verbs.AccessFlags;
import org.metaroce.core.verbs.MemoryRegion;
import org.metaroce.core.verbs.ProtectionDomain;
import org.metaroce.netty.MetaRoceDevice;

/**
 * Memory regions for application buffers that are the source of WRITEs or the destination of
 * placed chunks (COLL-033), registered on first use (a whole buffer's capacity) and kept in a small
 * most-recently-used cache; the least recently used region is deregistered when the cache is full.
 * Used between operations only, so no WRITE from or into a region is outstanding when it is
 * dropped (a peer writes a region only after this rank granted it in the running operation).
 * The cache is an array in most-recently-used order, searched and reordered in place: a hit, which
 * every operation on buffers used before makes, allocates nothing.
 */
final class Registrations {
    private final MetaRoceDevice device;
    private final ProtectionDomain pd;
    private final int capacity;
    /** {@code regions[0..count)}, most recently used first. */
    private final MemoryRegion[] regions;
    private int count;
    private long registered;

    Registrations(final MetaRoceDevice device, final ProtectionDomain pd, final int capacity) {
        this.device = device;
        this.pd = pd;
        this.capacity = capacity;
        this.regions = new MemoryRegion[capacity];
    }

    /** @return a local key covering {@code bytes} bytes at the buffer's position */
    int lkey(final ByteBuffer buffer, final long bytes) {
        return region(buffer, bytes, false).lkey();
    }

    /**
     * @param buffer an application buffer
     * @param bytes bytes used from its position
     * @param remoteWrite whether peers write into it (a receive's destination granted as a region,
     *     COLL-033): such a region is registered with REMOTE_WRITE; a cached region without it is
     *     registered again with it
     * @return a cached region covering {@code bytes} bytes at the buffer's position
     */
    MemoryRegion region(final ByteBuffer buffer, final long bytes, final boolean remoteWrite) {
        final long base = BufferUtil.address(buffer);
        final long address = base + buffer.position();
        for (int i = 0; i < count; i++) {
            final MemoryRegion mr = regions[i];
            if (mr.address() <= address && address + bytes <= mr.address() + mr.length()) {
                if (remoteWrite && (mr.access() & AccessFlags.REMOTE_WRITE) == 0) {
                    remove(i); // registered as a source only: register again below, writable by peers
                    deregister(mr);
                    break;
                }
                moveToFront(i, mr);
                return mr;
            }
        }
        final UnsafeBuffer whole = new UnsafeBuffer(buffer); // the whole capacity; keeps the buffer reachable
        final int access = remoteWrite ? AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE : AccessFlags.LOCAL_WRITE;
        final MemoryRegion mr = device.call(ep -> pd.registerMemory(whole, access));
        registered++;
        if (count == capacity) {
            final MemoryRegion last = regions[count - 1];
            remove(count - 1);
            deregister(last);
        }
        count++;
        moveToFront(count - 1, mr);
        return mr;
    }

    /** Puts {@code mr} first, shifting {@code regions[0..i)} one place back over entry {@code i}. */
    private void moveToFront(final int i, final MemoryRegion mr) {
        System.arraycopy(regions, 0, regions, 1, i);
        regions[0] = mr;
    }

    /** Removes entry {@code i}, closing the gap. */
    private void remove(final int i) {
        System.arraycopy(regions, i + 1, regions, i, count - i - 1);
        regions[--count] = null;
    }

    /** @return regions registered since creation (a buffer reused across calls is registered once) */
    long registered() {
        return registered;
    }

    private void deregister(final MemoryRegion old) {
        device.call(ep -> {
            pd.deregister(old);
            return null;
        });
    }

    /** Deregisters every cached region. */
    void clear() {
        while (count > 0) {
            final MemoryRegion old = regions[count - 1];
            remove(count - 1);
            if (!device.isClosed()) {
                device.call(ep -> {
                    pd.deregister(old);
                    return null;
                });
            }
        }
    }
}
