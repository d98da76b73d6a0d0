// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.bench.engine;

import java.nio.ByteBuffer;
import java.util.EnumSet;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import org.agrona.BufferUtil;
import org.agrona.concurrent.UnsafeBuffer;
import org.metaroce.core.SeededRandomSource;
import org.metaroce.core.engine.Endpoint;
import org.metaroce.core.congestion.CongestionControlAlgorithm;
import org.metaroce.core.engine.EndpointConfig;
import org.metaroce.core.engine.EndpointCounter;
import org.metaroce.core.engine.EndpointCounters;
import org.metaroce.core.engine.QueuePair;
import org.metaroce.core.engine.QueuePairCapabilities;
import org.metaroce.core.verbs.AccessFlags;
import org.metaroce.core.verbs.CompletionQueue;
import org.metaroce.core.verbs.MemoryRegion;
import org.metaroce.core.verbs.PostStatus;
import org.metaroce.core.verbs.ProtectionDomain;
import org.metaroce.core.verbs.QpAttributes;
import org.metaroce.core.verbs.QpState;
import org.metaroce.core.verbs.SendFlags;
import org.metaroce.core.verbs.SendRequest;
import org.metaroce.core.verbs.WcOpcode;
import org.metaroce.core.verbs.WcStatus;
import org.metaroce.core.verbs.WorkCompletion;
import org.metaroce.core.verbs.WrOpcode;
import org.metaroce.core.wire.IntegrityCheck;
import org.metaroce.core.wire.Opcode;
import org.metaroce.bench.BenchmarkBase;
import org.openjdk.jmh.annotations.AuxCounters;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * Throughput of the queue-pair engine on one thread: requester and responder of two endpoints
 * joined by a {@link LoopbackPipe}, moving 64 KiB RDMA WRITEs (16 packets at a 4096-byte path
 * MTU) with every packet built, CRC-sealed, validated, placed in remote memory and acknowledged.
 *
 * <p>{@code write64k}: one invocation posts one signaled 64 KiB WRITE and runs pipe rounds (on a
 * virtual clock, {@value #ROUND_NS} ns per round) until the oldest outstanding WRITE's completion
 * is polled, so {@code outstanding} WRITEs stay queued on the send queue (a steady pipeline). A
 * completion other than SUCCESS, or out of order, throws {@link IllegalStateException}; at the end
 * of the trial the data and every error, drop and retransmission counter are checked, so the
 * benchmark cannot silently measure a broken transfer. Its secondary results are rates per second:
 * {@code dataPackets} (A to B), {@code ackPackets} (B to A), {@code packets} (both),
 * {@code payloadBytes} and {@code wireBytes} (UDP payload bytes in both directions).
 *
 * <p>With the defaults (batch 16) each pipe round carries exactly one WRITE's 16 data packets
 * from A to B and its ACK back, so one invocation is one round: 16 data packets + 1 ACK.
 *
 * <p>{@code baseline}: the floor any transport must pay for the same payload, one off-heap copy of
 * 64 KiB through working sets of the same size, so the engine is reported as a ratio measured in
 * the same run. {@code wireFloor}: the data-touching work of a CRC-protected datagram transport
 * with no protocol state (per packet: gather copy, CRC-32C seal, CRC-32C verify, placement copy);
 * {@code write64k} minus {@code wireFloor} is what the protocol bookkeeping costs.
 *
 * <p>Primary scores are operations (64 KiB messages) per second; ns/op = 1e9 / score, or run with
 * {@code -bm avgt -tu ns}. The Agrona export is prepended to the fork's JVM options, so
 * {@code -jvmArgsAppend} stays free for profilers. Run:
 * {@code java -jar metaroce-bench/target/metaroce-benchmarks.jar EngineThroughputBenchmark -prof gc}
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
public class EngineThroughputBenchmark extends BenchmarkBase {
    /** Bytes per WRITE. */
    public static final int MESSAGE_BYTES = 64 << 10;
    /** Path MTU (payload bytes per packet). */
    public static final int PATH_MTU = 4096;
    /** Data packets per WRITE. */
    public static final int PACKETS_PER_MESSAGE = MESSAGE_BYTES / PATH_MTU;
    /** Bytes of the registered memory region on each side. */
    public static final int REGION_BYTES = 4 << 20;
    /** WRITEs rotate over this many 64 KiB slots of the regions. */
    public static final int SLOTS = REGION_BYTES / MESSAGE_BYTES;
    /** Header bytes of a WRITE data packet (base, message and RDMA extended headers). */
    public static final int WRITE_HEADER_BYTES = Opcode.WRITE.headerLength();
    /** Virtual time per pipe round. */
    public static final long ROUND_NS = 1_000;

    private static final int PEER_A = 1;
    private static final int PEER_B = 2;
    private static final int FIRST_ENTROPY = 49152;
    /** Rounds in a row that move nothing before the benchmark declares the transfer stalled (1 s virtual). */
    private static final int MAX_IDLE_ROUNDS = 1_000_000;
    private static final EndpointCounter[] COUNTERS = EndpointCounter.values();
    private static final Set<EndpointCounter> EXPECTED_COUNTERS = EnumSet.of(EndpointCounter.PACKETS_IN,
        EndpointCounter.BYTES_IN, EndpointCounter.PACKETS_OUT, EndpointCounter.BYTES_OUT,
        EndpointCounter.REQUEST_PACKETS_OUT, EndpointCounter.ACKS_OUT, EndpointCounter.ACKS_IN);

    /** Two connected endpoints, the pipe between them, and the WRITE pipeline state. */
    @State(Scope.Thread)
    public static class Engine {
        /** WRITEs queued on the send queue at the start of each invocation, the new one included. */
        @Param({"8"})
        public int outstanding;

        /** Paths (entropy values) the QP sprays over. */
        @Param({"4"})
        public int paths;

        /** Packets one poll of one endpoint may commit (the driver's send batch). */
        @Param({"16"})
        public int batch;

        /**
         * CC_ALGORITHM of both QPs (with the capability it needs negotiated); FIXED by default so the
         * recorded results stay comparable. {@code -p congestionControl=DEFAULT,DCQCN,RECEIVER_CREDIT}
         * checks that every algorithm's callbacks keep the data path allocation-free.
         */
        @Param({"FIXED"})
        public String congestionControl;

        Endpoint endpointA;
        Endpoint endpointB;
        QueuePair qpA;
        QueuePair qpB;
        CompletionQueue sendCqA;
        CompletionQueue recvCqB;
        MemoryRegion mrA;
        MemoryRegion mrB;
        LoopbackPipe pipe;
        private SendRequest[] writes;
        private final WorkCompletion[] completions = {new WorkCompletion()};
        private long clockNs = 1_000_000;
        private long posted;
        private long completed;
        private long lastAToB;
        private long lastBToA;
        private long lastBytes;

        @Setup(Level.Trial)
        public void setUp() {
            if (outstanding < 1 || outstanding > 256) {
                throw new IllegalArgumentException("outstanding must be in 1..256, got " + outstanding);
            }
            final EndpointConfig configA = new EndpointConfig();
            final EndpointConfig configB = new EndpointConfig();
            endpointA = new Endpoint(configA, new SeededRandomSource(0xA));
            endpointB = new Endpoint(configB, new SeededRandomSource(0xB));
            final QueuePairCapabilities caps = new QueuePairCapabilities(256, 16, 1, 1, 1);

            final ProtectionDomain pdA = endpointA.allocateProtectionDomain();
            sendCqA = endpointA.createCompletionQueue(1024);
            final CompletionQueue recvCqA = endpointA.createCompletionQueue(64);
            qpA = endpointA.createQueuePair(pdA, sendCqA, recvCqA, caps);
            mrA = pdA.registerMemory(BufferUtil.allocateDirectAligned(REGION_BYTES, 4096), AccessFlags.ALL);

            final ProtectionDomain pdB = endpointB.allocateProtectionDomain();
            final CompletionQueue sendCqB = endpointB.createCompletionQueue(64);
            recvCqB = endpointB.createCompletionQueue(64);
            qpB = endpointB.createQueuePair(pdB, sendCqB, recvCqB, caps);
            mrB = pdB.registerMemory(BufferUtil.allocateDirectAligned(REGION_BYTES, 4096), AccessFlags.ALL);

            final int[] entropies = new int[paths];
            for (int i = 0; i < paths; i++) {
                entropies[i] = FIRST_ENTROPY + i;
            }
            final int psnA = 0x00FF_FF00;
            final int psnB = 0x0000_1000;
            final CongestionControlAlgorithm cc = CongestionControlAlgorithm.valueOf(congestionControl);
            bringUp(qpA, qpB.qpn(), PEER_B, entropies, psnB, psnA, cc);
            bringUp(qpB, qpA.qpn(), PEER_A, entropies, psnA, psnB, cc);
            pipe = new LoopbackPipe(endpointA, PEER_A, endpointB, PEER_B, LoopbackPipe.DEFAULT_SINK_BYTES, batch);

            final UnsafeBuffer source = mrA.buffer();
            for (int i = 0; i < REGION_BYTES; i += 8) {
                source.putLong(i, 0x9E37_79B9_7F4A_7C15L * (i + 1));
            }
            writes = new SendRequest[SLOTS];
            for (int slot = 0; slot < SLOTS; slot++) {
                writes[slot] = new SendRequest(1).opcode(WrOpcode.RDMA_WRITE).sendFlags(SendFlags.SIGNALED)
                    .addSge(mrA.address() + (long) slot * MESSAGE_BYTES, MESSAGE_BYTES, mrA.lkey())
                    .remoteAddr(mrB.address() + (long) slot * MESSAGE_BYTES).rkey(mrB.rkey());
            }

            // Self-check: one WRITE into every slot, then B's region must equal A's byte for byte.
            for (int slot = 0; slot < SLOTS; slot++) {
                post();
                reapOne();
            }
            verifyRegions();
            // Printed here, outside any measured iteration: printing from a forked JMH VM allocates.
            System.out.println(pipe.appendTo(new StringBuilder(256).append("\n[engine] self-check: ").append(SLOTS)
                .append(" WRITEs of ").append(MESSAGE_BYTES).append(" B verified byte for byte; ")));
            // Fill the pipeline: from now on each invocation posts one and reaps one.
            for (int i = 1; i < outstanding; i++) {
                post();
            }
            lastAToB = pipe.packetsAToB();
            lastBToA = pipe.packetsBToA();
            lastBytes = pipe.bytesAToB() + pipe.bytesBToA();
        }

        private static void bringUp(final QueuePair qp, final int destQpn, final int remotePeer, final int[] entropies,
                                    final int rqPsn, final int sqPsn, final CongestionControlAlgorithm cc) {
            qp.modify(QpState.INIT, new QpAttributes().port(1).accessFlags(AccessFlags.ALL));
            qp.modify(QpState.RTR, new QpAttributes().pathMtu(PATH_MTU).destQpn(destQpn).rqPsn(rqPsn)
                .maxDestRdAtomic(16).minRnrTimerNs(20_000).paths(entropies).remotePeer(remotePeer)
                .capabilities(cc.requiredCapability()));
            qp.modify(QpState.RTS, new QpAttributes().sqPsn(sqPsn).timeoutNs(1_000_000).retryCount(7)
                .rnrRetry(7).maxRdAtomic(16).ccAlgorithm(cc));
        }

        private void post() {
            final SendRequest wr = writes[(int) (posted & (SLOTS - 1))].wrId(posted);
            final int status = qpA.postSend(wr);
            if (status != PostStatus.OK) {
                throw new IllegalStateException("postSend of WRITE " + posted + " failed: "
                    + PostStatus.describe(status) + "; " + qpA + ' ' + endpointA.counters());
            }
            posted++;
        }

        /** Runs pipe rounds until the oldest outstanding WRITE's completion is polled, and checks it. */
        private void reapOne() {
            final WorkCompletion[] wc = completions;
            int idleRounds = 0;
            while (sendCqA.poll(wc, 1) == 0) {
                clockNs += ROUND_NS;
                if (pipe.pumpOnce(clockNs) != 0) {
                    idleRounds = 0;
                } else if (++idleRounds > MAX_IDLE_ROUNDS) {
                    throw new IllegalStateException("no completion for WRITE " + completed + " after "
                        + MAX_IDLE_ROUNDS + " idle rounds; " + qpA + ' ' + endpointA.counters() + ' '
                        + endpointB.counters() + ' ' + pipe);
                }
            }
            final WorkCompletion c = wc[0];
            if (c.status() != WcStatus.SUCCESS) {
                throw new IllegalStateException("RDMA WRITE " + c.wrId() + " completed with status " + c.status()
                    + "; " + c + ' ' + endpointA.counters() + ' ' + endpointB.counters());
            }
            if (c.wrId() != completed || c.opcode() != WcOpcode.RDMA_WRITE || c.byteLen() != MESSAGE_BYTES) {
                throw new IllegalStateException("expected the completion of RDMA WRITE " + completed + " of "
                    + MESSAGE_BYTES + " bytes, got " + c);
            }
            completed++;
        }

        /** The benchmark operation: post one WRITE, reap the oldest one. */
        long writeOne(final Traffic traffic) {
            post();
            reapOne();
            final long aToB = pipe.packetsAToB();
            final long bToA = pipe.packetsBToA();
            final long bytes = pipe.bytesAToB() + pipe.bytesBToA();
            traffic.dataPackets += aToB - lastAToB;
            traffic.ackPackets += bToA - lastBToA;
            traffic.packets += (aToB - lastAToB) + (bToA - lastBToA);
            traffic.wireBytes += bytes - lastBytes;
            traffic.payloadBytes += MESSAGE_BYTES;
            lastAToB = aToB;
            lastBToA = bToA;
            lastBytes = bytes;
            return completed;
        }

        private void verifyRegions() {
            final UnsafeBuffer x = mrA.buffer();
            final UnsafeBuffer y = mrB.buffer();
            for (int i = 0; i < REGION_BYTES; i += 8) {
                if (x.getLong(i) != y.getLong(i)) {
                    throw new IllegalStateException("remote memory differs from the source at byte offset " + i
                        + ": WRITE placed wrong data");
                }
            }
        }

        /**
         * Fails the trial if anything went wrong; allocation-free when all is well, because it runs
         * inside the last measured iteration.
         */
        @TearDown(Level.Trial)
        public void checkNothingWentWrong() {
            verifyRegions();
            final StringBuilder problems = new StringBuilder(0);
            check(problems, "A", endpointA.counters());
            check(problems, "B", endpointB.counters());
            if (qpA.state() != QpState.RTS || qpB.state() != QpState.RTS) {
                problems.append(" queue pairs left RTS: ").append(qpA).append(' ').append(qpB);
            }
            if (pipe.misrouted() != 0) {
                problems.append(" misrouted packets: ").append(pipe.misrouted());
            }
            if (problems.length() > 0) {
                throw new IllegalStateException("the benchmark measured a faulty transfer:" + problems
                    + "\nA: " + endpointA.counters() + "\nB: " + endpointB.counters());
            }
        }

        /**
         * Over a lossless, in-order pipe, only the traffic counters below may move; every other
         * counter (drops, retransmissions, timeouts, NACKs, duplicates, errors) must stay 0.
         */
        private static void check(final StringBuilder problems, final String side, final EndpointCounters c) {
            for (final EndpointCounter counter : COUNTERS) {
                if (!EXPECTED_COUNTERS.contains(counter) && c.get(counter) != 0) {
                    problems.append(' ').append(side).append('.').append(counter.name()).append('=')
                        .append(c.get(counter));
                }
            }
        }
    }

    /**
     * Secondary results of {@code write64k}, reported as rates per second: packets in each direction,
     * payload and UDP bytes.
     */
    @State(Scope.Thread)
    @AuxCounters(AuxCounters.Type.OPERATIONS)
    public static class Traffic {
        /** Data packets A to B. */
        public long dataPackets;
        /** Acknowledgements B to A. */
        public long ackPackets;
        /** Packets in both directions. */
        public long packets;
        /** Application bytes written. */
        public long payloadBytes;
        /** UDP payload bytes in both directions (headers and integrity checks included). */
        public long wireBytes;

        @Setup(Level.Iteration)
        public void reset() {
            dataPackets = 0;
            ackPackets = 0;
            packets = 0;
            payloadBytes = 0;
            wireBytes = 0;
        }
    }

    /** Two off-heap regions of the same size as the engine's, for the baselines. */
    @State(Scope.Thread)
    public static class Copy {
        UnsafeBuffer source;
        UnsafeBuffer target;
        /** Packet buffer for {@code wireFloor}, direct-ByteBuffer backed like the pipe's sinks. */
        UnsafeBuffer packets;
        final IntegrityCheck crc = new IntegrityCheck();
        private int next;

        @Setup(Level.Trial)
        public void setUp() {
            final ByteBuffer s = BufferUtil.allocateDirectAligned(REGION_BYTES, 4096);
            source = new UnsafeBuffer(s);
            target = new UnsafeBuffer(BufferUtil.allocateDirectAligned(REGION_BYTES, 4096));
            packets = new UnsafeBuffer(BufferUtil.allocateDirectAligned(LoopbackPipe.DEFAULT_SINK_BYTES, 64));
            for (int i = 0; i < REGION_BYTES; i += 8) {
                source.putLong(i, 0x9E37_79B9_7F4A_7C15L * (i + 1));
            }
        }
    }

    /** Secondary result of the baselines: payload bytes moved per second. */
    @State(Scope.Thread)
    @AuxCounters(AuxCounters.Type.OPERATIONS)
    public static class Copied {
        /** Application bytes copied. */
        public long payloadBytes;

        @Setup(Level.Iteration)
        public void reset() {
            payloadBytes = 0;
        }
    }

    /** Post one 64 KiB RDMA WRITE and run the engine until the oldest outstanding one completes. */
    @Benchmark
    public long write64k(final Engine engine, final Traffic traffic) {
        return engine.writeOne(traffic);
    }

    /** The floor: copy the same 64 KiB once, off-heap to off-heap, rotating over the same slots. */
    @Benchmark
    public int baseline(final Copy copy, final Copied copied) {
        final int offset = (copy.next++ & (SLOTS - 1)) * MESSAGE_BYTES;
        copy.target.putBytes(offset, copy.source, offset, MESSAGE_BYTES);
        copied.payloadBytes += MESSAGE_BYTES;
        return copy.target.getInt(offset + MESSAGE_BYTES - 4);
    }

    /**
     * The data-touching work of a CRC-protected datagram transport for the same payload, with no
     * protocol state: for each of the 16 packets, gather 4 KiB from the source region into a
     * packet buffer (a direct ByteBuffer, as the pipe's sinks), seal it with the engine's CRC-32C,
     * verify the CRC, and place the payload in the target region. {@code write64k} minus this is
     * the cost of the protocol bookkeeping (headers, scoreboard, window, ACKs, completions).
     */
    @Benchmark
    public int wireFloor(final Copy copy, final Copied copied) {
        final int offset = (copy.next++ & (SLOTS - 1)) * MESSAGE_BYTES;
        final UnsafeBuffer packets = copy.packets;
        final IntegrityCheck crc = copy.crc;
        int position = 0;
        for (int k = 0; k < PACKETS_PER_MESSAGE; k++) {
            final int at = offset + k * PATH_MTU;
            packets.putBytes(position + WRITE_HEADER_BYTES, copy.source, at, PATH_MTU);
            final int length = crc.seal(packets, position, WRITE_HEADER_BYTES + PATH_MTU);
            if (!crc.verify(packets, position, length)) {
                throw new IllegalStateException("CRC mismatch in packet " + k);
            }
            copy.target.putBytes(at, packets, position + WRITE_HEADER_BYTES, PATH_MTU);
            position += (length + 7) & ~7;
        }
        copied.payloadBytes += MESSAGE_BYTES;
        return copy.target.getInt(offset + MESSAGE_BYTES - 4);
    }
}
