// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.netty;

import java.net.InetSocketAddress;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;

import org.agrona.concurrent.UnsafeBuffer;

/**
 * A {@link UdpTransport} in memory, for testing the transport-independent send and receive logic:
 * its sockets copy what they send into one {@link #wire} shared by all sockets of the transport (so
 * the order across sockets shows), can be told to take only so many datagrams or to fail the next
 * ones with given {@link SendFailure}s, as a native {@code sendmmsg} would, and deliver datagrams
 * queued with {@link MemorySocket#arrive} when polled. Chunks are direct memory reused once
 * released, as for a synchronous transport.
 */
final class MemoryUdpTransport implements UdpTransport {
    /** One datagram (or GSO message) handed to a socket. */
    record Sent(int fromPort, InetSocketAddress to, boolean connected, byte[] bytes, int segmentBytes,
                boolean segmented) {
    }

    /** One datagram waiting to be received. */
    record Arrival(byte[] bytes, InetSocketAddress from, int ecn, int segmentBytes) {
    }

    final List<Sent> wire = new ArrayList<>();
    final DirectSendChunks chunks = new DirectSendChunks();
    private final SocketCapabilities capabilities;
    private int nextPort = 40_000;
    int chunksAllocated;

    MemoryUdpTransport(final SocketCapabilities capabilities) {
        this.capabilities = capabilities;
    }

    @Override
    public MemorySocket open(final SocketOptions options, final DatagramReceiver receiver) {
        final int port = options.bind().getPort() == 0 ? nextPort++ : options.bind().getPort();
        return new MemorySocket(new InetSocketAddress(options.bind().getAddress(), port), receiver);
    }

    @Override
    public SendChunk allocateChunk(final int capacity) {
        chunksAllocated++;
        return chunks.allocate(capacity);
    }

    @Override
    public String name() {
        return "memory";
    }

    /** One socket of the transport. */
    final class MemorySocket implements PolledUdpSocket {
        private final InetSocketAddress local;
        private final DatagramReceiver receiver;
        private final SourceAddress source = new SourceAddress();
        private final ArrayDeque<Arrival> inbound = new ArrayDeque<>();
        /** Failures by send attempt (1 is the first message this socket is offered), each used once. */
        final java.util.Map<Integer, SendFailure> failures = new java.util.HashMap<>();
        private int attempts;
        /** Datagrams the socket still takes before its buffer is full; negative: unlimited. */
        int room = -1;
        int sendCalls;
        InetSocketAddress connectedTo;
        OutboundState state = OutboundState.IDLE;

        MemorySocket(final InetSocketAddress local, final DatagramReceiver receiver) {
            this.local = local;
            this.receiver = receiver;
        }

        @Override
        public InetSocketAddress localAddress() {
            return local;
        }

        @Override
        public SocketCapabilities capabilities() {
            return capabilities;
        }

        @Override
        public int send(final SendBatch batch) {
            sendCalls++;
            int taken = 0;
            for (int e = 0; e < batch.size(); e++) {
                final InetSocketAddress to = batch.recipient(e) == null ? connectedTo : batch.recipient(e);
                if (to == null) {
                    throw new AssertionError("an entry without recipient on an unconnected socket");
                }
                final int start = batch.offset(e);
                final int end = start + batch.bytes(e);
                if (batch.segmented(e)) {
                    if (!take(batch)) {
                        return taken;
                    }
                    wire.add(new Sent(local.getPort(), to, batch.recipient(e) == null,
                        copy(batch.chunk(e), start, end - start), batch.segmentBytes(e), true));
                    taken += batch.datagrams(e);
                    continue;
                }
                for (int at = start; at < end; at += batch.segmentBytes(e)) {
                    if (!take(batch)) {
                        return taken;
                    }
                    final int length = Math.min(batch.segmentBytes(e), end - at);
                    wire.add(new Sent(local.getPort(), to, batch.recipient(e) == null, copy(batch.chunk(e), at, length),
                        length, false));
                    taken++;
                }
            }
            return taken;
        }

        /** @return whether the next message goes; otherwise the batch says why not */
        private boolean take(final SendBatch batch) {
            final SendFailure failure = failures.remove(++attempts);
            if (failure != null) {
                batch.stopBecause(failure);
                return false;
            }
            if (room == 0) {
                attempts--; // not offered to the kernel: the same message is the next attempt
                batch.stopBecause(SendFailure.WOULD_BLOCK);
                return false;
            }
            if (room > 0) {
                room--;
            }
            return true;
        }

        /** @return the bytes a socket sends: the chunk's, and where it gathers, referenced ranges from their memory */
        private byte[] copy(final SendChunk chunk, final int offset, final int length) {
            final byte[] out = new byte[length];
            new UnsafeBuffer(chunk.address(), chunk.capacity()).getBytes(offset, out);
            final PayloadReferences refs = chunk.references();
            if (capabilities.gather() && refs != null) {
                for (int k = refs.firstFrom(offset); k < refs.size() && refs.at(k) < offset + length; k++) {
                    new UnsafeBuffer(refs.address(k), refs.length(k)).getBytes(0, out, refs.at(k) - offset, refs.length(k));
                }
            }
            return out;
        }

        @Override
        public OutboundState outboundState() {
            return state;
        }

        @Override
        public boolean connect(final InetSocketAddress peer) {
            connectedTo = peer;
            return true;
        }

        /** Queues a datagram for {@link #receive}. */
        void arrive(final byte[] bytes, final InetSocketAddress from, final int ecn, final int segmentBytes) {
            inbound.add(new Arrival(bytes, from, ecn, segmentBytes));
        }

        @Override
        public int receive(final int maxDatagrams) {
            int read = 0;
            try {
                while (read < maxDatagrams && !inbound.isEmpty()) {
                    final Arrival a = inbound.poll();
                    read++;
                    final boolean more = receiver.onDatagram(new UnsafeBuffer(a.bytes()), 0, a.bytes().length,
                        source.socketAddress(a.from()), a.ecn(), a.segmentBytes());
                    if (!more) {
                        break;
                    }
                }
            } finally {
                if (read > 0) {
                    receiver.onBatchEnd();
                }
            }
            return read;
        }

        @Override
        public void awaitReadable(final long timeoutNs) {
            // In memory there is nothing to wait for: a test queues before it reads.
        }

        @Override
        public void wakeup() {
            // Nothing waits (see awaitReadable).
        }

        @Override
        public void close() {
            inbound.clear();
        }
    }
}
