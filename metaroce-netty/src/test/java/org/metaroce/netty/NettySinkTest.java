// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.netty;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.entry;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.metaroce.core.engine.TransmitSink;

/**
 * The transport-independent sink against {@link MemoryUdpTransport}: run grouping into GSO
 * messages, send order across sockets, backpressure when a socket takes only part of a batch, and
 * what each {@link SendFailure} leads to. No real socket is involved, which is what shows the sink
 * depends on the {@link UdpSocket} seam only.
 */
class NettySinkTest {
    private static final int ENTROPY_A = 5001;
    private static final int ENTROPY_B = 5002;
    private static final int ENDPOINT = 4796;

    private final PeerTable peers = new PeerTable();
    private final DriverCounters counters = new DriverCounters(2);
    private final InetSocketAddress hostA = new InetSocketAddress(InetAddress.getLoopbackAddress(), 6001);
    private final InetSocketAddress hostB = new InetSocketAddress(InetAddress.getLoopbackAddress(), 6002);
    private final int peerA = peers.peerId(hostA);
    private final int peerB = peers.peerId(hostB);
    private MemoryUdpTransport transport;
    private MemoryUdpTransport.MemorySocket socketA;
    private MemoryUdpTransport.MemorySocket socketB;
    private NettySink sink;
    private byte nextMark = 1;
    /** The bytes of every committed packet, in commit order. */
    private final List<byte[]> committed = new ArrayList<>();

    private void open(final SocketCapabilities caps, final int chunkBytes, final boolean gso, final int gsoMinSegments,
                      final boolean preserveSendOrder) {
        transport = new MemoryUdpTransport(caps);
        final InetAddress local = InetAddress.getLoopbackAddress();
        socketA = transport.open(new SocketOptions(new InetSocketAddress(local, ENTROPY_A), 4096, 4096, 0), null);
        socketB = transport.open(new SocketOptions(new InetSocketAddress(local, ENTROPY_B), 4096, 4096, 0), null);
        final UdpSocket endpoint = transport.open(new SocketOptions(new InetSocketAddress(local, ENDPOINT), 4096,
            4096, 0), null);
        sink = new NettySink(transport, chunkBytes, 1024, peers, counters, new UdpSocket[] {socketA, socketB},
            new int[] {ENTROPY_A, ENTROPY_B}, endpoint, gso, gsoMinSegments, true, preserveSendOrder);
    }

    private static SocketCapabilities caps(final boolean gso, final boolean connect) {
        return new SocketCapabilities(gso, false, false, connect);
    }

    /** Claims, fills with a mark of its own and commits one packet; returns false on NO_ROOM. */
    private boolean send(final int length, final int peer, final int entropy) {
        final int offset = sink.claim(length, entropy);
        if (offset == TransmitSink.NO_ROOM) {
            return false;
        }
        final byte[] bytes = new byte[length];
        java.util.Arrays.fill(bytes, nextMark++);
        sink.buffer().putBytes(offset, bytes);
        sink.commit(offset, length, peer, entropy);
        committed.add(bytes);
        return true;
    }

    private static byte[] concat(final List<byte[]> parts) {
        final java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
        parts.forEach(out::writeBytes);
        return out.toByteArray();
    }

    @Test
    void equalSizedPacketsToOnePeerBecomeOneGsoMessageAndShortRunsSeparateDatagrams() {
        open(caps(true, false), 1 << 16, true, 3, true);
        sink.beginCycle();
        for (int i = 0; i < 5; i++) {
            assertThat(send(1000, peerA, ENTROPY_A)).isTrue();
        }
        assertThat(send(400, peerA, ENTROPY_A)).as("a shorter last segment ends the run").isTrue();
        assertThat(send(1000, peerB, ENTROPY_A)).isTrue();
        assertThat(send(1000, peerB, ENTROPY_A)).isTrue();
        sink.flush();

        assertThat(transport.wire).hasSize(3);
        final MemoryUdpTransport.Sent gso = transport.wire.get(0);
        assertThat(gso.segmented()).isTrue();
        assertThat(gso.segmentBytes()).isEqualTo(1000);
        assertThat(gso.to()).isEqualTo(hostA);
        assertThat(gso.bytes()).isEqualTo(concat(committed.subList(0, 6)));
        assertThat(transport.wire.subList(1, 3)).allSatisfy(s -> {
            assertThat(s.segmented()).as("a run of 2 is below gsoMinSegments").isFalse();
            assertThat(s.to()).isEqualTo(hostB);
        });
        assertThat(transport.wire.get(2).bytes()).isEqualTo(committed.get(7));
        assertThat(socketA.sendCalls).as("both runs in one hand-over").isOne();
        assertThat(counters.get(DriverCounter.GSO_WRITES)).isOne();
        assertThat(counters.get(DriverCounter.GSO_SEGMENTS)).isEqualTo(6);
        assertThat(counters.get(DriverCounter.DATAGRAMS_SENT)).isEqualTo(8);
        assertThat(counters.get(DriverCounter.BYTES_SENT)).isEqualTo(5 * 1000 + 400 + 2 * 1000);
        assertThat(counters.sentFromEntropyPort(0)).isEqualTo(8);
    }

    @ParameterizedTest(name = "path MTU {0}")
    @ValueSource(ints = {1024, 2048, 4096, 8192})
    void aBurstOfPacketsPerGsoWriteLargestPacketsIsOneGsoWriteAndOneMoreIsNot(final int pathMtu) {
        // The largest data packet: 72 header bytes, the payload and the 4-byte integrity check.
        final int packet = pathMtu + 72 + 4;
        final int burst = DeviceConfig.packetsPerGsoWrite(pathMtu);
        assertThat(burst).isBetween(1, 16);
        open(caps(true, false), 1 << 20, true, 3, true);
        sink.beginCycle();
        for (int i = 0; i < burst; i++) {
            assertThat(send(packet, peerA, ENTROPY_A)).isTrue();
        }
        sink.flush();
        assertThat(transport.wire).as("a burst is one segmented send").hasSize(1);
        assertThat(transport.wire.get(0).segmented()).isTrue();
        if (burst < 16) {
            // The burst is the most one GSO write holds: one packet more is a write of its own.
            transport.wire.clear();
            sink.beginCycle();
            for (int i = 0; i <= burst; i++) {
                assertThat(send(packet, peerA, ENTROPY_A)).isTrue();
            }
            sink.flush();
            assertThat(transport.wire).hasSize(2);
        }
    }

    @Test
    void aSocketWithoutGsoGetsTheSameRunAsSeparateDatagrams() {
        open(caps(false, false), 1 << 16, true, 3, true);
        sink.beginCycle();
        for (int i = 0; i < 5; i++) {
            send(1000, peerA, ENTROPY_A);
        }
        sink.flush();
        assertThat(transport.wire).hasSize(5).noneMatch(MemoryUdpTransport.Sent::segmented);
        for (int i = 0; i < 5; i++) {
            assertThat(transport.wire.get(i).bytes()).isEqualTo(committed.get(i));
        }
        assertThat(socketA.sendCalls).isOne();
        assertThat(counters.get(DriverCounter.GSO_WRITES)).isZero();
    }

    @Test
    void withSendOrderPreservedDatagramsLeaveInCommitOrderAcrossSockets() {
        open(caps(true, false), 1 << 16, true, 3, true);
        sink.beginCycle();
        final int[] entropies = {ENTROPY_A, ENTROPY_B, ENTROPY_A, ENTROPY_B, ENTROPY_B, ENTROPY_A};
        for (final int entropy : entropies) {
            send(500, peerA, entropy);
        }
        sink.flush();
        assertThat(transport.wire.stream().map(MemoryUdpTransport.Sent::fromPort))
            .containsExactly(ENTROPY_A, ENTROPY_B, ENTROPY_A, ENTROPY_B, ENTROPY_B, ENTROPY_A);
        for (int i = 0; i < entropies.length; i++) {
            assertThat(transport.wire.get(i).bytes()).isEqualTo(committed.get(i));
        }
    }

    @Test
    void withoutSendOrderEachSocketIsHandedItsBatchOnceAtTheEndOfTheCycle() {
        open(caps(true, false), 1 << 16, true, 3, false);
        sink.beginCycle();
        for (final int entropy : new int[] {ENTROPY_A, ENTROPY_B, ENTROPY_A, ENTROPY_B}) {
            send(500, peerA, entropy);
        }
        assertThat(transport.wire).as("nothing before the flush").isEmpty();
        sink.flush();
        assertThat(transport.wire.stream().map(MemoryUdpTransport.Sent::fromPort))
            .containsExactly(ENTROPY_A, ENTROPY_A, ENTROPY_B, ENTROPY_B);
        assertThat(socketA.sendCalls).isOne();
        assertThat(socketB.sendCalls).isOne();
    }

    @Test
    void aPartialSendKeepsTheRestRefusesClaimsAndSendsTheRestInOrderOnceTheSocketTakesIt() {
        open(caps(false, false), 1 << 16, true, 3, true);
        socketA.room = 3;
        sink.beginCycle();
        for (int i = 0; i < 5; i++) {
            assertThat(send(700, peerA, ENTROPY_A)).isTrue();
        }
        sink.flush();
        assertThat(transport.wire).hasSize(3);
        assertThat(sink.hasPendingOutbound()).isTrue();
        assertThat(send(700, peerA, ENTROPY_B)).as("a full socket stops every claim").isFalse();
        assertThat(counters.get(DriverCounter.SINK_FULL)).isOne();

        sink.beginCycle(); // the socket is still full
        assertThat(transport.wire).hasSize(3);
        assertThat(send(700, peerA, ENTROPY_A)).isFalse();

        socketA.room = -1;
        sink.beginCycle();
        assertThat(transport.wire).hasSize(5);
        for (int i = 0; i < 5; i++) {
            assertThat(transport.wire.get(i).bytes()).isEqualTo(committed.get(i));
        }
        assertThat(sink.hasPendingOutbound()).isFalse();
        assertThat(send(700, peerA, ENTROPY_A)).isTrue();
        sink.flush();
        assertThat(transport.wire).hasSize(6);
        assertThat(counters.get(DriverCounter.SEND_ERRORS)).isZero();
        assertThat(counters.get(DriverCounter.DATAGRAMS_SENT)).isEqualTo(6);
    }

    @Test
    void aChunkThatUnsentDatagramsPointIntoIsNotReused() {
        // Four 1000-byte packets fill a 4096-byte chunk; the fifth needs a new one.
        open(caps(false, false), 4096, true, 3, true);
        socketA.room = 2;
        sink.beginCycle();
        for (int i = 0; i < 4; i++) {
            assertThat(send(1000, peerA, ENTROPY_A)).isTrue();
        }
        assertThat(send(1000, peerA, ENTROPY_A)).as("the old chunk still holds two unsent datagrams").isFalse();
        assertThat(transport.wire).hasSize(2);
        assertThat(transport.chunks.spareCount()).as("old chunk not released").isZero();

        socketA.room = -1;
        sink.beginCycle();
        assertThat(send(1000, peerA, ENTROPY_A)).isTrue();
        sink.flush();
        assertThat(transport.wire).hasSize(5);
        for (int i = 0; i < 5; i++) {
            assertThat(transport.wire.get(i).bytes()).as("datagram " + i).isEqualTo(committed.get(i));
        }
    }

    @Test
    void aBackedUpTransportQueueStopsClaimsFromTheNextCycle() {
        open(caps(false, false), 1 << 16, true, 3, true);
        socketB.state = OutboundState.BACKED_UP;
        sink.beginCycle();
        assertThat(send(100, peerA, ENTROPY_A)).isFalse();
        assertThat(sink.hasPendingOutbound()).isTrue();
        socketB.state = OutboundState.QUEUED;
        sink.beginCycle();
        assertThat(send(100, peerA, ENTROPY_A)).isTrue();
        assertThat(sink.hasPendingOutbound()).as("datagrams still wait in B's queue").isTrue();
    }

    @Test
    void aFailedDatagramIsCountedAndDroppedAndTheRestOfTheBatchGoes() {
        open(caps(false, false), 1 << 16, true, 3, true);
        socketA.failures.put(2, SendFailure.NO_BUFFERS);
        sink.beginCycle();
        for (int i = 0; i < 4; i++) {
            send(300, peerA, ENTROPY_A);
        }
        sink.flush();
        assertThat(transport.wire).hasSize(3);
        assertThat(transport.wire.get(0).bytes()).isEqualTo(committed.get(0));
        assertThat(transport.wire.get(1).bytes()).isEqualTo(committed.get(2));
        assertThat(transport.wire.get(2).bytes()).isEqualTo(committed.get(3));
        assertThat(counters.get(DriverCounter.SEND_ERRORS)).isOne();
        assertThat(counters.get(DriverCounter.DATAGRAMS_SENT)).isEqualTo(3);
        assertThat(sink.hasPendingOutbound()).isFalse();
    }

    @Test
    void eachFailureIncrementsItsOwnCounterAndTheTotal() {
        for (final SendFailure failure : SendFailure.values()) {
            if (failure == SendFailure.WOULD_BLOCK || failure == SendFailure.PEER_UNREACHABLE) {
                continue; // neither drops the datagram it is reported for: see the tests below
            }
            final long[] before = sendCounters();
            open(caps(false, false), 1 << 16, true, 3, true);
            socketA.failures.put(1, failure);
            sink.beginCycle();
            send(300, peerA, ENTROPY_A);
            sink.flush();
            assertThat(difference(before, sendCounters())).as(failure.name())
                .containsOnly(entry(DriverCounter.of(failure), 1L), entry(DriverCounter.SEND_ERRORS, 1L));
        }
    }

    /**
     * Payloads by reference (a gathering transport): what the socket takes is gathered from the
     * referenced memory; what it leaves unsent, its buffer full, has its payloads copied into the
     * chunk in the same duty cycle, so the retry a cycle later sends the bytes the packet's
     * Integrity Check covered even if the work request's memory changed since (its request may
     * have completed meanwhile: a retransmission whose original arrived).
     */
    @Test
    void payloadsByReferenceLeftUnsentAreCopiedInBeforeTheirMemoryCanChange() {
        open(new SocketCapabilities(false, false, false, false, true), 1 << 16, true, 3, true);
        final java.nio.ByteBuffer memory = java.nio.ByteBuffer.allocateDirect(4 * 1000);
        for (int i = 0; i < memory.capacity(); i++) {
            memory.put(i, (byte) (i * 7 + 1));
        }
        final long base = org.agrona.BufferUtil.address(memory);
        final List<byte[]> expected = new ArrayList<>();
        socketA.room = 1;
        sink.beginCycle();
        for (int p = 0; p < 4; p++) {
            final int offset = sink.claim(1040, ENTROPY_A);
            final byte[] header = new byte[40];
            java.util.Arrays.fill(header, (byte) (0x70 + p));
            sink.buffer().putBytes(offset, header);
            assertThat(sink.reference(offset + 40, base + p * 1000L, 1000)).as("a gathering socket takes it").isTrue();
            sink.commit(offset, 1040, peerA, ENTROPY_A);
            final byte[] packet = new byte[1040];
            System.arraycopy(header, 0, packet, 0, 40);
            memory.get(p * 1000, packet, 40, 1000);
            expected.add(packet);
        }
        sink.flush();
        assertThat(transport.wire).hasSize(1);
        assertThat(counters.get(DriverCounter.PAYLOADS_BY_REFERENCE)).isEqualTo(4);
        assertThat(counters.get(DriverCounter.PAYLOADS_COPIED_FOR_RETRY)).as("the three left unsent").isEqualTo(3);

        for (int i = 0; i < memory.capacity(); i++) {
            memory.put(i, (byte) 0); // the memory changes before the retry
        }
        socketA.room = -1;
        sink.beginCycle();
        sink.flush();
        assertThat(transport.wire).hasSize(4);
        for (int p = 0; p < 4; p++) {
            assertThat(transport.wire.get(p).bytes()).as("datagram %d", p).isEqualTo(expected.get(p));
        }
    }

    @Test
    void aSocketThatDoesNotGatherRefusesReferences() {
        open(caps(true, false), 1 << 16, true, 3, true);
        sink.beginCycle();
        final int offset = sink.claim(1040, ENTROPY_A);
        assertThat(sink.reference(offset + 40, 0x1000, 1000)).isFalse();
    }

    @Test
    void aFullBufferIsCountedAsSuchAndNotAsAnError() {
        open(caps(false, false), 1 << 16, true, 3, true);
        socketA.room = 1;
        sink.beginCycle();
        send(300, peerA, ENTROPY_A);
        send(300, peerA, ENTROPY_A);
        sink.flush();
        assertThat(difference(new long[DriverCounter.values().length], sendCounters()))
            .containsOnly(entry(DriverCounter.SEND_WOULD_BLOCK, 1L));
    }

    @Test
    void aDroppedDatagramToAnUnreachablePeerCountsAsPeerUnreachable() {
        open(caps(false, false), 1 << 16, true, 3, true);
        socketA.failures.put(1, SendFailure.PEER_UNREACHABLE);
        socketA.failures.put(2, SendFailure.PEER_UNREACHABLE);
        sink.beginCycle();
        send(300, peerA, ENTROPY_A);
        sink.flush();
        assertThat(difference(new long[DriverCounter.values().length], sendCounters()))
            .containsOnly(entry(DriverCounter.SEND_PEER_UNREACHABLE, 1L), entry(DriverCounter.SEND_ERRORS, 1L));
    }

    @Test
    void aFullSocketIsWatchedForWritabilityUntilItsBatchIsEmptyAndAStalledFlushIsNoWorkMeanwhile() {
        open(caps(false, false), 1 << 16, true, 3, true);
        final List<String> watch = new ArrayList<>();
        sink.watchWritabilityWith(new WritabilityWatch() {
            @Override
            public void watchWritable(final UdpSocket socket) {
                watch.add("watch " + socket.localAddress().getPort());
            }

            @Override
            public void unwatchWritable(final UdpSocket socket) {
                watch.add("unwatch " + socket.localAddress().getPort());
            }
        });
        socketA.room = 1;
        sink.beginCycle();
        send(300, peerA, ENTROPY_A);
        send(300, peerA, ENTROPY_A);
        assertThat(sink.flush()).as("one datagram went").isOne();
        assertThat(watch).containsExactly("watch " + ENTROPY_A);

        sink.beginCycle();
        assertThat(sink.flush()).as("nothing moved: the watch wakes the thread, no need to spin").isZero();
        assertThat(watch).as("watched once").containsExactly("watch " + ENTROPY_A);

        socketA.room = -1;
        sink.beginCycle();
        assertThat(transport.wire).hasSize(2);
        assertThat(watch).containsExactly("watch " + ENTROPY_A, "unwatch " + ENTROPY_A);
    }

    @Test
    void withoutAWatchAStalledFlushCountsAsWorkSoTheThreadTriesAgainAtOnce() {
        open(caps(false, false), 1 << 16, true, 3, true);
        socketA.room = 0;
        sink.beginCycle();
        send(300, peerA, ENTROPY_A);
        assertThat(sink.flush()).isOne();
        sink.beginCycle();
        assertThat(sink.flush()).isOne();
    }

    @Test
    void closingStopsWatchingAFullSocket() {
        open(caps(false, false), 1 << 16, true, 3, true);
        final List<String> watch = new ArrayList<>();
        sink.watchWritabilityWith(new WritabilityWatch() {
            @Override
            public void watchWritable(final UdpSocket socket) {
                watch.add("watch");
            }

            @Override
            public void unwatchWritable(final UdpSocket socket) {
                watch.add("unwatch");
            }
        });
        socketA.room = 0;
        sink.beginCycle();
        send(300, peerA, ENTROPY_A);
        sink.flush();
        sink.close();
        assertThat(watch).containsExactly("watch", "unwatch");
    }

    /** @return every SEND_ counter by ordinal (0 for the others) */
    private long[] sendCounters() {
        final long[] values = new long[DriverCounter.values().length];
        for (final DriverCounter c : DriverCounter.values()) {
            if (c.name().startsWith("SEND_")) {
                values[c.ordinal()] = counters.get(c);
            }
        }
        return values;
    }

    private static java.util.Map<DriverCounter, Long> difference(final long[] before, final long[] after) {
        final java.util.Map<DriverCounter, Long> changed = new java.util.EnumMap<>(DriverCounter.class);
        for (final DriverCounter c : DriverCounter.values()) {
            if (after[c.ordinal()] != before[c.ordinal()]) {
                changed.put(c, after[c.ordinal()] - before[c.ordinal()]);
            }
        }
        return changed;
    }

    @Test
    void portUnreachableOfAnEarlierDatagramIsConsumedAndTheAddressedDatagramGoesOnceMore() {
        open(caps(false, false), 1 << 16, true, 3, true);
        socketA.failures.put(1, SendFailure.PEER_UNREACHABLE);
        sink.beginCycle();
        send(300, peerA, ENTROPY_A);
        sink.flush();
        assertThat(transport.wire).hasSize(1);
        assertThat(counters.get(DriverCounter.SEND_ERRORS)).isZero();

        // Refused twice in a row (attempts 3 and 4: the first cycle made two): the second refusal is about
        // this datagram.
        socketA.failures.put(3, SendFailure.PEER_UNREACHABLE);
        socketA.failures.put(4, SendFailure.PEER_UNREACHABLE);
        sink.beginCycle();
        send(300, peerA, ENTROPY_A);
        sink.flush();
        assertThat(transport.wire).hasSize(1);
        assertThat(counters.get(DriverCounter.SEND_ERRORS)).isOne();
    }

    @Test
    void aRefusedGsoMessageTurnsGsoOffButAFirewallRuleDoesNot() {
        open(caps(true, false), 1 << 16, true, 3, true);
        socketA.failures.put(1, SendFailure.NOT_PERMITTED);
        sink.beginCycle();
        for (int i = 0; i < 4; i++) {
            send(1000, peerA, ENTROPY_A);
        }
        sink.flush();
        assertThat(transport.wire).isEmpty();
        assertThat(counters.get(DriverCounter.SEND_ERRORS)).as("the whole GSO message, once").isOne();
        assertThat(sink.gsoEnabled()).isTrue();

        socketA.failures.put(2, SendFailure.OTHER);
        sink.beginCycle();
        for (int i = 0; i < 4; i++) {
            send(1000, peerA, ENTROPY_A);
        }
        sink.flush();
        assertThat(counters.get(DriverCounter.SEND_ERRORS)).isEqualTo(2);
        assertThat(sink.gsoEnabled()).isFalse();

        sink.beginCycle();
        for (int i = 0; i < 4; i++) {
            send(1000, peerA, ENTROPY_A);
        }
        sink.flush();
        assertThat(transport.wire).hasSize(4).noneMatch(MemoryUdpTransport.Sent::segmented);
    }

    @Test
    void aFailureReportedLaterTurnsGsoOffOnlyAfterAGsoMessageInTheSameCycle() {
        open(caps(true, false), 1 << 16, true, 3, true);
        sink.beginCycle();
        for (int i = 0; i < 4; i++) {
            send(1000, peerA, ENTROPY_A);
        }
        sink.flush();
        sink.sendFailed(SendFailure.OTHER); // after the flush: about something else
        assertThat(sink.gsoEnabled()).isTrue();

        sink.beginCycle();
        for (int i = 0; i < 4; i++) {
            send(1000, peerA, ENTROPY_A);
        }
        sink.commit(sink.claim(100, ENTROPY_B), 100, peerA, ENTROPY_B); // leaving A hands A's GSO message over
        sink.sendFailed(SendFailure.PEER_UNREACHABLE);
        assertThat(sink.gsoEnabled()).as("a dead peer says nothing about GSO").isTrue();
        sink.sendFailed(SendFailure.OTHER);
        assertThat(sink.gsoEnabled()).isFalse();
        sink.flush();
        assertThat(counters.get(DriverCounter.SEND_ERRORS)).isEqualTo(3);
    }

    @Test
    void anEntropySocketConnectsToItsFirstPeerAndStillAddressesOthers() {
        open(caps(false, true), 1 << 16, true, 3, true);
        sink.beginCycle();
        send(200, peerA, ENTROPY_A);
        send(200, peerB, ENTROPY_A);
        send(200, peerA, ENTROPY_A);
        sink.flush();
        assertThat(socketA.connectedTo).isEqualTo(hostA);
        assertThat(counters.get(DriverCounter.CONNECTED_SOCKETS)).isOne();
        assertThat(transport.wire.stream().map(MemoryUdpTransport.Sent::to)).containsExactly(hostA, hostB, hostA);
        assertThat(transport.wire.stream().map(MemoryUdpTransport.Sent::connected)).containsExactly(true, false, true);
    }
}
