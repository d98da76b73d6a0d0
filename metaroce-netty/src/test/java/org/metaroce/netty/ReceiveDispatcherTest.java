// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.netty;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;

import org.agrona.DirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;
import org.metaroce.core.engine.DatagramEndpoint;
import org.metaroce.core.engine.TransmitSink;

/**
 * The transport-independent receive path against {@link MemoryUdpTransport}: GRO splitting, the
 * transport's ECN value reaching the endpoint, peer ids from raw and object addresses, the batch
 * clock, fault injection, the stop at the first completion, and an endpoint that throws.
 */
class ReceiveDispatcherTest {
    /** What the endpoint was handed. */
    record Delivered(long nowNs, byte[] bytes, int peerId, int ecn) {
    }

    /** An endpoint that records datagrams; optionally throws on one, or counts completions. */
    static final class RecordingEndpoint implements DatagramEndpoint {
        final List<Delivered> delivered = new ArrayList<>();
        long completions;
        boolean completeEach;
        int throwOn = -1;

        @Override
        public void onDatagram(final long nowNs, final DirectBuffer buffer, final int offset, final int length,
                               final int peerId, final int ecn) {
            final byte[] bytes = new byte[length];
            buffer.getBytes(offset, bytes);
            delivered.add(new Delivered(nowNs, bytes, peerId, ecn));
            if (delivered.size() - 1 == throwOn) {
                throw new IllegalStateException("a bug in the endpoint");
            }
            if (completeEach) {
                completions++;
            }
        }

        @Override
        public int poll(final long nowNs, final TransmitSink sink) {
            return 0; // the receive path never polls
        }

        @Override
        public long nextDeadlineNs() {
            return Long.MAX_VALUE; // no timers in a receive test
        }
    }

    private final PeerTable peers = new PeerTable();
    private final DriverCounters counters = new DriverCounters(1);
    private final RecordingEndpoint endpoint = new RecordingEndpoint();
    private final ReceiveDispatcher dispatcher = new ReceiveDispatcher(endpoint, peers, counters);
    private final MemoryUdpTransport transport = new MemoryUdpTransport(new SocketCapabilities(false, true, true, false));
    private final MemoryUdpTransport.MemorySocket socket = transport.open(new SocketOptions(
        new InetSocketAddress(InetAddress.getLoopbackAddress(), 4796), 4096, 4096, 0), dispatcher);
    private final InetSocketAddress sender = new InetSocketAddress(InetAddress.getLoopbackAddress(), 50_000);

    private static byte[] bytes(final int length, final int first) {
        final byte[] b = new byte[length];
        for (int i = 0; i < length; i++) {
            b[i] = (byte) (first + i);
        }
        return b;
    }

    @Test
    void aGroCoalescedDatagramIsCutIntoItsSegments() {
        final byte[] coalesced = bytes(10_000, 0);
        socket.arrive(coalesced, sender, DatagramEndpoint.ECN_ECT_0, 4000);
        assertThat(dispatcher.readFrom(socket, 32, null)).isOne();
        assertThat(endpoint.delivered).hasSize(3);
        assertThat(endpoint.delivered.get(0).bytes()).isEqualTo(java.util.Arrays.copyOfRange(coalesced, 0, 4000));
        assertThat(endpoint.delivered.get(1).bytes()).isEqualTo(java.util.Arrays.copyOfRange(coalesced, 4000, 8000));
        assertThat(endpoint.delivered.get(2).bytes()).isEqualTo(java.util.Arrays.copyOfRange(coalesced, 8000, 10_000));
        assertThat(endpoint.delivered).allSatisfy(d -> assertThat(d.ecn()).isEqualTo(DatagramEndpoint.ECN_ECT_0));
        assertThat(counters.get(DriverCounter.DATAGRAMS_RECEIVED)).isEqualTo(3);
        assertThat(counters.get(DriverCounter.BYTES_RECEIVED)).isEqualTo(10_000);
    }

    @Test
    void theTransportsEcnValueReachesTheEndpoint() {
        for (int ecn = 0; ecn < 4; ecn++) {
            socket.arrive(bytes(64, ecn), sender, ecn, 0);
        }
        dispatcher.readFrom(socket, 32, null);
        assertThat(endpoint.delivered.stream().map(Delivered::ecn)).containsExactly(
            DatagramEndpoint.ECN_NOT_ECT, DatagramEndpoint.ECN_ECT_1, DatagramEndpoint.ECN_ECT_0,
            DatagramEndpoint.ECN_CE);
    }

    @Test
    void rawAndObjectSourceAddressesOfOneSenderGetOnePeerId() {
        final SourceAddress source = new SourceAddress();
        final UnsafeBuffer data = new UnsafeBuffer(bytes(32, 1));
        dispatcher.onDatagram(data, 0, 32, source.socketAddress(sender), 0, 0);
        dispatcher.onDatagram(data, 0, 32, source.ipv4(0x7F00_0001, 50_000), 0, 0);
        // The IPv4-mapped form a dual-stack socket reports for the same sender.
        dispatcher.onDatagram(data, 0, 32, source.ipv6(0L, 0xFFFF_7F00_0001L, 50_000), 0, 0);
        dispatcher.onDatagram(data, 0, 32, source.ipv4(0x7F00_0001, 50_001), 0, 0);
        dispatcher.onBatchEnd();
        final int id = peers.lookup(sender);
        assertThat(endpoint.delivered.stream().map(Delivered::peerId)).containsExactly(id, id, id,
            peers.lookup(new InetSocketAddress(sender.getAddress(), 50_001)));
        assertThat(endpoint.delivered.get(3).peerId()).isNotEqualTo(id);
    }

    @Test
    void theClockIsReadOncePerReadBatch() throws Exception {
        socket.arrive(bytes(64, 1), sender, 0, 0);
        socket.arrive(bytes(64, 2), sender, 0, 0);
        dispatcher.readFrom(socket, 32, null);
        Thread.sleep(2);
        socket.arrive(bytes(64, 3), sender, 0, 0);
        dispatcher.readFrom(socket, 32, null);
        assertThat(endpoint.delivered.get(0).nowNs()).isEqualTo(endpoint.delivered.get(1).nowNs());
        assertThat(endpoint.delivered.get(2).nowNs()).isGreaterThan(endpoint.delivered.get(1).nowNs());
    }

    @Test
    void aClockReadingTheTransportHandsOverIsTheBatchsTimeUntilTheBatchEnds() {
        final SourceAddress source = new SourceAddress();
        final UnsafeBuffer data = new UnsafeBuffer(bytes(32, 1));
        // A reading from the past: the dispatcher takes it rather than reading the clock itself.
        final long transportClock = System.nanoTime() - 1_000_000_000L;
        dispatcher.onBatchClock(transportClock);
        dispatcher.onDatagram(data, 0, 32, source.ipv4(0x7F00_0001, 50_000), 0, 0, transportClock - 500);
        dispatcher.onDatagram(data, 0, 32, source.ipv4(0x7F00_0001, 50_000), 0, 0);
        dispatcher.onBatchEnd();
        dispatcher.onDatagram(data, 0, 32, source.ipv4(0x7F00_0001, 50_000), 0, 0);
        dispatcher.onBatchEnd();
        assertThat(endpoint.delivered.get(0).nowNs()).isEqualTo(transportClock);
        assertThat(endpoint.delivered.get(1).nowNs()).isEqualTo(transportClock);
        assertThat(endpoint.delivered.get(2).nowNs()).as("the next batch reads the clock").isGreaterThan(transportClock);
    }

    @Test
    void aHeldBackDatagramKeepsItsEcnAndComesAfterTheNextOne() {
        dispatcher.injectFaults(new InboundFaults(0, 1.0, 7), 8320);
        socket.arrive(bytes(64, 1), sender, DatagramEndpoint.ECN_CE, 0);
        socket.arrive(bytes(64, 2), sender, DatagramEndpoint.ECN_ECT_0, 0);
        dispatcher.readFrom(socket, 32, null);
        // Held: 1 (CE). 2 cannot be held while 1 is: delivered, then 1 follows it.
        assertThat(endpoint.delivered).hasSize(2);
        assertThat(endpoint.delivered.get(0).bytes()[0]).isEqualTo((byte) 2);
        assertThat(endpoint.delivered.get(1).bytes()[0]).isEqualTo((byte) 1);
        assertThat(endpoint.delivered.get(1).ecn()).isEqualTo(DatagramEndpoint.ECN_CE);
        assertThat(counters.get(DriverCounter.FAULT_REORDERED)).isOne();

        socket.arrive(bytes(64, 3), sender, DatagramEndpoint.ECN_ECT_1, 0);
        dispatcher.readFrom(socket, 32, null);
        assertThat(endpoint.delivered).as("held until the end of its batch at most").hasSize(3);
        assertThat(endpoint.delivered.get(2).ecn()).isEqualTo(DatagramEndpoint.ECN_ECT_1);
    }

    @Test
    void readingStopsAfterTheFirstDatagramThatCompletesAndTheNextReadDeliversTheRest() {
        endpoint.completeEach = true;
        for (int i = 0; i < 3; i++) {
            socket.arrive(bytes(64, i), sender, 0, 0);
        }
        assertThat(dispatcher.readFrom(socket, 32, () -> endpoint.completions)).isOne();
        assertThat(dispatcher.readFrom(socket, 32, null)).isEqualTo(2);
        assertThat(endpoint.delivered).hasSize(3);
    }

    @Test
    void anEndpointThatThrowsIsCountedAndTheNextDatagramStillArrives() {
        endpoint.throwOn = 0;
        socket.arrive(bytes(64, 1), sender, 0, 0);
        socket.arrive(bytes(64, 2), sender, 0, 0);
        assertThat(dispatcher.readFrom(socket, 32, null)).isEqualTo(2);
        assertThat(endpoint.delivered).hasSize(2);
        assertThat(counters.get(DriverCounter.ENGINE_ERRORS)).isOne();
    }
}
