// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.bench.engine;

import java.util.EnumSet;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import org.agrona.BufferUtil;
import org.agrona.concurrent.UnsafeBuffer;
import org.metaroce.bench.BenchmarkBase;
import org.metaroce.core.SeededRandomSource;
import org.metaroce.core.engine.Endpoint;
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
import org.metaroce.core.verbs.RecvRequest;
import org.metaroce.core.verbs.SendFlags;
import org.metaroce.core.verbs.SendRequest;
import org.metaroce.core.verbs.WcOpcode;
import org.metaroce.core.verbs.WcStatus;
import org.metaroce.core.verbs.WorkCompletion;
import org.metaroce.core.verbs.WrOpcode;
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
 * The protocol's own cost of a request-reply round trip, without sockets: two endpoints joined by a
 * {@link LoopbackPipe} on one thread, A sends a 64-byte SEND, B answers each with a 64-byte SEND
 * posted on the request's receive completion (as {@code send_lat}'s echo does), and one invocation
 * is one round trip: both data packets and their ACKs built, CRC-sealed, validated, delivered and
 * completed. Over UDP the same round trip also pays two {@code sendto} and the polling; this is
 * the part above that floor (see docs/benchmarks/loopback.md).
 *
 * <p>Every echo's first long carries the round number and is checked, every completion must be
 * SUCCESS, and at the end of the trial no error, drop or retransmission counter may have moved.
 * Run: {@code java -jar metaroce-bench/target/metaroce-benchmarks.jar EnginePingPong -prof gc}
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class EnginePingPongBenchmark extends BenchmarkBase {
    /** Bytes of each message. */
    public static final int MESSAGE_BYTES = 64;
    /** Receives each side keeps posted (a ring of buffers). */
    public static final int RECEIVES = 16;
    /** Virtual time per pipe round. */
    public static final long ROUND_NS = 1_000;

    private static final int PEER_A = 1;
    private static final int PEER_B = 2;
    private static final int FIRST_ENTROPY = 49152;
    private static final int REGION_BYTES = 1 << 20;
    private static final int SEND_AREA = RECEIVES * MESSAGE_BYTES;
    private static final int MAX_IDLE_ROUNDS = 1_000_000;
    private static final EndpointCounter[] COUNTERS = EndpointCounter.values();
    private static final Set<EndpointCounter> EXPECTED_COUNTERS = EnumSet.of(EndpointCounter.PACKETS_IN,
        EndpointCounter.BYTES_IN, EndpointCounter.PACKETS_OUT, EndpointCounter.BYTES_OUT,
        EndpointCounter.REQUEST_PACKETS_OUT, EndpointCounter.ACKS_OUT, EndpointCounter.ACKS_IN);

    /** One side: endpoint, queue pair, queues and memory. */
    static final class Side {
        final Endpoint endpoint;
        final QueuePair qp;
        final CompletionQueue sendCq;
        final CompletionQueue recvCq;
        final MemoryRegion mr;
        final SendRequest send = new SendRequest(1);
        final RecvRequest recv = new RecvRequest(1);
        long recvPosted;

        Side(final long seed) {
            endpoint = new Endpoint(new EndpointConfig(), new SeededRandomSource(seed));
            final ProtectionDomain pd = endpoint.allocateProtectionDomain();
            sendCq = endpoint.createCompletionQueue(256);
            recvCq = endpoint.createCompletionQueue(256);
            qp = endpoint.createQueuePair(pd, sendCq, recvCq, new QueuePairCapabilities(64, RECEIVES, 1, 1, 1));
            mr = pd.registerMemory(BufferUtil.allocateDirectAligned(REGION_BYTES, 4096), AccessFlags.ALL);
        }

        void postRecv() {
            final long slot = recvPosted % RECEIVES;
            recv.clear().wrId(recvPosted).addSge(mr.address() + slot * MESSAGE_BYTES, MESSAGE_BYTES, mr.lkey());
            final int status = qp.postRecv(recv);
            if (status != PostStatus.OK) {
                throw new IllegalStateException("postRecv failed: " + PostStatus.describe(status));
            }
            recvPosted++;
        }

        void postSend(final long round) {
            final long at = SEND_AREA + (round % RECEIVES) * MESSAGE_BYTES;
            mr.buffer().putLong((int) at, round);
            send.clear().wrId(round).opcode(WrOpcode.SEND).sendFlags(SendFlags.SIGNALED)
                .addSge(mr.address() + at, MESSAGE_BYTES, mr.lkey());
            final int status = qp.postSend(send);
            if (status != PostStatus.OK) {
                throw new IllegalStateException("postSend failed: " + PostStatus.describe(status) + "; " + qp);
            }
        }
    }

    /** Two connected endpoints and the pipe between them. */
    @State(Scope.Thread)
    public static class Pair {
        /** Paths (entropy values) each QP sprays over. */
        @Param({"4"})
        public int paths;

        Side a;
        Side b;
        LoopbackPipe pipe;
        private final WorkCompletion[] wc = {new WorkCompletion()};
        private long clockNs = 1_000_000;
        private long round;

        @Setup(Level.Trial)
        public void setUp() {
            a = new Side(0xA);
            b = new Side(0xB);
            final int[] entropies = new int[paths];
            for (int i = 0; i < paths; i++) {
                entropies[i] = FIRST_ENTROPY + i;
            }
            bringUp(a.qp, b.qp.qpn(), PEER_B, entropies, 0x0000_1000, 0x00FF_FF00);
            bringUp(b.qp, a.qp.qpn(), PEER_A, entropies, 0x00FF_FF00, 0x0000_1000);
            pipe = new LoopbackPipe(a.endpoint, PEER_A, b.endpoint, PEER_B);
            for (int i = 0; i < RECEIVES; i++) {
                a.postRecv();
                b.postRecv();
            }
        }

        private static void bringUp(final QueuePair qp, final int destQpn, final int remotePeer, final int[] entropies,
                                    final int rqPsn, final int sqPsn) {
            qp.modify(QpState.INIT, new QpAttributes().port(1).accessFlags(AccessFlags.ALL));
            qp.modify(QpState.RTR, new QpAttributes().pathMtu(4096).destQpn(destQpn).rqPsn(rqPsn)
                .maxDestRdAtomic(16).minRnrTimerNs(20_000).paths(entropies).remotePeer(remotePeer));
            qp.modify(QpState.RTS, new QpAttributes().sqPsn(sqPsn).timeoutNs(1_000_000).retryCount(7)
                .rnrRetry(7).maxRdAtomic(16));
        }

        /** One round trip: A's request, B's echo posted on its arrival, the echo's arrival at A. */
        long roundTrip() {
            a.postSend(round);
            awaitReceive(b);
            b.postSend(round);
            awaitReceive(a);
            round++;
            return round;
        }

        /** Pumps until {@code side} receives the current round's message; checks it and re-posts. */
        private void awaitReceive(final Side side) {
            int idle = 0;
            while (side.recvCq.poll(wc, 1) == 0) {
                clockNs += ROUND_NS;
                if (pipe.pumpOnce(clockNs) != 0) {
                    idle = 0;
                } else if (++idle > MAX_IDLE_ROUNDS) {
                    throw new IllegalStateException("round " + round + " stalled; " + a.endpoint.counters() + ' '
                        + b.endpoint.counters());
                }
            }
            final WorkCompletion c = wc[0];
            if (c.status() != WcStatus.SUCCESS || c.opcode() != WcOpcode.RECV || c.byteLen() != MESSAGE_BYTES) {
                throw new IllegalStateException("expected a " + MESSAGE_BYTES + "-byte RECV of round " + round
                    + ", got " + c);
            }
            final UnsafeBuffer memory = side.mr.buffer();
            final long got = memory.getLong((int) ((c.wrId() % RECEIVES) * MESSAGE_BYTES));
            if (got != round) {
                throw new IllegalStateException("round " + round + " received the message of round " + got);
            }
            side.postRecv();
            // Send completions come with the ACKs; reap them so the send queue never fills.
            drainSends(a);
            drainSends(b);
        }

        private void drainSends(final Side side) {
            while (side.sendCq.poll(wc, 1) > 0) {
                if (wc[0].status() != WcStatus.SUCCESS) {
                    throw new IllegalStateException("SEND completed with " + wc[0].status() + ": " + wc[0]);
                }
            }
        }

        /** Fails the trial if any error, drop or retransmission counter moved. */
        @TearDown(Level.Trial)
        public void checkNothingWentWrong() {
            final StringBuilder problems = new StringBuilder(0);
            check(problems, "A", a.endpoint.counters());
            check(problems, "B", b.endpoint.counters());
            if (pipe.misrouted() != 0) {
                problems.append(" misrouted packets: ").append(pipe.misrouted());
            }
            if (problems.length() > 0) {
                throw new IllegalStateException("the benchmark measured a faulty exchange:" + problems);
            }
        }

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
     * @param pair the two endpoints
     * @return the round number (consumed by JMH)
     */
    @Benchmark
    public long sendPingPong(final Pair pair) {
        return pair.roundTrip();
    }
}
