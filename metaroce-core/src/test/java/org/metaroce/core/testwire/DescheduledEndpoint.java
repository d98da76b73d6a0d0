// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.testwire;

import java.util.ArrayDeque;
import java.util.Random;

import org.agrona.DirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;
import org.metaroce.core.engine.DatagramEndpoint;
import org.metaroce.core.engine.TransmitSink;

/**
 * An endpoint whose thread waits for a core: every time it goes to sleep, its next wake-up — a
 * timer it asked for, or a datagram arriving — comes late by a random time of up to {@code
 * maxLateNs}, and datagrams wait in the socket until then. While it runs and has work due, it keeps
 * running. This is the host of the real-socket incast rig, where 16 JVMs share two cores and a
 * sleeping sender's timed wake-ups were measured 15-30 ms late (docs/congestion-control.md); a
 * link delay is no model of it, because a descheduled sender sends nothing at all, not everything
 * later.
 *
 * <p>Datagrams are handed over with their arrival times, as a transport with kernel receive
 * timestamps does [REL-066]. Seeded: the lateness of each wake-up is drawn from {@code random}.
 */
public final class DescheduledEndpoint implements DatagramEndpoint {
    private final DatagramEndpoint inner;
    private final long maxLateNs;
    private final Random random;
    private final ArrayDeque<Held> socket = new ArrayDeque<>();
    /** When the thread runs next, MAX_VALUE while nothing woke it. */
    private long wakeNs = Long.MAX_VALUE;
    /** The inner deadline the current {@link #lateDeadlineNs} was drawn for. */
    private long drawnForNs = Long.MIN_VALUE;
    private long lateDeadlineNs = Long.MAX_VALUE;
    private long lastRunNs = Long.MIN_VALUE;
    private long wakeUps;
    private long lateSumNs;

    private record Held(long arrivalNs, byte[] bytes, int peerId, int ecn) {
    }

    /**
     * @param inner the endpoint the thread drives
     * @param maxLateNs the largest lateness of a wake-up
     * @param random draws each wake-up's lateness, uniform in [0, maxLateNs]
     */
    public DescheduledEndpoint(final DatagramEndpoint inner, final long maxLateNs, final Random random) {
        this.inner = inner;
        this.maxLateNs = maxLateNs;
        this.random = random;
    }

    @Override
    public void onDatagram(final long nowNs, final DirectBuffer buffer, final int offset, final int length,
                           final int peerId, final int ecn) {
        final byte[] copy = new byte[length];
        buffer.getBytes(offset, copy);
        socket.add(new Held(nowNs, copy, peerId, ecn));
        if (wakeNs == Long.MAX_VALUE) {
            wakeNs = nowNs + late();
        }
    }

    @Override
    public int poll(final long nowNs, final TransmitSink sink) {
        if (nowNs < nextDeadlineNs()) {
            return 0;
        }
        lastRunNs = nowNs;
        wakeNs = Long.MAX_VALUE;
        Held h;
        while ((h = socket.poll()) != null) {
            inner.onDatagram(nowNs, h.arrivalNs(), new UnsafeBuffer(h.bytes()), 0, h.bytes().length, h.peerId(),
                h.ecn());
        }
        return inner.poll(nowNs, sink);
    }

    @Override
    public long nextDeadlineNs() {
        final long d = inner.nextDeadlineNs();
        long due;
        if (d <= lastRunNs) {
            due = d; // work left when it last ran: a running thread goes on with it
        } else if (d == Long.MAX_VALUE) {
            due = Long.MAX_VALUE;
        } else {
            if (d != drawnForNs) {
                drawnForNs = d;
                lateDeadlineNs = d + late();
            }
            due = lateDeadlineNs;
        }
        return Math.min(due, wakeNs);
    }

    private long late() {
        final long l = maxLateNs <= 0 ? 0 : (long) (random.nextDouble() * maxLateNs);
        wakeUps++;
        lateSumNs += l;
        return l;
    }

    @Override
    public String toString() {
        return "Descheduled{wake-ups=" + wakeUps + ", mean late=" + (wakeUps == 0 ? 0 : lateSumNs / wakeUps / 1000)
            + " us}";
    }
}
