// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.bench.loopback;

import org.metaroce.core.verbs.PostStatus;
import org.metaroce.core.verbs.RecvRequest;
import org.metaroce.core.verbs.SendFlags;
import org.metaroce.core.verbs.SendRequest;
import org.metaroce.core.verbs.WcOpcode;
import org.metaroce.core.verbs.WcStatus;
import org.metaroce.core.verbs.WorkCompletion;
import org.metaroce.core.verbs.WrOpcode;

/**
 * MetaRoCE SEND ping-pong over UDP loopback, as {@code metaroce send_lat --loopback}: the benchmark
 * thread drives the client's INVOKER device, SENDs a message and spins until the echo's receive
 * completion; the {@link PeerThread} drives the server's device and SENDs every message back from
 * the buffer it landed in. Each side keeps {@link #RX_SLOTS} receives posted. Both ends react to a
 * completion between their device's read and send ({@code doWork(step)}), as the tools do: the
 * client posts the next ping when it reaps a pong, so a round trip is the time from one pong to the
 * next and each ACK leaves after the message that answers (or follows) it.
 */
public final class MetaRocePingPong implements PingPongHarness {
    static final int RX_SLOTS = 16;

    private final int size;
    private final MetaRoceEnd client;
    private final PeerThread<Echo> server;
    private final SendRequest ping = new SendRequest(1);
    private final RecvRequest recv = new RecvRequest(1);
    private final WorkCompletion[] wcs = new WorkCompletion[16];
    private final Guard guard;
    private final long verifyBelow;
    private long rounds;
    private long recvPosted;
    /** Whether the ping of round {@link #rounds} was already posted (by the step that reaped the previous pong). */
    private boolean pingPosted;
    private boolean back;
    private final java.util.function.IntSupplier clientStep = this::reapPong;

    /**
     * @param size message bytes (1 .. 4096)
     * @param verifyRounds the first rounds whose echo is compared with the ping byte for byte
     * @param idle how both threads wait when there is nothing to do
     */
    public MetaRocePingPong(final int size, final long verifyRounds, final Idle idle) {
        this.guard = new Guard(idle);
        if (size < 1 || size > 4096) {
            throw new IllegalArgumentException("ping-pong messages are 1..4096 bytes, got " + size);
        }
        this.size = size;
        this.verifyBelow = verifyRounds;
        for (int i = 0; i < wcs.length; i++) {
            wcs[i] = new WorkCompletion();
        }
        // Slot 0 holds the ping; slots 1..RX_SLOTS receive the pongs.
        // Slots 0 and RX_SLOTS + 1 alternate as the ping; slots 1..RX_SLOTS receive the pongs.
        client = new MetaRoceEnd((RX_SLOTS + 2) * 4096, null);
        PeerThread<Echo> peer = null;
        try {
            peer = new PeerThread<>("metaroce-echo", idle, Echo::new);
            MetaRoceEnd.connect(client, peer.state().end);
            final Echo e = peer.state();
            e.end.device.call(ep -> {
                e.start();
                return null;
            });
        } catch (final RuntimeException ex) {
            if (peer != null) {
                peer.close();
            }
            client.close();
            throw ex;
        }
        server = peer;
        Payload.fill(client.mr.buffer(), 0, size);
        Payload.fill(client.mr.buffer(), (RX_SLOTS + 1) * 4096, size);
        for (int i = 0; i < RX_SLOTS; i++) {
            postRecv();
        }
    }

    private void postRecv() {
        final int slot = 1 + (int) (recvPosted % RX_SLOTS);
        recv.clear().wrId(recvPosted++).addSge(client.mr.address() + slot * 4096L, 4096, client.mr.lkey());
        final int status = client.qp.postRecv(recv);
        if (status != PostStatus.OK) {
            throw new IllegalStateException("postRecv failed: " + PostStatus.describe(status));
        }
    }

    @Override
    public void roundTrip() {
        if (!pingPosted) {
            postPing(rounds);
        }
        pingPosted = false;
        guard.reset();
        back = false;
        while (!back) {
            if (guard.idle(client.device.doWork(clientStep))) {
                throw Guard.stuck("MetaRoCE pong " + rounds + " missing; " + client.device.endpoint().counters());
            }
        }
        rounds++;
    }

    private void postPing(final long seq) {
        // Two ping buffers: the previous one may still be retransmitted until its ACK arrives.
        final int offset = (seq & 1) == 0 ? 0 : (RX_SLOTS + 1) * 4096;
        if (seq < verifyBelow) {
            Payload.stamp(client.mr.buffer(), offset, size, seq);
        }
        ping.clear().wrId(seq).opcode(WrOpcode.SEND).sendFlags(SendFlags.SIGNALED)
            .addSge(client.mr.address() + offset, size, client.mr.lkey());
        final int status = client.qp.postSend(ping);
        if (status != PostStatus.OK) {
            throw new IllegalStateException("postSend failed: " + PostStatus.describe(status));
        }
    }

    /** The client's step between its device's read and send: reap the pong, post the next ping. */
    private int reapPong() {
        final int n = client.recvCq.poll(wcs, wcs.length);
        for (int i = 0; i < n; i++) {
            final WorkCompletion wc = wcs[i];
            if (wc.status() != WcStatus.SUCCESS || wc.byteLen() != size) {
                throw new IllegalStateException("pong completion " + wc + " where SUCCESS of " + size
                    + " B was expected; " + describe());
            }
            if (back) {
                throw new IllegalStateException("two pongs for round " + rounds + "; " + describe());
            }
            if (rounds < verifyBelow) {
                final int slot = 1 + (int) (wc.wrId() % RX_SLOTS);
                final String problem = Payload.check(client.mr.buffer(), slot * 4096, size, rounds);
                if (problem != null) {
                    throw new IllegalStateException("MetaRoCE echo differs from the ping: " + problem);
                }
            }
            postRecv();
            back = true;
            postPing(rounds + 1);
            pingPosted = true;
        }
        return n + reapSends();
    }

    private int reapSends() {
        final int n = client.sendCq.poll(wcs, wcs.length);
        for (int i = 0; i < n; i++) {
            if (wcs[i].status() != WcStatus.SUCCESS || wcs[i].opcode() != WcOpcode.SEND) {
                throw new IllegalStateException("ping completion " + wcs[i] + " is not a successful SEND; "
                    + describe());
            }
        }
        return n;
    }

    /** @return both ends' counters (the echo's read from this thread: diagnostics after a failure only) */
    private String describe() {
        return "client " + client.device.endpoint().counters() + "; echo " + server.state().end.device.endpoint()
            .counters();
    }

    @Override
    public void close() {
        try {
            server.close();
        } finally {
            client.close();
        }
    }

    /** The server: echoes every message from the slot it landed in. */
    static final class Echo implements PeerThread.Duty {
        final MetaRoceEnd end = new MetaRoceEnd((RX_SLOTS + 1) * 4096, null);
        private final WorkCompletion[] wcs = new WorkCompletion[16];
        private final RecvRequest recv = new RecvRequest(1);
        private final SendRequest pong = new SendRequest(1);
        private long recvPosted;
        private boolean started;

        Echo() {
            for (int i = 0; i < wcs.length; i++) {
                wcs[i] = new WorkCompletion();
            }
        }

        void start() {
            for (int i = 0; i < RX_SLOTS; i++) {
                postRecv();
            }
            started = true;
        }

        private void postRecv() {
            final int slot = (int) (recvPosted % RX_SLOTS);
            recv.clear().wrId(recvPosted++).addSge(end.mr.address() + slot * 4096L, 4096, end.mr.lkey());
            final int status = end.qp.postRecv(recv);
            if (status != PostStatus.OK) {
                throw new IllegalStateException("postRecv failed: " + PostStatus.describe(status));
            }
        }

        @Override
        public int doWork() {
            // Echo between the device's reading and sending, as the metaroce tools do: the pong
            // leaves in the cycle that read the ping, ahead of the ping's ACK.
            return end.device.doWork(echoStep);
        }

        private final java.util.function.IntSupplier echoStep = this::echo;

        private int echo() {
            if (!started) {
                return 0;
            }
            int work = 0;
            int n = end.recvCq.poll(wcs, wcs.length);
            for (int i = 0; i < n; i++) {
                final WorkCompletion wc = wcs[i];
                if (wc.status() != WcStatus.SUCCESS) {
                    throw new IllegalStateException("ping completion " + wc + " is not SUCCESS");
                }
                final int slot = (int) (wc.wrId() % RX_SLOTS);
                pong.clear().opcode(WrOpcode.SEND).sendFlags(SendFlags.SIGNALED).wrId(wc.wrId())
                    .addSge(end.mr.address() + slot * 4096L, wc.byteLen(), end.mr.lkey());
                final int status = end.qp.postSend(pong);
                if (status != PostStatus.OK) {
                    throw new IllegalStateException("echo postSend failed: " + PostStatus.describe(status));
                }
                postRecv();
            }
            work += n;
            final int s = end.sendCq.poll(wcs, wcs.length);
            for (int i = 0; i < s; i++) {
                if (wcs[i].status() != WcStatus.SUCCESS) {
                    throw new IllegalStateException("echo completion " + wcs[i] + " is not SUCCESS");
                }
            }
            return work + s;
        }

        @Override
        public void close() {
            end.close();
        }
    }
}
