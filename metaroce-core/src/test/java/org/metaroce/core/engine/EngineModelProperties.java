// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;

import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.EdgeCasesMode;
import net.jqwik.api.Example;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.RandomDistribution;
import net.jqwik.api.Tuple;
import net.jqwik.api.statistics.Statistics;
import org.metaroce.core.testwire.LinkProfile;
import org.metaroce.core.testwire.PacketFilter;
import org.metaroce.core.testwire.PacketMatcher;
import org.metaroce.core.verbs.PostStatus;
import org.metaroce.core.verbs.QpState;
import org.metaroce.core.verbs.RecvRequest;
import org.metaroce.core.verbs.SendFlags;
import org.metaroce.core.verbs.SendRequest;
import org.metaroce.core.verbs.WcOpcode;
import org.metaroce.core.verbs.WcStatus;
import org.metaroce.core.verbs.WorkCompletion;
import org.metaroce.core.verbs.WrOpcode;
import org.metaroce.core.wire.Opcode;

/**
 * Model-based property of the queue-pair engine: a random sequence of operations over two or three
 * queue pairs between two endpoints, on a wire with a random fault profile and a random path MTU,
 * must leave exactly the memory and produce exactly the completions that a fault-free model in
 * plain Java computes by applying the operations one after another.
 *
 * <p>Operations on different queue pairs are not ordered with respect to each other, so every
 * operation gets its own bytes (sources, destinations, receive buffers, atomic targets and result
 * slots never overlap); the only shared bytes are one 64-bit counter per node that "shared"
 * atomics hit from any queue pair. For those the model checks only what every interleaving
 * agrees on: FETCH_ADD(1)s add exactly once each (final value) and return distinct originals,
 * and never-matching CMP_SWAPs return a value the counter held at some point and swap nothing.
 *
 * <p>Besides the final state, every completion is checked when it is polled: a send completion
 * implies that its WR and all earlier WRs of its QP have taken effect. A second property adds the
 * ordering guarantees of one queue pair (READ after WRITE, FENCE after READ, atomics in PSN order,
 * receive completion after earlier WRITEs), and three examples reproduce those guarantees with a
 * single dropped packet. {@link LossySoakTest} runs the same model over long fixed-seed runs.
 *
 * <p>The wire seed is printed by {@link MultiQpFixture}; jqwik prints its own seed and the
 * shrunk scenario on failure, and the failure message lists the planned operations with their
 * offsets and both endpoints' counters.
 */
class EngineModelProperties {
    private static final ByteOrder HOST = ByteOrder.nativeOrder();
    private static final int MAX_DATA_LENGTH = 200 * 1024;
    private static final long RECV_WR_ID_BASE = 1_000_000;
    /** Offset of each node's shared atomic counter; per-operation memory starts after it. */
    private static final int COUNTER_OFFSET = 0;
    private static final int FIRST_FREE_OFFSET = 64;

    enum Kind {
        SEND(WrOpcode.SEND), SEND_WITH_IMM(WrOpcode.SEND_WITH_IMM), RDMA_WRITE(WrOpcode.RDMA_WRITE),
        RDMA_WRITE_WITH_IMM(WrOpcode.RDMA_WRITE_WITH_IMM), RDMA_READ(WrOpcode.RDMA_READ),
        ATOMIC_FETCH_ADD(WrOpcode.ATOMIC_FETCH_ADD), ATOMIC_CMP_SWAP(WrOpcode.ATOMIC_CMP_SWAP);

        final WrOpcode wr;

        Kind(final WrOpcode wr) {
            this.wr = wr;
        }

        boolean isAtomic() {
            return this == ATOMIC_FETCH_ADD || this == ATOMIC_CMP_SWAP;
        }

        boolean consumesReceive() {
            return this == SEND || this == SEND_WITH_IMM || this == RDMA_WRITE_WITH_IMM;
        }

        boolean hasImm() {
            return this == SEND_WITH_IMM || this == RDMA_WRITE_WITH_IMM;
        }

        boolean mayBeInline() {
            return this == SEND || this == SEND_WITH_IMM || this == RDMA_WRITE || this == RDMA_WRITE_WITH_IMM;
        }

        WcOpcode sendWcOpcode() {
            return SendQueue.wcOpcode(wr);
        }
    }

    /** A named link profile, applied to both directions. */
    record Fault(String kind, LinkProfile profile) {
        @Override
        public String toString() {
            return kind + ' ' + profile;
        }
    }

    /**
     * One generated operation. {@code qp} is taken modulo the scenario's QP count; {@code fromA}
     * says which node is the requester; {@code shared} puts an atomic on its node's shared counter
     * and, in the ordering property, makes a READ read back the latest earlier WRITE of its QP and
     * a WRITE or SEND send (FENCEd) what the latest earlier READ fetched; {@code pauseNs} runs the
     * wire before posting; {@code entropy} seeds the small choices (SGE splits, gaps between
     * buffers, receive slack, immediate data, atomic operands, INLINE).
     */
    record OpSpec(int qp, boolean fromA, Kind kind, int length, boolean signaled, boolean shared, int pauseNs,
                  long entropy) {
    }

    record Scenario(long seed, int mtu, Fault fault, int qpCount, boolean lateRecvs, List<OpSpec> ops) {
    }

    /** Bytes [offset, offset + length) of one node's region. */
    record Piece(long offset, int length) {
    }

    /** What one completion says, in a form that compares by value. */
    record Wc(long wrId, WcStatus status, WcOpcode opcode, int byteLen, int immData, boolean withImm, int qpNum,
              int srcQp) {
        static Wc of(final WorkCompletion wc) {
            return new Wc(wc.wrId(), wc.status(), wc.opcode(), wc.byteLen(), wc.immData(),
                (wc.wcFlags() & WorkCompletion.WC_WITH_IMM) != 0, wc.qpNum(), wc.srcQp());
        }
    }

    /** An operation with its concrete memory layout and operands. */
    static final class PlannedOp {
        int index;
        OpSpec spec;
        int qp;
        boolean fromA;
        Kind kind;
        int length;
        boolean signaled;
        boolean inline;
        boolean shared;
        int pauseNs;
        /** Requester SGEs: source (SEND, WRITE), destination (READ) or the 8-byte result slot. */
        final List<Piece> local = new ArrayList<>();
        /** Responder bytes: WRITE destination, READ source or atomic target. */
        long remote;
        /** Responder receive SGEs for SEND, SEND_WITH_IMM and WRITE_WITH_IMM. */
        final List<Piece> recv = new ArrayList<>();
        int imm;
        long compareAdd;
        long swap;
        long sendWrId;
        long recvWrId;
        /** The earlier operation of the same QP whose result this one reads, or -1. */
        int dependsOn = -1;
        /** Posted with FENCE (it sends what an earlier READ fetched). */
        boolean fence;
        /** Whether its effects have been seen in memory already (checked once, when first implied). */
        boolean requesterEffectsSeen;
        boolean responderEffectsSeen;

        @Override
        public String toString() {
            return "#" + index + " qp" + qp + (fromA ? " A->B " : " B->A ") + kind + " len=" + length
                + (signaled ? " signaled" : "") + (inline ? " inline" : "") + (fence ? " fence" : "")
                + (shared ? " shared" : "") + (dependsOn >= 0 ? " dependsOn=#" + dependsOn : "")
                + " local=" + local + " remote=" + remote + " recv=" + recv;
        }
    }

    /** Hands out disjoint byte ranges of one node's region, with random gaps between them. */
    static final class Bump {
        long next = FIRST_FREE_OFFSET;

        long take(final int length, final int align, final SplittableRandom r) {
            next += r.nextInt(0, 129);
            next = (next + align - 1) / align * align;
            final long offset = next;
            next += length;
            return offset;
        }
    }

    // ------------------------------------------------------------------ generators

    @Provide
    Arbitrary<Scenario> scenarios() {
        final Arbitrary<OpSpec> op = Combinators.combine(
            Arbitraries.integers().between(0, 2),
            Arbitraries.of(true, false),
            Arbitraries.of(Kind.class),
            Arbitraries.frequencyOf(
                Tuple.of(4, uniform(0, 64)),
                Tuple.of(4, uniform(65, 4096)),
                Tuple.of(3, uniform(4097, 32 * 1024)),
                Tuple.of(1, uniform(32 * 1024 + 1, MAX_DATA_LENGTH))),
            Arbitraries.of(true, false),
            Arbitraries.of(true, false),
            Arbitraries.frequencyOf(Tuple.of(7, Arbitraries.just(0)),
                Tuple.of(3, uniform(1, 50_000))),
            Arbitraries.longs()
        ).as(OpSpec::new);
        return Combinators.combine(
            Arbitraries.longs(),
            Arbitraries.of(256, 512, 1024, 2048, 4096),
            faults(),
            Arbitraries.integers().between(2, 3),
            Arbitraries.frequencyOf(Tuple.of(4, Arbitraries.just(false)), Tuple.of(1, Arbitraries.just(true))),
            op.list().ofMinSize(1).ofMaxSize(40).withSizeDistribution(RandomDistribution.uniform())
        ).as(Scenario::new);
    }

    private static Arbitrary<Integer> uniform(final int min, final int max) {
        return Arbitraries.integers().between(min, max).withDistribution(RandomDistribution.uniform());
    }

    private static Arbitrary<Double> prob(final double min, final double max) {
        return Arbitraries.doubles().between(min, max).ofScale(4);
    }

    private static Arbitrary<Fault> faults() {
        final Arbitrary<Fault> perfect = Arbitraries.just(new Fault("perfect", LinkProfile.perfect()));
        final Arbitrary<Fault> loss = prob(0.001, 0.10)
            .map(p -> new Fault("loss", LinkProfile.builder().loss(p).build()));
        final Arbitrary<Fault> burst = Combinators.combine(
            prob(0.005, 0.03),
            prob(0.5, 0.9),
            prob(0.3, 0.7)
        ).as((g2b, b2g, inBad) -> new Fault("burst", LinkProfile.builder().burstLoss(g2b, b2g, inBad).build()));
        final Arbitrary<Fault> reorder = prob(0.01, 0.3)
            .map(p -> new Fault("reorder", LinkProfile.builder().reorder(p).build()));
        final Arbitrary<Fault> duplicate = prob(0.01, 0.3)
            .map(p -> new Fault("duplicate", LinkProfile.builder().duplicate(p).build()));
        final Arbitrary<Fault> corrupt = prob(0.001, 0.05)
            .map(p -> new Fault("corrupt", LinkProfile.builder().corrupt(p).build()));
        final Arbitrary<Fault> jitter = Arbitraries.longs().between(100, 20_000)
            .map(j -> new Fault("jitter", LinkProfile.builder().jitterNs(j).build()));
        final Arbitrary<Fault> combo = Combinators.combine(
            prob(0, 0.05),
            prob(0, 0.2),
            prob(0, 0.05),
            prob(0, 0.01),
            Arbitraries.longs().between(0, 5_000),
            Arbitraries.of(true, false),
            Arbitraries.of(0L, 10_000_000_000L, 100_000_000_000L)
        ).as((l, r, d, c, j, bursty, rate) -> {
            final LinkProfile.Builder b = LinkProfile.builder().loss(l).reorder(r).duplicate(d).corrupt(c).jitterNs(j)
                .rateBitsPerSecond(rate);
            if (bursty) {
                b.burstLoss(0.01, 0.7, 0.5);
            }
            return new Fault("combo", b.build());
        });
        return Arbitraries.frequencyOf(Tuple.of(1, perfect), Tuple.of(2, loss), Tuple.of(2, burst),
            Tuple.of(2, reorder), Tuple.of(2, duplicate), Tuple.of(2, corrupt), Tuple.of(1, jitter),
            Tuple.of(4, combo));
    }

    // ------------------------------------------------------------------ the property

    /**
     * Independent operations: each has its own bytes, so only the per-QP rules of completion
     * order and exactly-once execution matter. A completion, when polled, also implies that the
     * effects of its WR and of every earlier WR of that QP are in memory [OPS-033, OPS-034].
     */
    @Property(tries = 50, edgeCases = EdgeCasesMode.NONE)
    void engineMatchesTheFaultFreeModel(@ForAll("scenarios") final Scenario scenario) {
        Statistics.label("fault").collect(scenario.fault().kind());
        new Run(scenario, false).execute();
    }

    /**
     * Like {@link #engineMatchesTheFaultFreeModel}, plus the ordering one queue pair guarantees
     * (specification 5.9): a READ may read back what an earlier WRITE of the same QP wrote
     * [OPS-029]; a FENCEd WRITE or SEND may send what an earlier READ of the same QP fetched
     * [OPS-039]; the shared-counter atomics of one QP execute in PSN order [OPS-029]; and when a
     * receive completion is polled, the data of every earlier WRITE and SEND of that QP is in
     * memory [OPS-030].
     */
    @Property(tries = 50, edgeCases = EdgeCasesMode.NONE)
    void sameQueuePairOrderingHolds(@ForAll("scenarios") final Scenario scenario) {
        Statistics.label("fault").collect(scenario.fault().kind());
        new Run(scenario, true).execute();
    }

    // ------------------------------------------------------------------ minimal reproductions

    /** [OPS-029] Two FETCH_ADDs of one QP to one counter; the first request is lost once. */
    @Example
    void atomicsOfOneQueuePairExecuteInPsnOrder() {
        final TwoNodeFixture f = new TwoNodeFixture(7001).connect(1024);
        f.wire.filter(PacketFilter.dropNth(1, PacketMatcher.opcode(Opcode.FETCH_ADD.value())));
        f.b.mr.buffer().putLong(64, 100);
        for (int i = 0; i < 2; i++) {
            assertThat(f.a.qp.postSend(new SendRequest(1).wrId(i).opcode(WrOpcode.ATOMIC_FETCH_ADD)
                .sendFlags(SendFlags.SIGNALED).addSge(f.a.address(8L * i), 8, f.a.mr.lkey())
                .remoteAddr(f.b.address(64)).rkey(f.b.mr.rkey()).compareAdd(1))).isEqualTo(PostStatus.OK);
        }
        assertThat(f.runUntilQuiet()).isTrue();
        assertThat(f.a.sendCompletions).extracting(WorkCompletion::status)
            .containsExactly(WcStatus.SUCCESS, WcStatus.SUCCESS);
        assertThat(f.b.mr.buffer().getLong(64)).isEqualTo(102);
        assertThat(new long[] {f.a.mr.buffer().getLong(0), f.a.mr.buffer().getLong(8)})
            .as("originals in post order: the second FETCH_ADD must not execute before the first")
            .containsExactly(100, 101);
    }

    /** [OPS-029] A READ of bytes an earlier WRITE of the same QP wrote; the WRITE is lost once. */
    @Example
    void readSeesAnEarlierWriteOfTheSameQueuePair() {
        final TwoNodeFixture f = new TwoNodeFixture(7002).connect(1024);
        f.wire.filter(PacketFilter.dropNth(1, PacketMatcher.opcode(Opcode.WRITE.value())));
        for (int i = 0; i < 64; i++) {
            f.a.mr.buffer().putByte(i, (byte) (i + 1));
        }
        f.a.qp.postSend(new SendRequest(1).wrId(1).opcode(WrOpcode.RDMA_WRITE).sendFlags(SendFlags.SIGNALED)
            .addSge(f.a.address(0), 64, f.a.mr.lkey()).remoteAddr(f.b.address(1000)).rkey(f.b.mr.rkey()));
        f.a.qp.postSend(new SendRequest(1).wrId(2).opcode(WrOpcode.RDMA_READ).sendFlags(SendFlags.SIGNALED)
            .addSge(f.a.address(5000), 64, f.a.mr.lkey()).remoteAddr(f.b.address(1000)).rkey(f.b.mr.rkey()));
        assertThat(f.runUntilQuiet()).isTrue();
        assertThat(f.a.sendCompletions).extracting(WorkCompletion::status)
            .containsExactly(WcStatus.SUCCESS, WcStatus.SUCCESS);
        final byte[] read = new byte[64];
        f.a.mr.buffer().getBytes(5000, read);
        final byte[] written = new byte[64];
        f.a.mr.buffer().getBytes(0, written);
        assertThat(Arrays.mismatch(read, written)).as("first byte where the READ missed the earlier WRITE of its QP")
            .isEqualTo(-1);
    }

    /** [OPS-030] A SEND after a WRITE whose second packet is lost once. */
    @Example
    void receiveCompletionImpliesEarlierWritesAreInMemory() {
        final TwoNodeFixture f = new TwoNodeFixture(7003).connect(1024);
        f.wire.filter(PacketFilter.dropNth(2, PacketMatcher.opcode(Opcode.WRITE.value())));
        for (int i = 0; i < 4096; i++) {
            f.a.mr.buffer().putByte(i, (byte) (i * 7 + 3));
        }
        f.b.qp.postRecv(new RecvRequest(1).wrId(9).addSge(f.b.address(0), 100, f.b.mr.lkey()));
        f.a.qp.postSend(new SendRequest(1).wrId(1).opcode(WrOpcode.RDMA_WRITE).sendFlags(SendFlags.SIGNALED)
            .addSge(f.a.address(0), 4096, f.a.mr.lkey()).remoteAddr(f.b.address(8192)).rkey(f.b.mr.rkey()));
        f.a.qp.postSend(new SendRequest(1).wrId(2).opcode(WrOpcode.SEND).sendFlags(SendFlags.SIGNALED)
            .addSge(f.a.address(5000), 10, f.a.mr.lkey()));
        final byte[] written = new byte[4096];
        f.a.mr.buffer().getBytes(0, written);
        final byte[] seen = new byte[4096];
        assertThat(f.wire.runUntil(() -> {
            f.b.drain();
            if (f.b.recvCompletions.isEmpty()) {
                return false;
            }
            f.b.mr.buffer().getBytes(8192, seen);
            return true;
        }, 10_000_000_000L)).isTrue();
        assertThat(f.b.recvCompletions.get(0).status()).isEqualTo(WcStatus.SUCCESS);
        assertThat(Arrays.mismatch(seen, written))
            .as("first byte of the WRITE not in memory when the later SEND's receive completion is polled")
            .isEqualTo(-1);
        assertThat(f.runUntilQuiet()).isTrue();
    }

    /** One execution of a scenario: plan, model, drive the engine, compare. */
    static final class Run {
        final Scenario scenario;
        /** Whether operations of one QP may depend on each other (read-backs, fences, ordered atomics). */
        final boolean ordering;
        final List<PlannedOp> ops = new ArrayList<>();
        final Bump bumpA = new Bump();
        final Bump bumpB = new Bump();
        final int regionSize;
        /** Retry count of every QP (RETRY_EXC_ERR after this many consecutive timeouts plus one). */
        int retryCount = 7;
        /** Negotiated Capability Flags and CC_ALGORITHM of every QP (0 and the endpoint default unless set). */
        int capabilities;
        org.metaroce.core.congestion.CongestionControlAlgorithm cc;
        MultiQpFixture f;
        byte[] modelA;
        byte[] modelB;

        Run(final Scenario scenario, final boolean ordering) {
            this.scenario = scenario;
            this.ordering = ordering;
            plan();
            final long used = Math.max(bumpA.next, bumpB.next);
            regionSize = (int) ((used + 4096 + 4095) / 4096 * 4096);
        }

        private Bump bump(final boolean isA) {
            return isA ? bumpA : bumpB;
        }

        private void plan() {
            final List<OpSpec> specs = scenario.ops();
            for (int i = 0; i < specs.size(); i++) {
                final OpSpec s = specs.get(i);
                final SplittableRandom r = new SplittableRandom(s.entropy());
                final PlannedOp op = new PlannedOp();
                op.index = i;
                op.spec = s;
                op.qp = s.qp() % scenario.qpCount();
                op.fromA = s.fromA();
                op.kind = s.kind();
                op.length = s.kind().isAtomic() ? 8 : s.length();
                op.signaled = s.signaled();
                op.shared = s.shared() && s.kind().isAtomic();
                op.pauseNs = s.pauseNs();
                op.sendWrId = i;
                op.recvWrId = RECV_WR_ID_BASE + i;
                final Bump requester = bump(op.fromA);
                final Bump responder = bump(!op.fromA);
                if (op.kind.isAtomic()) {
                    op.local.add(new Piece(requester.take(8, 8, r), 8));
                    op.remote = op.shared ? COUNTER_OFFSET : responder.take(8, 8, r);
                    if (op.kind == Kind.ATOMIC_FETCH_ADD) {
                        op.compareAdd = op.shared ? 1 : r.nextLong();
                    } else {
                        // Shared: a compare value the counter never holds (it only grows by at most 40).
                        op.compareAdd = op.shared ? Long.MIN_VALUE + r.nextInt(1 << 20) : r.nextLong();
                        op.swap = r.nextLong();
                    }
                } else {
                    final PlannedOp dep = ordering && s.shared() ? dependency(op) : null;
                    if (dep != null) {
                        op.dependsOn = dep.index;
                        op.length = dep.length;
                    }
                    // A READ reads back an earlier WRITE's bytes; a WRITE or SEND sends, FENCEd, an earlier READ's.
                    op.fence = dep != null && op.kind != Kind.RDMA_READ;
                    op.inline = !op.fence && op.kind.mayBeInline() && op.length <= 256 && r.nextInt(10) < 3;
                    if (op.fence) {
                        op.local.addAll(dep.local);
                    } else {
                        for (final int piece : split(op.length, r)) {
                            op.local.add(new Piece(requester.take(piece, 1, r), piece));
                        }
                    }
                    if (op.kind == Kind.RDMA_READ && dep != null) {
                        op.remote = dep.remote;
                    } else if (op.kind == Kind.RDMA_WRITE || op.kind == Kind.RDMA_WRITE_WITH_IMM
                        || op.kind == Kind.RDMA_READ) {
                        op.remote = responder.take(op.length, 1, r);
                    }
                    if (op.kind == Kind.SEND || op.kind == Kind.SEND_WITH_IMM) {
                        final int slack = r.nextBoolean() ? 0 : r.nextInt(1, 200);
                        for (final int piece : split(op.length + slack, r)) {
                            op.recv.add(new Piece(responder.take(piece, 1, r), piece));
                        }
                    } else if (op.kind == Kind.RDMA_WRITE_WITH_IMM && r.nextBoolean()) {
                        // WRITE_WITH_IMM writes nothing into its receive's buffer; give it one anyway.
                        final int size = r.nextInt(0, 100);
                        op.recv.add(new Piece(responder.take(size, 1, r), size));
                    }
                    if (op.kind.hasImm()) {
                        op.imm = r.nextInt();
                    }
                }
                ops.add(op);
            }
            // The last operation of every QP and direction is signaled.
            final Set<String> seen = new HashSet<>();
            for (int i = ops.size() - 1; i >= 0; i--) {
                final PlannedOp op = ops.get(i);
                if (seen.add(op.qp + "/" + op.fromA)) {
                    op.signaled = true;
                }
            }
        }

        /**
         * @return for a READ the latest earlier WRITE of the same QP and direction, for a WRITE or
         *     SEND the latest earlier READ; null if there is none (or it is empty)
         */
        private PlannedOp dependency(final PlannedOp op) {
            for (int i = ops.size() - 1; i >= 0; i--) {
                final PlannedOp earlier = ops.get(i);
                if (earlier.qp != op.qp || earlier.fromA != op.fromA || earlier.length == 0) {
                    continue;
                }
                final boolean isWrite = earlier.kind == Kind.RDMA_WRITE || earlier.kind == Kind.RDMA_WRITE_WITH_IMM;
                if (op.kind == Kind.RDMA_READ ? isWrite : earlier.kind == Kind.RDMA_READ) {
                    return earlier;
                }
            }
            return null;
        }

        /** Splits {@code length} into 1..3 pieces (0..1 when it is 0); pieces may be empty. */
        private static int[] split(final int length, final SplittableRandom r) {
            final int n = length == 0 ? r.nextInt(0, 2) : r.nextInt(1, 4);
            final int[] cuts = new int[n + 1];
            cuts[n] = length;
            for (int i = 1; i < n; i++) {
                cuts[i] = r.nextInt(0, length + 1);
            }
            if (n > 1) {
                Arrays.sort(cuts, 1, n);
            }
            final int[] pieces = new int[n];
            for (int i = 0; i < n; i++) {
                pieces[i] = cuts[i + 1] - cuts[i];
            }
            return pieces;
        }

        void execute() {
            f = new MultiQpFixture(scenario.seed(), scenario.fault().profile(), scenario.qpCount(), scenario.mtu(),
                regionSize, retryCount, 1_000_000, capabilities, cc);
            initialiseMemory();
            final Map<String, List<Wc>> expected = model();
            drive();
            if (!f.runUntilQuiet(10_000_000_000L, this::checkWhatCompletionsImply)) {
                checkCompletionsSoFar(expected);
                throw new AssertionError("no quiescence within 10 s virtual: " + stuck() + "; " + describe() + "; "
                    + f.describe());
            }
            // Let every held-back or duplicated packet arrive: nothing may change any more.
            f.wire.runFor(1_000_000);
            f.drain();
            checkWhatCompletionsImply();
            checkCompletions(expected);
            checkQueuePairs();
            checkSharedCounters();
            checkMemory(true);
            checkMemory(false);
        }

        private void initialiseMemory() {
            final SplittableRandom r = new SplittableRandom(scenario.seed() ^ 0x5DEECE66DL);
            modelA = new byte[regionSize];
            modelB = new byte[regionSize];
            r.nextBytes(modelA);
            r.nextBytes(modelB);
            // Shared counters start well away from the never-matching compare values of shared CMP_SWAPs.
            ByteBuffer.wrap(modelA).order(HOST).putLong(COUNTER_OFFSET, r.nextLong(0, 1L << 40));
            ByteBuffer.wrap(modelB).order(HOST).putLong(COUNTER_OFFSET, r.nextLong(0, 1L << 40));
            f.a.mr.buffer().putBytes(0, modelA);
            f.b.mr.buffer().putBytes(0, modelB);
        }

        private byte[] model(final boolean isA) {
            return isA ? modelA : modelB;
        }

        private MultiQpFixture.QpEnd end(final boolean isA, final int qp) {
            return f.node(isA).qps.get(qp);
        }

        private static String key(final boolean isA, final int qp, final boolean recv) {
            return (isA ? "A" : "B") + qp + (recv ? "-recv" : "-send");
        }

        /** Applies every operation in post order to the model and returns the expected completions. */
        private Map<String, List<Wc>> model() {
            final Map<String, List<Wc>> expected = new HashMap<>();
            for (final boolean isA : new boolean[] {true, false}) {
                for (int qp = 0; qp < scenario.qpCount(); qp++) {
                    expected.put(key(isA, qp, false), new ArrayList<>());
                    expected.put(key(isA, qp, true), new ArrayList<>());
                }
            }
            for (final PlannedOp op : ops) {
                final byte[] req = model(op.fromA);
                final byte[] rsp = model(!op.fromA);
                final int reqQpn = end(op.fromA, op.qp).qp.qpn();
                final int rspQpn = end(!op.fromA, op.qp).qp.qpn();
                switch (op.kind) {
                    case SEND, SEND_WITH_IMM -> scatter(gather(req, op.local, op.length), rsp, op.recv);
                    case RDMA_WRITE, RDMA_WRITE_WITH_IMM ->
                        System.arraycopy(gather(req, op.local, op.length), 0, rsp, (int) op.remote, op.length);
                    case RDMA_READ -> scatter(Arrays.copyOfRange(rsp, (int) op.remote, (int) op.remote + op.length),
                        req, op.local);
                    case ATOMIC_FETCH_ADD, ATOMIC_CMP_SWAP -> {
                        if (!op.shared) {
                            final ByteBuffer target = ByteBuffer.wrap(rsp).order(HOST);
                            final long original = target.getLong((int) op.remote);
                            if (op.kind == Kind.ATOMIC_FETCH_ADD) {
                                target.putLong((int) op.remote, original + op.compareAdd);
                            } else if (original == op.compareAdd) {
                                target.putLong((int) op.remote, op.swap);
                            }
                            ByteBuffer.wrap(req).order(HOST).putLong((int) op.local.get(0).offset(), original);
                        }
                    }
                    default -> throw new AssertionError(op.kind);
                }
                if (op.signaled) {
                    expected.get(key(op.fromA, op.qp, false)).add(new Wc(op.sendWrId, WcStatus.SUCCESS,
                        op.kind.sendWcOpcode(), op.length, 0, false, reqQpn, rspQpn));
                }
                if (op.kind.consumesReceive()) {
                    expected.get(key(!op.fromA, op.qp, true)).add(new Wc(op.recvWrId, WcStatus.SUCCESS,
                        op.kind == Kind.RDMA_WRITE_WITH_IMM ? WcOpcode.RECV_RDMA_WITH_IMM : WcOpcode.RECV, op.length,
                        op.imm, op.kind.hasImm(), rspQpn, reqQpn));
                }
            }
            return expected;
        }

        private static byte[] gather(final byte[] memory, final List<Piece> pieces, final int length) {
            final byte[] out = new byte[length];
            int at = 0;
            for (final Piece p : pieces) {
                System.arraycopy(memory, (int) p.offset(), out, at, p.length());
                at += p.length();
            }
            assertThat(at).isEqualTo(length);
            return out;
        }

        private static void scatter(final byte[] data, final byte[] memory, final List<Piece> pieces) {
            int at = 0;
            for (final Piece p : pieces) {
                final int n = Math.min(p.length(), data.length - at);
                System.arraycopy(data, at, memory, (int) p.offset(), n);
                at += n;
            }
            assertThat(at).isEqualTo(data.length);
        }

        private void drive() {
            for (final PlannedOp op : ops) {
                if (op.pauseNs > 0) {
                    f.wire.runFor(op.pauseNs);
                }
                if (!scenario.lateRecvs() && op.kind.consumesReceive()) {
                    postRecv(op);
                }
                postSend(op);
            }
            if (scenario.lateRecvs()) {
                // The sends meet missing receives first: RNR NACKs, then retries once they are posted.
                f.wire.runFor(30_000);
                for (final PlannedOp op : ops) {
                    if (op.kind.consumesReceive()) {
                        postRecv(op);
                    }
                }
            }
        }

        private void postRecv(final PlannedOp op) {
            final MultiQpFixture.Node rsp = f.node(!op.fromA);
            final RecvRequest wr = new RecvRequest(4).wrId(op.recvWrId);
            for (final Piece p : op.recv) {
                wr.addSge(rsp.address(p.offset()), p.length(), rsp.mr.lkey());
            }
            final int status = end(!op.fromA, op.qp).qp.postRecv(wr);
            assertThat(status).as("postRecv %s: %s", op, PostStatus.describe(status)).isEqualTo(PostStatus.OK);
        }

        private void postSend(final PlannedOp op) {
            final MultiQpFixture.Node req = f.node(op.fromA);
            final MultiQpFixture.Node rsp = f.node(!op.fromA);
            final int flags = (op.signaled ? SendFlags.SIGNALED : 0) | (op.inline ? SendFlags.INLINE : 0)
                | (op.fence ? SendFlags.FENCE : 0);
            final SendRequest wr = new SendRequest(4).wrId(op.sendWrId).opcode(op.kind.wr).sendFlags(flags);
            for (final Piece p : op.local) {
                wr.addSge(req.address(p.offset()), p.length(), req.mr.lkey());
            }
            if (op.kind == Kind.RDMA_WRITE || op.kind == Kind.RDMA_WRITE_WITH_IMM || op.kind == Kind.RDMA_READ
                || op.kind.isAtomic()) {
                wr.remoteAddr(rsp.address(op.remote)).rkey(rsp.mr.rkey());
            }
            if (op.kind.hasImm()) {
                wr.immData(op.imm);
            }
            if (op.kind.isAtomic()) {
                wr.compareAdd(op.compareAdd).swap(op.swap);
            }
            final int status = end(op.fromA, op.qp).qp.postSend(wr);
            assertThat(status).as("postSend %s: %s", op, PostStatus.describe(status)).isEqualTo(PostStatus.OK);
        }

        private final Map<String, Integer> completionsChecked = new HashMap<>();

        /**
         * Called after every settled instant: for each completion polled since the last call, the
         * effects it implies must already be in memory. A send completion implies that its WR and
         * every earlier WR of the QP are done [OPS-033, OPS-034]; in ordering mode a receive
         * completion implies that the data of every earlier WRITE and SEND of the QP, and its own,
         * has been placed [OPS-030]. Operation effects are compared with the model's final bytes,
         * which no other operation writes.
         */
        private void checkWhatCompletionsImply() {
            for (final boolean isA : new boolean[] {true, false}) {
                for (int qp = 0; qp < scenario.qpCount(); qp++) {
                    final MultiQpFixture.QpEnd end = end(isA, qp);
                    if (end.qp.state() == QpState.ERR) {
                        // After an error, completions follow REL-051, not OPS-034; the final
                        // comparison with the model reports the failure itself.
                        continue;
                    }
                    final String sendKey = key(isA, qp, false);
                    for (int i = completionsChecked.getOrDefault(sendKey, 0); i < end.sendCompletions.size(); i++) {
                        final WorkCompletion wc = end.sendCompletions.get(i);
                        final long k = wc.wrId();
                        if (wc.status() == WcStatus.SUCCESS && k >= 0 && k < ops.size()) {
                            for (int j = 0; j <= k; j++) {
                                final PlannedOp op = ops.get(j);
                                if (op.qp == qp && op.fromA == isA) {
                                    requireEffects(op, true, true, wc);
                                }
                            }
                        }
                    }
                    completionsChecked.put(sendKey, end.sendCompletions.size());
                    final String recvKey = key(isA, qp, true);
                    for (int i = completionsChecked.getOrDefault(recvKey, 0); i < end.recvCompletions.size(); i++) {
                        final WorkCompletion wc = end.recvCompletions.get(i);
                        final long k = wc.wrId() - RECV_WR_ID_BASE;
                        if (ordering && wc.status() == WcStatus.SUCCESS && k >= 0 && k < ops.size()) {
                            for (int j = 0; j <= k; j++) {
                                final PlannedOp op = ops.get(j);
                                if (op.qp == qp && op.fromA != isA && op.kind != Kind.RDMA_READ
                                    && !op.kind.isAtomic()) {
                                    requireEffects(op, false, true, wc);
                                }
                            }
                        }
                    }
                    completionsChecked.put(recvKey, end.recvCompletions.size());
                }
            }
        }

        /** Asserts that the bytes {@code op} writes on the requester and/or responder are in memory. */
        private void requireEffects(final PlannedOp op, final boolean requester, final boolean responder,
                                    final WorkCompletion because) {
            if (op.shared) {
                return;
            }
            if (requester && !op.requesterEffectsSeen) {
                if (op.kind == Kind.RDMA_READ || op.kind.isAtomic()) {
                    for (final Piece p : op.local) {
                        requireBytes(op.fromA, p, op, because);
                    }
                }
                op.requesterEffectsSeen = true;
            }
            if (responder && !op.responderEffectsSeen) {
                switch (op.kind) {
                    case SEND, SEND_WITH_IMM -> op.recv.forEach(p -> requireBytes(!op.fromA, p, op, because));
                    case RDMA_WRITE, RDMA_WRITE_WITH_IMM, ATOMIC_FETCH_ADD, ATOMIC_CMP_SWAP ->
                        requireBytes(!op.fromA, new Piece(op.remote, op.length), op, because);
                    default -> {
                    }
                }
                op.responderEffectsSeen = true;
            }
        }

        private void requireBytes(final boolean isA, final Piece p, final PlannedOp op, final WorkCompletion because) {
            final byte[] actual = new byte[p.length()];
            f.node(isA).mr.buffer().getBytes((int) p.offset(), actual);
            final byte[] model = model(isA);
            for (int i = 0; i < p.length(); i++) {
                if (actual[i] != model[(int) p.offset() + i]) {
                    throw new AssertionError("at t=" + f.wire.now() + " ns completion " + because + " was polled but "
                        + "byte " + i + " of " + p + " on " + (isA ? "A" : "B") + ", written by " + op
                        + ", is not in memory yet (expected " + model[(int) p.offset() + i] + ", was " + actual[i]
                        + "); " + describe() + "; " + f.describe());
                }
            }
        }

        /** Before quiescence: the completions so far must be a prefix of the model's. */
        private void checkCompletionsSoFar(final Map<String, List<Wc>> expected) {
            for (final boolean isA : new boolean[] {true, false}) {
                for (int qp = 0; qp < scenario.qpCount(); qp++) {
                    final MultiQpFixture.QpEnd end = end(isA, qp);
                    final List<Wc> send = end.sendCompletions.stream().map(Wc::of).toList();
                    final List<Wc> recv = end.recvCompletions.stream().map(Wc::of).toList();
                    final List<Wc> expectedSend = expected.get(key(isA, qp, false));
                    final List<Wc> expectedRecv = expected.get(key(isA, qp, true));
                    sameSequence(key(isA, qp, false), send,
                        expectedSend.subList(0, Math.min(send.size(), expectedSend.size())));
                    sameSequence(key(isA, qp, true), recv,
                        expectedRecv.subList(0, Math.min(recv.size(), expectedRecv.size())));
                }
            }
        }

        /** @return which QPs still have work outstanding */
        private String stuck() {
            final StringBuilder sb = new StringBuilder();
            for (final boolean isA : new boolean[] {true, false}) {
                for (int qp = 0; qp < scenario.qpCount(); qp++) {
                    final QueuePair q = end(isA, qp).qp;
                    if (q.outstandingSends() != 0 || q.postedReceives() != 0) {
                        sb.append(isA ? "A" : "B").append(qp).append(" state=").append(q.state()).append(" sends=")
                            .append(q.outstandingSends()).append(" receives=").append(q.postedReceives()).append(' ');
                    }
                }
            }
            return sb.toString();
        }

        private void checkQueuePairs() {
            for (final boolean isA : new boolean[] {true, false}) {
                for (int qp = 0; qp < scenario.qpCount(); qp++) {
                    assertThat(end(isA, qp).qp.state()).as("%s qp%d state; %s", isA ? "A" : "B", qp, f.describe())
                        .isEqualTo(QpState.RTS);
                }
                final EndpointCounters c = f.node(isA).endpoint.counters();
                assertThat(c.get(EndpointCounter.QP_ERRORS)).as(f.describe()).isZero();
                assertThat(c.get(EndpointCounter.CQ_OVERFLOWS)).as(f.describe()).isZero();
            }
        }

        private void checkCompletions(final Map<String, List<Wc>> expected) {
            for (final boolean isA : new boolean[] {true, false}) {
                for (int qp = 0; qp < scenario.qpCount(); qp++) {
                    final MultiQpFixture.QpEnd end = end(isA, qp);
                    sameSequence(key(isA, qp, false), end.sendCompletions.stream().map(Wc::of).toList(),
                        expected.get(key(isA, qp, false)));
                    sameSequence(key(isA, qp, true), end.recvCompletions.stream().map(Wc::of).toList(),
                        expected.get(key(isA, qp, true)));
                }
            }
        }

        /** Compares completion sequences, reporting the first difference and every error completion. */
        private void sameSequence(final String what, final List<Wc> actual, final List<Wc> expected) {
            if (actual.equals(expected)) {
                return;
            }
            int first = 0;
            while (first < actual.size() && first < expected.size() && actual.get(first).equals(expected.get(first))) {
                first++;
            }
            throw new AssertionError("completions of " + what + " differ from the model at index " + first
                + " (expected " + (first < expected.size() ? expected.get(first) : "nothing") + ", was "
                + (first < actual.size() ? actual.get(first) : "nothing") + "); " + actual.size() + " completions, "
                + expected.size() + " expected; error completions: "
                + actual.stream().filter(wc -> wc.status() != WcStatus.SUCCESS).limit(5).toList() + "; "
                + describe() + "; " + f.describe());
        }

        /**
         * The shared counters: whatever the interleaving, every FETCH_ADD(1) added exactly once and
         * saw a distinct original, and every never-matching CMP_SWAP saw a value the counter held.
         * The model then takes the observed originals so that the byte comparison covers the rest.
         */
        private void checkSharedCounters() {
            for (final boolean target : new boolean[] {true, false}) {
                final byte[] rspModel = model(target);
                final long initial = ByteBuffer.wrap(rspModel).order(HOST).getLong(COUNTER_OFFSET);
                final List<PlannedOp> adds = new ArrayList<>();
                final List<PlannedOp> swaps = new ArrayList<>();
                for (final PlannedOp op : ops) {
                    if (op.shared && op.fromA != target) {
                        (op.kind == Kind.ATOMIC_FETCH_ADD ? adds : swaps).add(op);
                    }
                }
                final long finalValue = f.node(target).mr.buffer().getLong(COUNTER_OFFSET);
                assertThat(finalValue - initial).as("shared counter of %s: every FETCH_ADD exactly once; %s",
                    target ? "A" : "B", f.describe()).isEqualTo(adds.size());
                final Set<Long> seen = new HashSet<>();
                for (final PlannedOp op : adds) {
                    final long original = readResult(op);
                    assertThat(Long.compareUnsigned(original - initial, adds.size())).as("original of %s", op)
                        .isNegative();
                    assertThat(seen.add(original)).as("distinct original %d of %s", original, op).isTrue();
                }
                for (final PlannedOp op : swaps) {
                    final long original = readResult(op);
                    assertThat(Long.compareUnsigned(original - initial, adds.size())).as("original of %s", op)
                        .isLessThanOrEqualTo(0);
                }
                if (ordering) {
                    // One QP's atomics execute in PSN order [OPS-029]: each sees at least what the
                    // earlier ones of its QP left, and a FETCH_ADD(1) leaves one more than it saw.
                    for (int qp = 0; qp < scenario.qpCount(); qp++) {
                        long floor = 0;
                        PlannedOp previous = null;
                        for (final PlannedOp op : ops) {
                            if (!op.shared || op.fromA == target || op.qp != qp) {
                                continue;
                            }
                            final long seenOffset = readResult(op) - initial;
                            assertThat(seenOffset).as("%s saw counter+%d but the earlier %s of its QP left counter+%d;"
                                + " %s", op, seenOffset, previous, floor, describe()).isGreaterThanOrEqualTo(floor);
                            floor = op.kind == Kind.ATOMIC_FETCH_ADD ? seenOffset + 1 : seenOffset;
                            previous = op;
                        }
                    }
                }
                ByteBuffer.wrap(rspModel).order(HOST).putLong(COUNTER_OFFSET, initial + adds.size());
            }
        }

        private long readResult(final PlannedOp op) {
            final int slot = (int) op.local.get(0).offset();
            final long original = f.node(op.fromA).mr.buffer().getLong(slot);
            ByteBuffer.wrap(model(op.fromA)).order(HOST).putLong(slot, original);
            return original;
        }

        private void checkMemory(final boolean isA) {
            final byte[] actual = new byte[regionSize];
            f.node(isA).mr.buffer().getBytes(0, actual);
            final byte[] expected = model(isA);
            final int first = Arrays.mismatch(expected, actual);
            if (first < 0) {
                return;
            }
            int count = 0;
            for (int i = first; i < regionSize; i++) {
                if (expected[i] != actual[i]) {
                    count++;
                }
            }
            throw new AssertionError("memory of " + (isA ? "A" : "B") + " differs from the model at " + count
                + " bytes, first at offset " + first + " (expected " + expected[first] + ", was " + actual[first]
                + "), inside " + owner(isA, first) + "; " + describe() + "; " + f.describe());
        }

        /** Names the operation whose bytes contain {@code offset} on node {@code isA}. */
        private String owner(final boolean isA, final long offset) {
            for (final PlannedOp op : ops) {
                final List<Piece> mine = new ArrayList<>();
                if (op.fromA == isA) {
                    mine.addAll(op.local);
                } else {
                    mine.addAll(op.recv);
                    if (!op.kind.consumesReceive() || op.kind == Kind.RDMA_WRITE_WITH_IMM) {
                        mine.add(new Piece(op.remote, op.length));
                    }
                }
                for (final Piece p : mine) {
                    if (offset >= p.offset() && offset < p.offset() + p.length()) {
                        return op.toString();
                    }
                }
            }
            return "no operation's bytes";
        }

        String describe() {
            final StringBuilder sb = new StringBuilder(ordering ? "ordering" : "independent")
                .append(" scenario seed=").append(scenario.seed()).append(" mtu=").append(scenario.mtu())
                .append(" qps=").append(scenario.qpCount()).append(" lateRecvs=").append(scenario.lateRecvs())
                .append(" fault=").append(scenario.fault()).append(" ops=[");
            for (final PlannedOp op : ops) {
                sb.append("\n  ").append(op);
            }
            return sb.append("\n]").toString();
        }
    }
}
