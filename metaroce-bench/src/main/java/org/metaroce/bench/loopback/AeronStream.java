// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.bench.loopback;

import io.aeron.ExclusivePublication;
import io.aeron.FragmentAssembler;
import io.aeron.Publication;
import io.aeron.Subscription;
import io.aeron.logbuffer.FragmentHandler;
import org.agrona.BufferUtil;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * Aeron bandwidth over UDP loopback between two embedded INVOKER-mode drivers ({@link AeronEnd}):
 * the benchmark thread offers messages to an exclusive publication, invoking its driver and client
 * while the publication is back-pressured; the {@link PeerThread} invokes the receiving driver and
 * polls the subscription (fragments reassembled into messages). Delivered bytes are what the
 * subscriber's handler saw. The first messages after {@link #sendAndAwait} starts are compared byte
 * for byte with what was offered.
 */
public final class AeronStream implements StreamHarness {
    private static final int STREAM_ID = 1001;

    private final int size;
    private final AeronEnd sender;
    private final ExclusivePublication publication;
    private final PeerThread<Receiver> receiver;
    private final UnsafeBuffer message;
    private final Guard guard;
    private long offered;

    /**
     * @param size message bytes
     * @param mtu Aeron MTU
     * @param idle how both threads wait when there is nothing to do
     */
    public AeronStream(final int size, final int mtu, final Idle idle) {
        this.guard = new Guard(idle);
        this.size = size;
        final int port = AeronEnd.freePort();
        sender = new AeronEnd(mtu);
        PeerThread<Receiver> peer = null;
        ExclusivePublication pub = null;
        try {
            peer = new PeerThread<>("aeron-subscriber", idle, () -> new Receiver(mtu, port, size));
            pub = sender.aeron.addExclusivePublication(sender.channel(port), STREAM_ID);
            guard.reset();
            while (!pub.isConnected()) {
                sender.invoke();
                if (guard.idle(0)) {
                    throw Guard.stuck("Aeron publication to 127.0.0.1:" + port + " never connected");
                }
                peer.checkHealthy();
            }
        } catch (final RuntimeException ex) {
            if (peer != null) {
                peer.close();
            }
            sender.close();
            throw ex;
        }
        receiver = peer;
        publication = pub;
        message = new UnsafeBuffer(BufferUtil.allocateDirectAligned(Math.max(64, size), 64));
        Payload.fill(message, 0, size);
    }

    @Override
    public int messageBytes() {
        return size;
    }

    @Override
    public long deliveredBytes() {
        return receiver.state().bytes;
    }

    @Override
    public void send() {
        offer();
        offered++;
    }

    private void offer() {
        guard.reset();
        long result;
        while ((result = publication.offer(message, 0, size)) < 0) {
            if (result == Publication.CLOSED || result == Publication.MAX_POSITION_EXCEEDED) {
                throw new IllegalStateException("Aeron publication failed: " + Publication.errorString(result));
            }
            if (guard.idle(sender.invoke())) {
                throw Guard.stuck("Aeron offer refused (" + Publication.errorString(result) + ") for 10 s");
            }
        }
    }

    @Override
    public void sendAndAwait(final int messages) {
        final Receiver r = receiver.state();
        awaitDelivered(r, offered);
        final long base = offered;
        r.verifyFrom = base;
        r.verifyUntil = base + messages;
        for (int i = 0; i < messages; i++) {
            Payload.stamp(message, 0, size, base + i);
            send();
        }
        Payload.fill(message, 0, Math.min(size, Long.BYTES));
        awaitDelivered(r, offered);
        final String problem = r.failure;
        if (problem != null) {
            throw new IllegalStateException("Aeron delivered corrupt data: " + problem);
        }
    }

    /** Invokes the sender's driver until the subscriber has seen {@code count} messages. */
    private void awaitDelivered(final Receiver r, final long count) {
        guard.reset();
        while (r.messages < count) {
            if (guard.idle(sender.invoke())) {
                throw Guard.stuck("Aeron delivered " + r.messages + " of " + count + " messages");
            }
            receiver.checkHealthy();
        }
    }

    @Override
    public void close() {
        try {
            receiver.close();
        } finally {
            sender.close();
        }
    }

    /** The subscriber: its driver, its subscription and what it received. */
    static final class Receiver implements PeerThread.Duty {
        final AeronEnd end;
        final Subscription subscription;
        final FragmentHandler handler;
        private final int size;
        volatile long bytes;
        volatile long messages;
        volatile long verifyFrom;
        volatile long verifyUntil;
        volatile String failure;

        Receiver(final int mtu, final int port, final int size) {
            this.size = size;
            end = new AeronEnd(mtu);
            subscription = end.aeron.addSubscription(end.channel(port), STREAM_ID);
            handler = new FragmentAssembler((buffer, offset, length, header) -> {
                final long seq = messages;
                if (length != this.size) {
                    failure = "message " + seq + " has " + length + " bytes, not " + this.size;
                } else if (seq >= verifyFrom && seq < verifyUntil && failure == null) {
                    failure = Payload.check(buffer, offset, length, seq);
                }
                bytes += length;
                messages = seq + 1;
            });
        }

        @Override
        public int doWork() {
            return end.invoke() + subscription.poll(handler, 64);
        }

        @Override
        public void close() {
            end.close();
        }
    }
}
