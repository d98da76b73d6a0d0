// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.DatagramPacket;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.Arrays;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.metaroce.core.connection.CmConfig;
import org.metaroce.core.connection.CmEventType;
import org.metaroce.core.connection.ConnectParams;
import org.metaroce.core.connection.Connection;
import org.metaroce.core.connection.ConnectionState;
import org.metaroce.core.connection.ListenParams;
import org.metaroce.core.engine.EndpointConfig;
import org.metaroce.core.engine.EndpointCounter;
import org.metaroce.core.engine.QueuePair;
import org.metaroce.core.engine.QueuePairCapabilities;
import org.metaroce.core.verbs.AccessFlags;
import org.metaroce.core.verbs.PostStatus;
import org.metaroce.core.verbs.QpState;
import org.metaroce.core.verbs.SendFlags;
import org.metaroce.core.verbs.SendRequest;
import org.metaroce.core.verbs.WcStatus;
import org.metaroce.core.verbs.WorkCompletion;
import org.metaroce.core.verbs.WrOpcode;
import org.metaroce.core.wire.BaseHeader;
import org.metaroce.core.wire.DropReason;
import org.metaroce.core.wire.IntegrityCheck;
import org.metaroce.core.wire.Opcode;
import org.metaroce.core.wire.WireConstants;
import org.metaroce.core.wire.WireCounters;
import org.metaroce.netty.DriverCounter;
import org.metaroce.netty.ThreadingMode;

/**
 * While A WRITEs 16 MiB (64 WRITEs of 256 KiB over 4 paths) to B through a connection made by
 * the connection manager, a plain {@link DatagramSocket} sprays thousands of garbage datagrams at
 * B's endpoint port: random bytes, truncated headers, well-formed headers aimed at B's real queue
 * pair with a bad CRC, correctly sealed packets with a wrong version, headers whose Payload Length
 * disagrees with the datagram, and correctly sealed packets for a QPN that does not exist. The
 * transfer completes with every byte intact and no queue-pair error; B counts the garbage under
 * the expected drop reasons (MALFORMED = the wire counters' drops) and the sealed ones as
 * UNKNOWN_QPN.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class GarbageDuringTransferTest {
    static final int WRITES = 64;
    static final int WRITE_BYTES = 256 << 10;
    static final int REGION = WRITES * WRITE_BYTES;
    static final long SERVICE = 0x4D52_4F43_0000_0003L;
    /** Garbage datagrams to send at least (and before the transfer starts: {@link #BEFORE}). */
    static final int MIN_GARBAGE = 6000;
    static final int BEFORE = 500;
    /** Garbage the sprayer lets B lag behind before it waits a little (bounded) for B to catch up. */
    static final int WINDOW = 256;

    /** What the sprayer sends, round robin. */
    enum Kind {
        /** 24..1400 random bytes. */
        RANDOM,
        /** 0..23 bytes of a real header: shorter than the base header. */
        SHORT,
        /** A WRITE header for B's real QP from A's QPN, with payload, whose CRC is wrong. */
        BAD_CRC,
        /** A correctly sealed WRITE for B's QP with version 2..15. */
        WRONG_VERSION,
        /** A sealed WRITE whose Payload Length disagrees with the datagram's length. */
        LENGTH_MISMATCH,
        /** A correctly sealed, valid ACK for a QPN that does not exist on B (not malformed). */
        UNKNOWN_QPN
    }

    private UdpCmNode a;
    private UdpCmNode b;
    private Thread sprayerThread;
    private volatile boolean stop;
    /** Set after the test: the sprayer quits at once, minimum or not. */
    private volatile boolean abandon;

    @AfterEach
    void close() throws InterruptedException {
        stop = true;
        abandon = true;
        if (sprayerThread != null) {
            sprayerThread.join(5_000);
        }
        if (a != null) {
            a.close();
        }
        if (b != null) {
            b.close();
        }
    }

    /** Builds the garbage; one per sprayer thread. */
    static final class Garbage {
        final Random random = new Random(0x6A7BA6EL);
        final byte[] bytes = new byte[2048];
        final UnsafeBuffer buffer = new UnsafeBuffer(bytes);
        final BaseHeader header = new BaseHeader();
        final IntegrityCheck crc = new IntegrityCheck();
        final int qpnB;
        final int qpnA;
        final int missingQpn;

        Garbage(final int qpnB, final int qpnA) {
            this.qpnB = qpnB;
            this.qpnA = qpnA;
            int q = (qpnB ^ 0x5A_5A5A) & WireConstants.MAX_QPN;
            if (q == 0 || q == qpnB) {
                q = (qpnB + 77) & WireConstants.MAX_QPN;
            }
            missingQpn = q;
        }

        /** @return the length of a WRITE packet for B's QP written at 0, sealed, payload 1..2048-header */
        private int sealedWrite(final int payload) {
            Arrays.fill(bytes, (byte) 0);
            header.wrap(buffer, 0).initialize(Opcode.WRITE);
            header.destQpn(qpnB).sourceQpn(qpnA).psn(random.nextInt(1 << 24)).payloadLength(payload);
            for (int i = 0; i < payload; i++) {
                bytes[Opcode.WRITE.headerLength() + i] = (byte) random.nextInt();
            }
            return crc.seal(buffer, 0, Opcode.WRITE.headerLength() + payload);
        }

        /** @return the datagram's length; its bytes are in {@link #bytes} */
        int next(final Kind kind) {
            final int maxPayload = bytes.length - Opcode.WRITE.headerLength() - WireConstants.INTEGRITY_CHECK_LENGTH - 16;
            switch (kind) {
                case RANDOM -> {
                    final int length = 24 + random.nextInt(1400 - 24 + 1);
                    for (int i = 0; i < length; i++) {
                        bytes[i] = (byte) random.nextInt();
                    }
                    return length;
                }
                case SHORT -> {
                    sealedWrite(1 + random.nextInt(1000));
                    return random.nextInt(WireConstants.BASE_HEADER_LENGTH);
                }
                case BAD_CRC -> {
                    // Flip bits after the base header (extension headers, payload or the CRC itself):
                    // version, opcode and lengths stay valid, so only the CRC check can catch it.
                    final int length = sealedWrite(1 + random.nextInt(maxPayload));
                    final int at = WireConstants.BASE_HEADER_LENGTH
                        + random.nextInt(length - WireConstants.BASE_HEADER_LENGTH);
                    bytes[at] ^= (byte) (1 + random.nextInt(255));
                    return length;
                }
                case WRONG_VERSION -> {
                    final int length = sealedWrite(1 + random.nextInt(maxPayload));
                    header.version(2 + random.nextInt(14));
                    return length;
                }
                case LENGTH_MISMATCH -> {
                    // At least 32 bytes of payload: a datagram shortened by up to 16 is not TRUNCATED.
                    final int length = sealedWrite(32 + random.nextInt(maxPayload - 32));
                    final int delta = 1 + random.nextInt(16);
                    return random.nextBoolean() ? length + delta : length - delta;
                }
                case UNKNOWN_QPN -> {
                    Arrays.fill(bytes, 0, Opcode.ACK.headerLength() + 4, (byte) 0);
                    header.wrap(buffer, 0).initialize(Opcode.ACK);
                    header.destQpn(missingQpn).sourceQpn(qpnA).psn(random.nextInt(1 << 24)).payloadLength(0);
                    return crc.seal(buffer, 0, Opcode.ACK.headerLength());
                }
                default -> throw new IllegalArgumentException(kind.toString());
            }
        }
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(value = ThreadingMode.class, names = {"INVOKER", "DEDICATED"})
    void transferSurvivesGarbageAndGarbageIsCounted(final ThreadingMode mode) throws Exception {
        final EndpointConfig ec = new EndpointConfig().minRtoNs(TimeUnit.MILLISECONDS.toNanos(5));
        final CmConfig cc = new CmConfig();
        a = new UdpCmNode("A(writer)", mode, REGION, 4, 256, ec, cc, d -> { });
        b = new UdpCmNode("B(target)", mode, REGION, 4, 256, ec, cc, d -> { });
        final UdpCmNode[] both = {a, b};
        final QueuePairCapabilities caps = new QueuePairCapabilities(WRITES, 4, 1, 1, 16);
        final Connection[] serverConn = new Connection[1];
        b.onOwnerEvent = e -> {
            if (e.type() == CmEventType.CONNECT_REQUEST) {
                if (!b.cm.accept(e, null)) {
                    throw new AssertionError("accept failed");
                }
                serverConn[0] = e.connection();
            }
        };
        final int[] bPaths = b.device.entropyPorts();
        b.call(ep -> b.cm.listen(SERVICE, new ListenParams().resources(b.pd, b.sendCq, b.recvCq, caps)
            .accessFlags(AccessFlags.ALL).pathMtu(4096).paths(bPaths)));
        final int serverPeer = a.device.peerId(b.device.localAddress());
        final int[] aPaths = a.device.entropyPorts();
        final Connection conn = a.call(ep -> a.cm.connect(new ConnectParams().peer(serverPeer).serviceId(SERVICE)
            .resources(a.pd, a.sendCq, a.recvCq, caps).accessFlags(AccessFlags.ALL).pathMtu(4096).paths(aPaths)
            .timeoutNs(TimeUnit.MILLISECONDS.toNanos(5))));
        assertThat(UdpCmNode.pump(TimeUnit.SECONDS.toNanos(10), () -> a.count(CmEventType.ESTABLISHED) == 1
            && b.count(CmEventType.ESTABLISHED) == 1, both))
            .as(() -> "ESTABLISHED on both sides: " + a.events + " / " + b.events + UdpCmNode.describe(both)).isTrue();
        final int qpnA = conn.localQpn();
        final int qpnB = conn.remoteQpn();
        UdpCmNode.fill(a.buffer(), 0, REGION, 42);

        // The sprayer: a plain socket, garbage round robin, never more than WINDOW ahead of B for long.
        final WireCounters wire = b.device.endpoint().wireCounters();
        final AtomicLongArray sent = new AtomicLongArray(Kind.values().length);
        final AtomicReference<Throwable> sprayerFailure = new AtomicReference<>();
        final InetSocketAddress target = b.device.localAddress();
        sprayerThread = new Thread(() -> {
            final Garbage garbage = new Garbage(qpnB, qpnA);
            final Kind[] kinds = Kind.values();
            try (DatagramSocket socket = new DatagramSocket(0, InetAddress.getLoopbackAddress())) {
                final DatagramPacket packet = new DatagramPacket(garbage.bytes, 0, target);
                long total = 0;
                while (!abandon && (!stop || total < MIN_GARBAGE)) {
                    final Kind kind = kinds[(int) (total % kinds.length)];
                    packet.setData(garbage.bytes, 0, garbage.next(kind));
                    socket.send(packet);
                    sent.incrementAndGet(kind.ordinal());
                    total++;
                    final long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(20);
                    while (total - received(b) > WINDOW && System.nanoTime() - deadline < 0 && !abandon) {
                        LockSupport.parkNanos(20_000);
                    }
                }
            } catch (final Throwable t) {
                sprayerFailure.set(t);
            }
        }, "garbage-sprayer");
        sprayerThread.setDaemon(true);
        sprayerThread.start();

        assertThat(UdpCmNode.pump(TimeUnit.SECONDS.toNanos(10), () -> received(b) >= BEFORE, both))
            .as(() -> "garbage reaching B before the transfer" + UdpCmNode.describe(b)).isTrue();
        final long garbageAtStart = received(b);
        final long start = System.nanoTime();

        final QueuePair qp = conn.queuePair();
        final int rkey = b.mr.rkey();
        final long remote = b.address(0);
        a.call(ep -> {
            final SendRequest wr = new SendRequest(1);
            for (int i = 0; i < WRITES; i++) {
                final int status = qp.postSend(wr.clear().wrId(i).opcode(WrOpcode.RDMA_WRITE)
                    .sendFlags(SendFlags.SIGNALED).addSge(a.address((long) i * WRITE_BYTES), WRITE_BYTES, a.mr.lkey())
                    .remoteAddr(remote + (long) i * WRITE_BYTES).rkey(rkey));
                if (status != PostStatus.OK) {
                    throw new AssertionError("postSend " + i + ": " + status);
                }
            }
            return null;
        });
        final boolean done = UdpCmNode.pump(TimeUnit.SECONDS.toNanos(30), () -> a.sendCompletions.size() >= WRITES,
            both);
        final long transferMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        final long garbageDuring = received(b) - garbageAtStart;
        assertThat(done).as(() -> "64 WRITE completions, got " + a.sendCompletions.size() + UdpCmNode.describe(both))
            .isTrue();

        // Stop the sprayer once it has sent its minimum, and let B read what is left.
        // (B must keep reading meanwhile: in INVOKER mode this thread drives it.)
        stop = true;
        assertThat(UdpCmNode.pump(TimeUnit.SECONDS.toNanos(20), () -> !sprayerThread.isAlive(), both))
            .as("sprayer finished").isTrue();
        assertThat(sprayerFailure.get()).as("sprayer failure").isNull();
        long total = 0;
        for (int k = 0; k < sent.length(); k++) {
            total += sent.get(k);
        }
        final long sentTotal = total;
        UdpCmNode.pump(TimeUnit.SECONDS.toNanos(2), () -> received(b) >= sentTotal, both);

        // The data is intact and nothing failed.
        assertThat(a.sendCompletions).as(() -> "WRITE completions" + UdpCmNode.describe(both))
            .extracting(WorkCompletion::status).containsOnly(WcStatus.SUCCESS);
        b.call(ep -> {
            UdpCmNode.assertSameBytes("16 MiB written to B", a.buffer(), 0, b.buffer(), 0, REGION);
            return null;
        });
        for (final UdpCmNode n : both) {
            assertThat(n.device.endpoint().counters().get(EndpointCounter.QP_ERRORS)).as(n.name + " QP errors")
                .isZero();
            assertThat(n.device.counters().get(DriverCounter.ENGINE_ERRORS)).as(n.name + " engine errors").isZero();
            assertThat(n.events).as(n.name + " connection events").extracting(e -> e.type())
                .doesNotContain(CmEventType.DISCONNECTED, CmEventType.CONNECT_ERROR);
        }
        assertThat((QpState) a.call(ep -> qp.state())).isEqualTo(QpState.RTS);
        assertThat((QpState) b.call(ep -> serverConn[0].queuePair().state())).isEqualTo(QpState.RTS);
        assertThat((ConnectionState) b.call(ep -> serverConn[0].state())).isEqualTo(ConnectionState.ESTABLISHED);
        assertThat(b.device.endpoint().counters().get(EndpointCounter.PEER_MISMATCH)).isZero();

        // The garbage was counted, under the reasons its kind implies.
        final long random = sent.get(Kind.RANDOM.ordinal());
        final long malformedSent = sentTotal - sent.get(Kind.UNKNOWN_QPN.ordinal());
        final long malformed = b.device.endpoint().counters().get(EndpointCounter.MALFORMED);
        final long unknownQpn = b.device.endpoint().counters().get(EndpointCounter.UNKNOWN_QPN);
        final String counts = "sent " + sentString(sent) + ", B: MALFORMED=" + malformed + " UNKNOWN_QPN=" + unknownQpn
            + " " + wire;
        System.out.printf("GarbageDuringTransferTest %s: 16 MiB in %d ms with %d garbage datagrams received during "
            + "it; %s%n  A: %s%n  B: %s%n", mode, transferMs, garbageDuring, counts, a.device.endpoint().counters(),
            b.device.endpoint().counters());
        assertThat(sentTotal).as(counts).isGreaterThanOrEqualTo(MIN_GARBAGE);
        assertThat(garbageDuring).as("garbage received while the transfer ran; " + counts).isPositive();
        assertThat(malformed).as("MALFORMED = the wire counters' drops; " + counts).isEqualTo(wire.droppedTotal());
        assertThat(malformed).as("malformed garbage counted (at most what was sent); " + counts)
            .isPositive().isLessThanOrEqualTo(malformedSent);
        // UDP may drop datagrams when B's socket buffer is full; the sprayer's window keeps that rare.
        assertThat(malformed + unknownQpn).as("garbage received; " + counts).isGreaterThanOrEqualTo(sentTotal / 2);
        assertThat(unknownQpn).as(counts).isPositive().isLessThanOrEqualTo(sent.get(Kind.UNKNOWN_QPN.ordinal()));
        assertThat(wire.dropped(DropReason.TRUNCATED)).as(counts).isPositive()
            .isLessThanOrEqualTo(sent.get(Kind.SHORT.ordinal()) + random);
        assertThat(wire.dropped(DropReason.INTEGRITY_CHECK_FAILED)).as(counts).isPositive()
            .isLessThanOrEqualTo(sent.get(Kind.BAD_CRC.ordinal()) + random);
        assertThat(wire.dropped(DropReason.UNSUPPORTED_VERSION)).as(counts).isPositive()
            .isLessThanOrEqualTo(sent.get(Kind.WRONG_VERSION.ordinal()) + random);
        assertThat(wire.dropped(DropReason.LENGTH_MISMATCH)).as(counts).isPositive()
            .isLessThanOrEqualTo(sent.get(Kind.LENGTH_MISMATCH.ordinal()) + random);
        // Each deterministic kind reached B mostly intact (UDP loss aside) under its own reason.
        assertThat(wire.dropped(DropReason.TRUNCATED)).as(counts)
            .isGreaterThanOrEqualTo(sent.get(Kind.SHORT.ordinal()) / 2);
        assertThat(wire.dropped(DropReason.INTEGRITY_CHECK_FAILED)).as(counts)
            .isGreaterThanOrEqualTo(sent.get(Kind.BAD_CRC.ordinal()) / 2);
        assertThat(wire.dropped(DropReason.UNSUPPORTED_VERSION)).as(counts)
            .isGreaterThanOrEqualTo(sent.get(Kind.WRONG_VERSION.ordinal()) / 2);
        assertThat(wire.dropped(DropReason.LENGTH_MISMATCH)).as(counts)
            .isGreaterThanOrEqualTo(sent.get(Kind.LENGTH_MISMATCH.ordinal()) / 2);

        // And the connection still works after the storm: one more WRITE.
        final int more = a.sendCompletions.size();
        UdpCmNode.fill(a.buffer(), 0, WRITE_BYTES, 4242);
        assertThat((int) a.call(ep -> qp.postSend(new SendRequest(1).wrId(WRITES).opcode(WrOpcode.RDMA_WRITE)
            .sendFlags(SendFlags.SIGNALED).addSge(a.address(0), WRITE_BYTES, a.mr.lkey()).remoteAddr(remote)
            .rkey(rkey)))).isEqualTo(PostStatus.OK);
        assertThat(UdpCmNode.pump(TimeUnit.SECONDS.toNanos(10), () -> a.sendCompletions.size() > more, both)).isTrue();
        assertThat(a.sendCompletions.get(more).status()).isEqualTo(WcStatus.SUCCESS);
        b.call(ep -> {
            UdpCmNode.assertSameBytes("WRITE after the garbage", a.buffer(), 0, b.buffer(), 0, WRITE_BYTES);
            return null;
        });
    }

    /** @return garbage datagrams B has processed: wire drops plus packets for unknown QPNs */
    static long received(final UdpCmNode n) {
        return n.device.endpoint().wireCounters().droppedTotal()
            + n.device.endpoint().counters().get(EndpointCounter.UNKNOWN_QPN);
    }

    private static String sentString(final AtomicLongArray sent) {
        final StringBuilder sb = new StringBuilder("{");
        for (final Kind k : Kind.values()) {
            sb.append(k).append('=').append(sent.get(k.ordinal())).append(k.ordinal() + 1 < sent.length() ? ", " : "}");
        }
        return sb.toString();
    }
}
