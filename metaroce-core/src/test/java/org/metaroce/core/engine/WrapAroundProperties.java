// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;

import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.EdgeCasesMode;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.RandomDistribution;
import net.jqwik.api.Tuple;
import net.jqwik.api.statistics.Statistics;
import org.metaroce.core.testwire.LinkProfile;
import org.metaroce.core.verbs.WrOpcode;

/**
 * Every sequence space across 2^32 [OPS-043]: random send and receive queue depths (mostly not
 * powers of two) × initial PSN, MSN and RSN a few hundred or fewer before 2^32, chosen so that
 * each of the three wraps during the run, with every operation kind mixed (SEND, SEND_WITH_IMM,
 * WRITE, WRITE_WITH_IMM, READ, FETCH_ADD, CMP_SWAP, single- and multi-packet) on a perfect or
 * lightly faulty wire, with receive-consuming messages sometimes posted before their receives
 * (RNR across the wrap). {@link WrapAroundRun} checks exact data, wr_ids in post order and that
 * neither QP leaves RTS.
 *
 * <p>The run's seed, depths and start values are printed by {@link WrapAroundRun} and are in every
 * failure message; jqwik prints its own seed and the shrunk scenario on failure.
 */
class WrapAroundProperties {
    private static final WrOpcode[] KINDS = {WrOpcode.SEND, WrOpcode.SEND_WITH_IMM, WrOpcode.RDMA_WRITE,
        WrOpcode.RDMA_WRITE_WITH_IMM, WrOpcode.RDMA_READ, WrOpcode.ATOMIC_FETCH_ADD, WrOpcode.ATOMIC_CMP_SWAP};

    /**
     * How far before 2^32 each space starts is drawn independently of the operations and then
     * taken modulo that space's length in the run, so that every space wraps inside the run.
     */
    record Scenario(long seed, Sizes sizes, int sendDepth, int recvDepth, Leads leads, boolean sendsAhead,
                    Fault fault, List<WrapAroundRun.Op> ops) {
        int mtu() {
            return sizes.mtu();
        }

        int window() {
            return sizes.window();
        }

        WrapAroundRun.Start start() {
            long psns = 0;
            int receives = 0;
            for (final WrapAroundRun.Op op : ops) {
                psns += op.psns(mtu());
                receives += op.consumesReceive() ? 1 : 0;
            }
            return new WrapAroundRun.Start(beforeWrap(leads.psn(), psns), beforeWrap(leads.msn(), ops.size()),
                beforeWrap(leads.rsn(), receives));
        }

        /**
         * @return a start that puts both 2^32 - 1 and 0 among the first {@code used} numbers (when
         *     {@code used} >= 2), {@code lead} or fewer before 2^32 - 1
         */
        private static int beforeWrap(final int lead, final long used) {
            return -1 - (int) (lead % Math.max(1, used - 1));
        }

        @Override
        public String toString() {
            return "seed=" + seed + " mtu=" + mtu() + " window=" + window() + " sq=" + sendDepth + " rq=" + recvDepth
                + " " + start()
                + (sendsAhead ? " sendsAhead " : " ") + fault + " ops=" + ops;
        }
    }

    /** Path MTU, and the receive window (so also the requester's PSN scoreboard) in packets. */
    record Sizes(int mtu, int window) {
    }

    /** How far before 2^32 each space starts, before being reduced to the run's length. */
    record Leads(int psn, int msn, int rsn) {
    }

    /** A named link profile for both directions. */
    record Fault(String kind, LinkProfile profile) {
        @Override
        public String toString() {
            return kind + ' ' + profile;
        }
    }

    @Provide
    Arbitrary<Scenario> scenarios() {
        final Arbitrary<WrapAroundRun.Op> op = Combinators.combine(
            Arbitraries.of(KINDS),
            Arbitraries.frequencyOf(
                Tuple.of(3, uniform(0, 64)),
                Tuple.of(4, uniform(65, 1500)),
                Tuple.of(2, uniform(1501, 6000))),
            Arbitraries.longs()
        ).as(WrapAroundRun.Op::new);
        return Combinators.combine(
            Arbitraries.longs(),
            Combinators.combine(Arbitraries.of(256, 512, 1024), Arbitraries.of(64, 128, 1024)).as(Sizes::new),
            depths(),
            depths(),
            Combinators.combine(uniform(0, 400), uniform(0, 400), uniform(0, 400)).as(Leads::new),
            Arbitraries.frequencyOf(Tuple.of(3, Arbitraries.just(false)), Tuple.of(1, Arbitraries.just(true))),
            faults(),
            op.list().ofMinSize(2).ofMaxSize(120).withSizeDistribution(RandomDistribution.uniform())
        ).as(Scenario::new);
    }

    /** Queue depths: mostly arbitrary (rarely a power of two), some small, some odd around 256. */
    private static Arbitrary<Integer> depths() {
        return Arbitraries.frequencyOf(
            Tuple.of(5, uniform(1, 300)),
            Tuple.of(2, uniform(1, 8)),
            Tuple.of(2, Arbitraries.of(3, 7, 100, 255, 257, 300)));
    }

    private static Arbitrary<Integer> uniform(final int min, final int max) {
        return Arbitraries.integers().between(min, max).withDistribution(RandomDistribution.uniform());
    }

    private static Arbitrary<Fault> faults() {
        final Arbitrary<Fault> perfect = Arbitraries.just(new Fault("perfect", LinkProfile.perfect()));
        final Arbitrary<Fault> loss = Arbitraries.doubles().between(0.002, 0.03).ofScale(4)
            .map(p -> new Fault("loss", LinkProfile.builder().loss(p).build()));
        final Arbitrary<Fault> reorder = Arbitraries.doubles().between(0.01, 0.2).ofScale(4)
            .map(p -> new Fault("reorder", LinkProfile.builder().reorder(p).build()));
        final Arbitrary<Fault> duplicate = Arbitraries.doubles().between(0.01, 0.1).ofScale(4)
            .map(p -> new Fault("duplicate", LinkProfile.builder().duplicate(p).build()));
        return Arbitraries.frequencyOf(Tuple.of(4, perfect), Tuple.of(2, loss), Tuple.of(2, reorder),
            Tuple.of(1, duplicate));
    }

    /**
     * [OPS-043, OPS-006, OPS-009, OPS-010, OPS-011, OPS-030, OPS-033] Across the wrap of PSN, MSN
     * and RSN at once, every operation completes in post order with exactly its data.
     */
    @Property(tries = 30, edgeCases = EdgeCasesMode.NONE)
    void everySequenceSpaceWrapsCleanly(@ForAll("scenarios") final Scenario scenario) {
        Statistics.label("fault").collect(scenario.fault().kind());
        Statistics.label("sends ahead of receives (RNR)").collect(scenario.sendsAhead());
        Statistics.label("rq depth power of two").collect(Integer.bitCount(scenario.recvDepth()) == 1);
        final WrapAroundRun run = new WrapAroundRun(scenario.seed(), scenario.fault().profile(), scenario.mtu(),
            scenario.window(), scenario.sendDepth(), scenario.recvDepth(), scenario.start(), scenario.sendsAhead(),
            scenario.ops());
        final boolean[] wrapped = run.wrapped();
        assertThat(wrapped[0]).as("PSN wraps in %s", scenario).isTrue();
        assertThat(wrapped[1]).as("MSN wraps in %s", scenario).isTrue();
        Statistics.label("rsn wraps").collect(wrapped[2]);
        run.execute();
    }
}
