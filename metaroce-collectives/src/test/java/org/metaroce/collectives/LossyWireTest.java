// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.collectives;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.InetAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.metaroce.core.engine.EndpointConfig;
import org.metaroce.netty.DeviceConfig;
import org.metaroce.netty.DriverCounter;
import org.metaroce.netty.InboundFaults;
import org.metaroce.netty.Transport;

/**
 * The operations on a lossy, reordering wire: every rank's device drops 2% and reorders 10% of
 * the datagrams it receives (seeded {@link InboundFaults}); every result must still equal the
 * reference exactly, and the faults must really have happened.
 */
class LossyWireTest {
    static final long SEED = Long.getLong("metaroce.seed", 77L);

    @ParameterizedTest(name = "{0} ranks")
    @ValueSource(ints = {2, 3, 4, 7})
    @DisplayName("COLL-010: results on a wire with loss and reordering equal the reference")
    void resultsAreExactUnderLossAndReordering(final int ranks) throws Exception {
        System.out.println("LossyWireTest seed=" + SEED + " ranks=" + ranks);
        final DeviceConfig template = new DeviceConfig().bindAddress(InetAddress.getLoopbackAddress()).endpointPort(0)
            .entropyPortRange(4, 0).transport(Transport.AUTO)
            .endpointConfig(new EndpointConfig().minRtoNs(2_000_000))
            .inboundFaults(new InboundFaults(0.02, 0.1, SEED + ranks));
        final CommConfig cfg = CollectivesMatrixTest.config().qpTimeoutNs(2_000_000)
            .operationTimeout(Duration.ofSeconds(60));
        try (LocalCluster cluster = LocalCluster.start(ranks, cfg, template)) {
            final List<List<String>> wrong = cluster.run(c -> new ArrayList<>(new OpCases(c, SEED).all(
                new long[] {1, 13, 1021, 12_289}, new DataType[] {DataType.FLOAT32, DataType.INT64},
                new ReduceOp[] {ReduceOp.SUM, ReduceOp.MAX})), Duration.ofSeconds(150));
            for (final List<String> w : wrong) {
                assertThat(w).as("seed " + SEED).isEmpty();
            }
            LossyWireTest.assertFaultsInjected(cluster, ranks);
        }
    }

    /** The injected faults really happened: some datagrams were dropped and some reordered. */
    static void assertFaultsInjected(final LocalCluster cluster, final int ranks) {
        assertThat(driverTotal(cluster, ranks, DriverCounter.FAULT_DROPPED)).as("datagrams dropped").isPositive();
        assertThat(driverTotal(cluster, ranks, DriverCounter.FAULT_REORDERED)).as("datagrams reordered").isPositive();
    }

    /** @return {@code counter} summed over the devices of ranks 0..ranks-1 */
    static long driverTotal(final LocalCluster cluster, final int ranks, final DriverCounter counter) {
        long n = 0;
        for (int i = 0; i < ranks; i++) {
            n += cluster.communicator(i).device().counters().get(counter);
        }
        return n;
    }
}
