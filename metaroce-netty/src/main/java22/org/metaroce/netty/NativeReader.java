// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.netty;

import java.io.IOException;

import org.agrona.concurrent.UnsafeBuffer;
import org.metaroce.core.engine.DatagramEndpoint;
import org.metaroce.netty.linux.Errno;
import org.metaroce.netty.linux.LinuxUdpSocket;
import org.metaroce.netty.linux.ReceiveBatch;

/**
 * The receive path of a {@link NativeUdpSocket}: {@code recvmmsg} into the socket's fixed slots
 * ({@code recvmsg} into the first while datagrams come one at a time),
 * then each datagram to the {@link DatagramReceiver} with its raw source address, its ECN field
 * and its GRO segment size. Allocates nothing per datagram or call, whatever the source ports:
 * the payload is seen through one reused {@link UnsafeBuffer} wrapped around the slot's buffer view, the
 * source through one reused {@link SourceAddress}. Datagrams read but not delivered (the receiver
 * stopped) are delivered first by the next call.
 *
 * <p>Owning thread only.
 */
final class NativeReader implements AutoCloseable {
    private final LinuxUdpSocket socket;
    private final NativeErrorQueue errors;
    private final ReceiveBatch slots;
    private final DatagramReceiver receiver;
    private final UnsafeBuffer view = new UnsafeBuffer(new byte[0]);
    private final SourceAddress source = new SourceAddress();
    /** Slots of the last read still to deliver: [next, count). */
    private int next;
    private int count;
    /**
     * Whether the next read is a {@code recvmsg} of one datagram rather than a {@code recvmmsg}:
     * after a batch read that found at most one datagram, until a single read finds one (more may
     * then be waiting, and the next read takes a batch). A spinning reader's idle reads and the
     * read that catches a lone datagram (a request-reply exchange) cost less so, and a flow of
     * datagrams is still read 32 at a time after its first.
     */
    private boolean single;

    /**
     * @param slots datagrams per {@code recvmmsg}
     * @param slotBytes bytes per slot (64 KiB with GRO)
     * @param errors the socket's error queue, read whenever a read fails
     */
    NativeReader(final LinuxUdpSocket socket, final int slots, final int slotBytes, final DatagramReceiver receiver,
                 final NativeErrorQueue errors) {
        this.socket = socket;
        this.errors = errors;
        this.slots = new ReceiveBatch(slots, slotBytes);
        this.receiver = receiver;
    }

    /** See {@link PolledUdpSocket#receive(int)}. */
    int receive(final int maxDatagrams) throws IOException {
        int delivered = 0;
        try {
            while (delivered < maxDatagrams) {
                if (next == count && !refill()) {
                    break;
                }
                final int i = next++;
                delivered++;
                if (!receiver.onDatagram(payload(i), 0, Math.min(slots.length(i), slots.slotSize()), source(i),
                    ecn(i), slots.segmentSize(i), arrival(i))) {
                    break;
                }
            }
        } finally {
            if (delivered > 0) {
                receiver.onBatchEnd();
            }
        }
        return delivered;
    }

    /** @return whether a {@code recvmmsg} brought datagrams */
    private boolean refill() throws IOException {
        next = 0;
        count = 0;
        boolean drained = false;
        while (true) {
            final int r = single ? socket.receiveOne(slots) : socket.receive(slots);
            if (r >= 0) {
                count = r;
                single = single ? r == 0 : r <= 1;
                final long clock = slots.receivedNanoTime();
                if (clock != ReceiveBatch.NO_TIMESTAMP) {
                    receiver.onBatchClock(clock);
                }
                return r > 0;
            }
            if (-r == Errno.EINTR) {
                continue;
            }
            // With IP_RECVERR an ICMP error for a datagram this socket sent is reported to the next
            // call: read the error queue, which counts it by kind, and read the datagrams again.
            if (!drained && errors.drain() > 0) {
                drained = true;
                continue;
            }
            // No queued error explains it (a closed socket): the dispatcher counts it.
            throw new IOException("recvmmsg on " + socket + " failed: " + Errno.name(-r));
        }
    }

    private UnsafeBuffer payload(final int i) {
        // Wrapped through the slot's ByteBuffer view, not its bare address: the integrity check
        // uses the JDK's intrinsic CRC32C only for buffers backed by a ByteBuffer (or an array),
        // and a byte-at-a-time software CRC otherwise (measured: 2x the server's cost per datagram).
        view.wrap(slots.buffer(i), 0, Math.min(slots.length(i), slots.slotSize()));
        return view;
    }

    private SourceAddress source(final int i) {
        if (slots.sourceIsIpv6(i)) {
            return source.ipv6(slots.sourceIpv6High(i), slots.sourceIpv6Low(i), slots.sourcePort(i));
        }
        return source.ipv4(slots.sourceIpv4(i), slots.sourcePort(i));
    }

    private long arrival(final int i) {
        final long at = slots.arrivalNanoTime(i);
        return at == ReceiveBatch.NO_TIMESTAMP ? DatagramReceiver.NO_ARRIVAL : at;
    }

    private int ecn(final int i) {
        final int ecn = slots.ecn(i);
        return ecn == ReceiveBatch.NOT_REPORTED ? DatagramEndpoint.ECN_NOT_ECT : ecn;
    }

    @Override
    public void close() {
        slots.close();
    }
}
