// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.sim.net;

import org.agrona.MutableDirectBuffer;
import org.metaroce.core.engine.DatagramEndpoint;
import org.metaroce.core.engine.Endpoint;
import org.metaroce.core.engine.TransmitSink;
import org.metaroce.core.verbs.CompletionQueue;
import org.metaroce.core.verbs.WorkCompletion;
import org.metaroce.sim.EventHandler;

/**
 * A server with one NIC running a real core {@link Endpoint}. The NIC pulls packets from the
 * engine only while its small transmit queue has room, so the engine's window, pacing and
 * timestamps see the line rate the way they would behind a real NIC; received datagrams go to
 * {@code onDatagram} with their ECN codepoint, and every completion is handed to a listener.
 */
public final class Host extends Node implements TransmitSink, EventHandler {
    /** Completions are drained after every poll, so a CQ holds one poll's worth (up to 128 QPs flushing 64 sends at once); preallocated per host, so not larger. */
    private static final int CQ_CAPACITY = 1 << 13;

    private final Endpoint endpoint;
    private final CompletionQueue sendCq = new CompletionQueue(CQ_CAPACITY);
    private final CompletionQueue recvCq = new CompletionQueue(CQ_CAPACITY);
    private final WorkCompletion[] scratch = new WorkCompletion[64];
    private final int hostIndex;
    private Port nic;
    private Packet claimed;
    private long nowNs;
    private long wakeAtNs = Long.MAX_VALUE;
    private boolean servicing;
    private int ecnCodepoint = DatagramEndpoint.ECN_ECT_0;
    private CompletionListener listener = (now, host, wc, send) -> { };
    private long datagramsIn;
    private long wakeups;

    Host(final Network network, final int id, final int hostIndex, final Endpoint endpoint) {
        super(network, id, "host" + hostIndex);
        this.hostIndex = hostIndex;
        this.endpoint = endpoint;
        for (int i = 0; i < scratch.length; i++) {
            scratch[i] = new WorkCompletion();
        }
    }

    void attachNic(final Port port) {
        this.nic = port;
    }

    /** @return the host's index, which is also its peer id in the endpoints' address space */
    public int hostIndex() {
        return hostIndex;
    }

    /** @return the protocol endpoint this host runs */
    public Endpoint endpoint() {
        return endpoint;
    }

    /** @return the NIC port */
    public Port nic() {
        return nic;
    }

    /** @return the completion queue every send work request of this host completes on */
    public CompletionQueue sendCq() {
        return sendCq;
    }

    /** @return the completion queue every receive work request of this host completes on */
    public CompletionQueue recvCq() {
        return recvCq;
    }

    /** @param listener receives every completion of this host */
    public void completionListener(final CompletionListener listener) {
        this.listener = listener;
    }

    /**
     * @param codepoint ECN codepoint the NIC puts on every packet: ECT(0) by default [ENC-015],
     *     {@link DatagramEndpoint#ECN_NOT_ECT} for a host that does not take part in ECN
     */
    public void ecnCodepoint(final int codepoint) {
        if (codepoint != DatagramEndpoint.ECN_NOT_ECT && codepoint != DatagramEndpoint.ECN_ECT_0) {
            throw new IllegalArgumentException("a sender marks Not-ECT or ECT(0) only [ENC-015], got " + codepoint);
        }
        this.ecnCodepoint = codepoint;
    }

    /** @return datagrams delivered to the endpoint */
    public long datagramsIn() {
        return datagramsIn;
    }

    /** @return timer wake-ups run */
    public long wakeups() {
        return wakeups;
    }

    /**
     * Lets the endpoint send what became ready outside an event of this host (for example work
     * posted by a workload), and re-arms the host's timer.
     *
     * @param now the current virtual time
     */
    public void kick(final long now) {
        service(now);
    }

    @Override
    void receive(final long now, final Packet p, final Port in) {
        datagramsIn++;
        endpoint.onDatagram(now, p.buffer, 0, p.length, p.srcHost, p.ecn);
        network.pool.release(p);
        service(now);
    }

    @Override
    void onDequeued(final long now, final Packet p, final Port out) {
        // The NIC has room again: let the engine fill it.
        service(now);
    }

    @Override
    public void onEvent(final long now, final Object subject, final int arg) {
        if (now != wakeAtNs) {
            return; // superseded by an earlier wake-up
        }
        wakeAtNs = Long.MAX_VALUE;
        wakeups++;
        service(now);
    }

    private void service(final long now) {
        if (servicing) {
            return; // re-entered from the NIC dequeuing a packet this very poll committed
        }
        servicing = true;
        try {
            nowNs = now;
            for (int round = 0; round < 64; round++) {
                endpoint.poll(now, this);
                if (drain(now) == 0) {
                    break;
                }
            }
            arm(now);
        } finally {
            servicing = false;
        }
    }

    private int drain(final long now) {
        int total = 0;
        int n;
        while ((n = sendCq.poll(scratch, scratch.length)) > 0) {
            for (int i = 0; i < n; i++) {
                listener.onCompletion(now, this, scratch[i], true);
            }
            total += n;
        }
        while ((n = recvCq.poll(scratch, scratch.length)) > 0) {
            for (int i = 0; i < n; i++) {
                listener.onCompletion(now, this, scratch[i], false);
            }
            total += n;
        }
        return total;
    }

    private void arm(final long now) {
        final long deadline = endpoint.nextDeadlineNs();
        if (deadline == Long.MAX_VALUE) {
            return;
        }
        if (nic.queuedPackets() >= network.config.nicQueuePackets() && deadline <= now) {
            return; // the engine waits for NIC room, and the NIC calls back when it has some
        }
        // A deadline at or before now after a full poll can only mean "again when something changes":
        // look again one nanosecond later rather than spin at the same instant.
        final long at = Math.max(deadline, now + 1);
        if (at < wakeAtNs || wakeAtNs <= now) {
            wakeAtNs = at;
            network.simulator.schedule(at, this, null, 0);
        }
    }

    // ---- TransmitSink: the NIC's transmit ring ----

    @Override
    public MutableDirectBuffer buffer() {
        return claimed.buffer;
    }

    @Override
    public int claim(final int maxLength) {
        if (maxLength > Packet.MAX_BYTES) {
            throw new IllegalArgumentException("packet of " + maxLength + " bytes exceeds the simulator's "
                + Packet.MAX_BYTES + "-byte frames");
        }
        if (nic.queuedPackets() >= network.config.nicQueuePackets()) {
            return NO_ROOM;
        }
        if (claimed == null) {
            claimed = network.pool.acquire();
        }
        return 0;
    }

    @Override
    public void commit(final int offset, final int length, final int peerId, final int entropy) {
        final Packet p = claimed;
        claimed = null;
        p.length = length;
        p.srcHost = hostIndex;
        p.dstHost = peerId;
        p.entropy = entropy;
        p.ecn = ecnCodepoint;
        p.sentNs = nowNs;
        nic.enqueue(nowNs, p, false);
    }
}
