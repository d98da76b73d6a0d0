// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.sim.net;

import java.util.ArrayDeque;

/** Recycles packets so the steady state of a run allocates nothing. */
public final class PacketPool {
    private final ArrayDeque<Packet> free = new ArrayDeque<>();
    private long created;
    private long live;

    /** @return a packet with cleared metadata */
    public Packet acquire() {
        Packet p = free.pollFirst();
        if (p == null) {
            p = new Packet();
            created++;
        }
        live++;
        p.length = 0;
        p.ingress = null;
        p.chargedBytes = 0;
        return p;
    }

    /** @param p a packet no longer referenced by the fabric */
    public void release(final Packet p) {
        live--;
        free.addFirst(p);
    }

    /** @return packets ever created (the pool's high-water mark) */
    public long created() {
        return created;
    }

    /** @return packets currently out of the pool */
    public long live() {
        return live;
    }
}
