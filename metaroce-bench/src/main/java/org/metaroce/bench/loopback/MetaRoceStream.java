// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.bench.loopback;

import org.agrona.concurrent.UnsafeBuffer;
import org.metaroce.core.verbs.PostStatus;
import org.metaroce.core.verbs.RecvRequest;
import org.metaroce.core.verbs.SendFlags;
import org.metaroce.core.verbs.SendRequest;
import org.metaroce.core.verbs.WcStatus;
import org.metaroce.core.verbs.WorkCompletion;
import org.metaroce.core.verbs.WrOpcode;

/**
 * MetaRoCE bandwidth over UDP loopback between two INVOKER-mode devices: the benchmark thread
 * drives the requester's device and keeps {@code depth} signaled work requests outstanding; a
 * {@link PeerThread} drives the responder's device (and, for SEND, reposts its receives). A
 * message is delivered when its completion is polled: for WRITE and SEND the responder has
 * acknowledged it (the data is in its memory), for READ the data is in the requester's memory.
 *
 * <p>Self-check ({@link #sendAndAwait}): the messages are stamped with their sequence numbers into
 * distinct slots and compared byte for byte where they landed.
 */
public final class MetaRoceStream implements StreamHarness {
    /** The RDMA operation streamed. */
    public enum Op { WRITE, SEND, READ }

    /** Receives the responder keeps posted for SEND (the tools' default rx depth). */
    static final int RX_DEPTH = 512;
    private static final int MAX_REGION_BYTES = 16 << 20;
    private static final int MAX_SLOTS = 64;

    private final Op op;
    private final int size;
    private final int depth;
    private final int slots;
    private final MetaRoceEnd client;
    private final PeerThread<Responder> server;
    private final SendRequest[] requests;
    private final WorkCompletion[] wcs = new WorkCompletion[64];
    private final Guard guard;
    private long posted;
    private long completed;
    private long deliveredBytes;
    /** Messages below this sequence number are stamped and checked. */
    private long verifyBelow;
    private String failure;

    /**
     * @param op the operation
     * @param size message bytes (1 B .. 16 MiB)
     * @param depth outstanding work requests (1 .. 1024)
     * @param idle how both threads wait when there is nothing to do
     * @param link path MTU and GRO of both devices
     */
    public MetaRoceStream(final Op op, final int size, final int depth, final Idle idle, final Link link) {
        this.guard = new Guard(idle);
        if (size < 1 || size > MAX_REGION_BYTES || depth < 1 || depth > 1024) {
            throw new IllegalArgumentException("size must be in 1..16 MiB and depth in 1..1024, got " + size + " and "
                + depth);
        }
        this.op = op;
        this.size = size;
        this.depth = depth;
        this.slots = Math.max(1, Math.min(MAX_SLOTS, MAX_REGION_BYTES / size));
        for (int i = 0; i < wcs.length; i++) {
            wcs[i] = new WorkCompletion();
        }
        client = new MetaRoceEnd(slots * size, null, link);
        PeerThread<Responder> peer = null;
        try {
            peer = new PeerThread<>("metaroce-responder", idle, () -> new Responder(op, size, slots, link));
            MetaRoceEnd.connect(client, peer.state().end);
            final Responder r = peer.state();
            r.end.device.call(ep -> {
                r.start();
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
        for (int s = 0; s < slots; s++) {
            Payload.fill(client.mr.buffer(), s * size, size);
        }
        requests = new SendRequest[slots];
        final long remoteBase = server.state().end.mr.address();
        final int rkey = server.state().end.mr.rkey();
        for (int s = 0; s < slots; s++) {
            final SendRequest wr = new SendRequest(1).sendFlags(SendFlags.SIGNALED)
                .addSge(client.mr.address() + (long) s * size, size, client.mr.lkey());
            switch (op) {
                case WRITE -> wr.opcode(WrOpcode.RDMA_WRITE).remoteAddr(remoteBase + (long) s * size).rkey(rkey);
                case READ -> wr.opcode(WrOpcode.RDMA_READ).remoteAddr(remoteBase + (long) s * size).rkey(rkey);
                case SEND -> wr.opcode(WrOpcode.SEND);
            }
            requests[s] = wr;
        }
    }

    @Override
    public int messageBytes() {
        return size;
    }

    @Override
    public long deliveredBytes() {
        return deliveredBytes;
    }

    @Override
    public void send() {
        guard.reset();
        while (posted - completed >= depth) {
            if (guard.idle(client.device.doWork() + reap())) {
                throw Guard.stuck(describe());
            }
        }
        post();
    }

    private void post() {
        final int slot = (int) (posted % slots);
        if (posted < verifyBelow && op != Op.READ) {
            Payload.stamp(client.mr.buffer(), slot * size, size, posted);
        }
        final int status = client.qp.postSend(requests[slot].wrId(posted));
        if (status != PostStatus.OK) {
            throw new IllegalStateException("postSend failed: " + PostStatus.describe(status) + "; " + describe());
        }
        posted++;
    }

    private int reap() {
        final int n = client.sendCq.poll(wcs, wcs.length);
        for (int i = 0; i < n; i++) {
            final WorkCompletion wc = wcs[i];
            if (wc.status() != WcStatus.SUCCESS || wc.wrId() != completed) {
                throw new IllegalStateException("completion " + wc + " where SUCCESS of wrId " + completed
                    + " was expected; " + describe());
            }
            if (op == Op.READ && completed < verifyBelow && failure == null) {
                final int slot = (int) (completed % slots);
                failure = Payload.check(client.mr.buffer(), slot * size, size, slot);
            }
            completed++;
            deliveredBytes += size;
        }
        return n;
    }

    @Override
    public void sendAndAwait(final int messages) {
        if (messages > slots) {
            throw new IllegalArgumentException("a self-check checks at most " + slots + " messages of " + size
                + " B, not " + messages);
        }
        // At most `slots` consecutive sequence numbers map onto distinct slots.
        drain();
        final long first = posted;
        verifyBelow = first + messages;
        for (int i = 0; i < messages; i++) {
            send();
        }
        drain();
        verifyBelow = 0;
        if (failure != null) {
            throw new IllegalStateException("MetaRoCE " + op + " delivered corrupt data: " + failure);
        }
        if (op == Op.READ) {
            return;
        }
        final Responder r = server.state();
        final String remote = r.end.device.call(ep -> r.check(first, messages));
        if (remote != null) {
            throw new IllegalStateException("MetaRoCE " + op + " delivered corrupt data: " + remote);
        }
    }

    /** Runs the duty cycle until every posted message completed. */
    private void drain() {
        guard.reset();
        while (completed < posted) {
            if (guard.idle(client.device.doWork() + reap())) {
                throw Guard.stuck(describe());
            }
        }
    }

    private String describe() {
        // The responder's counters are read from this thread: diagnostics after a failure only.
        final MetaRoceEnd responder = server.state().end;
        return "MetaRoCE " + op + " " + size + " B: posted " + posted + ", completed " + completed + "; requester "
            + client.device.counters() + " " + client.device.endpoint().counters() + "; responder "
            + responder.device.counters() + " " + responder.device.endpoint().counters();
    }

    @Override
    public void close() {
        try {
            server.close();
        } finally {
            client.close();
        }
    }

    /** The responder's end, on its peer thread. */
    static final class Responder implements PeerThread.Duty {
        final MetaRoceEnd end;
        private final Op op;
        private final int size;
        private final int slots;
        private final WorkCompletion[] wcs = new WorkCompletion[64];
        private final RecvRequest recv = new RecvRequest(1);
        private boolean started;

        Responder(final Op op, final int size, final int slots, final Link link) {
            this.op = op;
            this.size = size;
            this.slots = slots;
            end = new MetaRoceEnd(slots * size, null, link);
            for (int i = 0; i < wcs.length; i++) {
                wcs[i] = new WorkCompletion();
            }
            if (op == Op.READ) {
                // The requester reads slot s and expects the pattern stamped with s.
                for (int s = 0; s < slots; s++) {
                    Payload.fill(end.mr.buffer(), s * size, size);
                    Payload.stamp(end.mr.buffer(), s * size, size, s);
                }
            }
        }

        /** Owning thread, once connected: posts the receives SEND needs. */
        void start() {
            if (op == Op.SEND) {
                for (int i = 0; i < RX_DEPTH; i++) {
                    postRecv(i);
                }
            }
            started = true;
        }

        private void postRecv(final long index) {
            final int slot = (int) (index % slots);
            recv.clear().wrId(index).addSge(end.mr.address() + (long) slot * size, size, end.mr.lkey());
            final int status = end.qp.postRecv(recv);
            if (status != PostStatus.OK) {
                throw new IllegalStateException("postRecv failed: " + PostStatus.describe(status));
            }
        }

        /** Owning thread: null if messages first..first+count-1 are intact in their slots. */
        String check(final long first, final int count) {
            for (int i = 0; i < count; i++) {
                final long seq = first + i;
                final String problem = Payload.check(end.mr.buffer(), (int) (seq % slots) * size, size, seq);
                if (problem != null) {
                    return problem;
                }
            }
            return null;
        }

        @Override
        public int doWork() {
            int work = end.device.doWork();
            if (op == Op.SEND && started) {
                final int n = end.recvCq.poll(wcs, wcs.length);
                for (int i = 0; i < n; i++) {
                    final WorkCompletion wc = wcs[i];
                    if (wc.status() != WcStatus.SUCCESS || wc.byteLen() != size) {
                        throw new IllegalStateException("receive completion " + wc + " where SUCCESS of " + size
                            + " B was expected");
                    }
                    // The slot is reused RX_DEPTH receives later: by then the self-check has read it.
                    postRecv(wc.wrId() + RX_DEPTH);
                }
                work += n;
            }
            return work;
        }

        @Override
        public void close() {
            end.close();
        }
    }
}
