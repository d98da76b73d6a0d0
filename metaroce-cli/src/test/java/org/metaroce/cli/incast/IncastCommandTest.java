// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.cli.incast;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.metaroce.cli.Metaroce;
import org.metaroce.cli.NetworkNamespaceTest;
import org.metaroce.cli.faults.TwoHosts;
import picocli.CommandLine;

/** {@code metaroce incast}: its figures, its argument checks, and one short run through a real rig (root). */
class IncastCommandTest {
    private static int run(final StringWriter out, final StringWriter err, final String... args) {
        final CommandLine cl = Metaroce.commandLine();
        cl.setOut(new PrintWriter(out, true));
        cl.setErr(new PrintWriter(err, true));
        return cl.execute(args);
    }

    private static Bottleneck.Sample sample(final long ns, final long... portBytes) {
        return new Bottleneck.Sample(ns, 0, 0, portBytes);
    }

    @Test
    void jainsIndexIsOneForEqualSharesAndOneOverNForOneTaker() {
        assertThat(IncastReport.jain(new double[] {5, 5, 5, 5})).isEqualTo(1.0);
        assertThat(IncastReport.jain(new double[] {8, 0, 0, 0})).isEqualTo(0.25);
        assertThat(IncastReport.jain(new double[] {1, 3})).isCloseTo(16.0 / 20, within(1e-12));
        assertThat(IncastReport.jain(new double[0])).isNaN();
    }

    @Test
    void sharesAndSeriesComeFromTheBottlenecksCounters() {
        // Two ports over 2 s: port 0 passed 100 MB, port 1 50 MB.
        final IncastRun.Outcome o = new IncastRun.Outcome(List.of(
            new IncastRun.Sender(0.4, "passed", 10, 3, 7, "DEFAULT (ECN)", ""),
            new IncastRun.Sender(0.2, "passed", 0, 0, 0, "DEFAULT (ECN)", "")),
            List.of(sample(0, 0, 0), sample(1_000_000_000L, 25_000_000, 25_000_000),
                sample(2_000_000_000L, 100_000_000, 50_000_000)), 4096, 2.0);
        final IncastReport r = new IncastReport("default", 1000, o, new Bottleneck.Sample(0, 11_000_000, 2_500_000, new long[2]));
        assertThat(r.shares()).containsExactly(400.0, 200.0);
        final double[][] series = r.series();
        assertThat(series[0]).containsExactly(1.0, 2.0);
        assertThat(series[1]).containsExactly(200.0, 600.0);
        assertThat(series[2]).containsExactly(200.0, 200.0);
        assertThat(r.goodputMbit()).isCloseTo(600.0, within(1e-9));
        // 10 packets of 4096 bytes resent against 600 Mb/s × 2 s delivered.
        assertThat(r.retransmittedPerDelivered(4096, 2.0)).isCloseTo(40960 / 150e6, within(1e-12));
        assertThat(r.completedAndVerified()).isTrue();
        assertThat(r.row()).startsWith("| default | DEFAULT (ECN) | 600 | 0.60 | 0.900 | 600 |").contains("| 11.0 | 2.5 | 7 / 3 |")
            .endsWith("| all | not met |");
        assertThat(r.csv()).startsWith("t_s,sender0_mbit,sender1_mbit\n1.000,200.00,200.00\n");
    }

    @Test
    void badArgumentsExitWithTwo() {
        final StringWriter err = new StringWriter();
        assertThat(run(new StringWriter(), err, "incast", "--cc", "fixed,nosuch")).isEqualTo(2);
        assertThat(err.toString()).contains("--cc takes default, fixed, dcqcn, credit or tool, got nosuch");
        final StringWriter senders = new StringWriter();
        assertThat(run(new StringWriter(), senders, "incast", "-n", "0")).isEqualTo(2);
        assertThat(senders.toString()).contains("--senders 1..64");
        final StringWriter mtu = new StringWriter();
        assertThat(run(new StringWriter(), mtu, "incast", "--mtu", "0")).isEqualTo(2);
        assertThat(mtu.toString()).contains("--mtu 1280..65535");
    }

    @Test
    void twoSendersThroughARealBottleneckVerifyEveryByte() {
        assumeTrue(NetworkNamespaceTest.usable(), NetworkNamespaceTest.SKIP);
        final String unavailable = TwoHosts.unavailableReason();
        assumeTrue(unavailable == null, () -> "skipped: " + unavailable);
        final StringWriter out = new StringWriter();
        final StringWriter err = new StringWriter();
        final int exit = run(out, err, "incast", "-n", "2", "-D", "3", "--margin", "2", "--rate-mbit", "200",
            "--cc", "fixed");
        System.out.println(out);
        assertThat(exit).as("%s%s", out, err).isZero();
        assertThat(out.toString()).contains("| fixed | FIXED").contains("| all |");
        // Both senders measured together and their bytes passed the bottleneck's per-port counters.
        assertThat(out.toString()).containsPattern("sender 0: .*through the bottleneck \\d+\\.\\d Mb/s")
            .containsPattern("sender 1: .*through the bottleneck \\d+\\.\\d Mb/s");
    }
}
