// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.collectives;

import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.Iterator;

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
 */
final class Registrations {
    private final MetaRoceDevice device;
    private final ProtectionDomain pd;
    private final int capacity;
    private final ArrayDeque<MemoryRegion> regions = new ArrayDeque<>();
    private long registered;

    Registrations(final MetaRoceDevice device, final ProtectionDomain pd, final int capacity) {
        this.device = device;
        this.pd = pd;
        this.capacity = capacity;
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
        for (final Iterator<MemoryRegion> it = regions.iterator(); it.hasNext();) {
            final MemoryRegion mr = it.next();
            if (mr.address() <= address && address + bytes <= mr.address() + mr.length()) {
                if (remoteWrite && (mr.access() & AccessFlags.REMOTE_WRITE) == 0) {
                    it.remove(); // registered as a source only: register again below, writable by peers
                    deregister(mr);
                    break;
                }
                if (regions.peekFirst() != mr) {
                    it.remove();
                    regions.addFirst(mr);
                }
                return mr;
            }
        }
        final UnsafeBuffer whole = new UnsafeBuffer(buffer); // the whole capacity; keeps the buffer reachable
        final int access = remoteWrite ? AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE : AccessFlags.LOCAL_WRITE;
        final MemoryRegion mr = device.call(ep -> pd.registerMemory(whole, access));
        registered++;
        regions.addFirst(mr);
        if (regions.size() > capacity) {
            deregister(regions.pollLast());
        }
        return mr;
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
        while (!regions.isEmpty()) {
            final MemoryRegion old = regions.pollLast();
            if (!device.isClosed()) {
                device.call(ep -> {
                    pd.deregister(old);
                    return null;
                });
            }
        }
    }
}
