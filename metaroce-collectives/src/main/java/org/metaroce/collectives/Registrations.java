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
 * Memory regions for application buffers that are the source of WRITEs, registered on first use
 * (a whole buffer's capacity) and kept in a small most-recently-used cache; the least recently
 * used region is deregistered when the cache is full. Used between operations only, so no WRITE
 * from a region is outstanding when it is dropped.
 */
final class Registrations {
    private final MetaRoceDevice device;
    private final ProtectionDomain pd;
    private final int capacity;
    private final ArrayDeque<MemoryRegion> regions = new ArrayDeque<>();

    Registrations(final MetaRoceDevice device, final ProtectionDomain pd, final int capacity) {
        this.device = device;
        this.pd = pd;
        this.capacity = capacity;
    }

    /** @return a local key covering {@code bytes} bytes at the buffer's position */
    int lkey(final ByteBuffer buffer, final long bytes) {
        final long base = BufferUtil.address(buffer);
        final long address = base + buffer.position();
        for (final Iterator<MemoryRegion> it = regions.iterator(); it.hasNext();) {
            final MemoryRegion mr = it.next();
            if (mr.address() <= address && address + bytes <= mr.address() + mr.length()) {
                if (regions.peekFirst() != mr) {
                    it.remove();
                    regions.addFirst(mr);
                }
                return mr.lkey();
            }
        }
        final UnsafeBuffer whole = new UnsafeBuffer(buffer); // the whole capacity; keeps the buffer reachable
        final MemoryRegion mr = device.call(ep -> pd.registerMemory(whole, AccessFlags.LOCAL_WRITE));
        regions.addFirst(mr);
        if (regions.size() > capacity) {
            final MemoryRegion old = regions.pollLast();
            device.call(ep -> {
                pd.deregister(old);
                return null;
            });
        }
        return mr.lkey();
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
