// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.cli.faults;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.List;

import org.junit.jupiter.api.Test;

/**
 * What a trial reads from the tools' output (counter lines, the JSON report, the error line) and
 * how the campaign labels and tabulates it; needs no root, unlike the trials themselves.
 */
class TrialOutputTest {
    @Test
    void retransmissionsOfBothEndsAreSummedFromTheirCounterLines() {
        final String client = "write_bw: 1.0 s, 120 messages, 0.06 Gb/sec\n"
            + "{\"counters\":\"client\",\"outcome\":\"ok\",\"retransmits\":12,\"endpoint\":{}}\n";
        final String server = "{\"counters\":\"server\",\"outcome\":\"ok\",\"retransmits\":3,\"endpoint\":{}}\n";
        assertThat(Trial.retransmits(server, client)).isEqualTo(15);
        // A line cut short by SIGKILL gives no figure; no line at all gives -1 (unknown, not 0).
        assertThat(Trial.retransmits("{\"counters\":\"server\",\"outc", client)).isEqualTo(12);
        assertThat(Trial.retransmits("", "metaroce write_bw: failed\n")).isEqualTo(-1);
    }

    @Test
    void verifyOutcomeAndErrorLine() {
        assertThat(Trial.verify("{\"test\":\"send_bw\",\"verify\":\"passed\"}\n")).isEqualTo("passed");
        assertThat(Trial.verify("")).isEqualTo("-");
        assertThat(Trial.errorLine("send_bw: 1.0 s, 1 messages\nmetaroce send_bw: SEND failed on QP 7: "
            + "RETRY_EXC_ERR (the peer stopped answering)\n"))
            .isEqualTo("SEND failed on QP 7: RETRY_EXC_ERR (the peer stopped answering)");
        assertThat(Trial.errorLine("{\"counters\":\"client\"}\n")).isEmpty();
    }

    @Test
    void faultLabelsAndDropProbability() {
        assertThat(Fault.loss(Fault.Direction.CLIENT_TO_SERVER, 0.1).label()).isEqualTo("loss 0.1% c->s");
        assertThat(Fault.loss(Fault.Direction.BOTH, 5).permille()).isEqualTo(50);
        assertThat(Fault.loss(Fault.Direction.BOTH, 0)).isEqualTo(Fault.none());
        assertThat(Fault.stall(Fault.End.CLIENT, 0.2).label()).isEqualTo("stall client 0.2s");
        assertThat(Fault.blackhole(10).label()).isEqualTo("blackhole 10s");
        assertThat(Fault.killServer().midRun()).isTrue();
        assertThat(Fault.none().midRun()).isFalse();
    }

    @Test
    void tableSumsTheRunsOfARowAndCountsAnErrorOnce() {
        final Fault f = Fault.loss(Fault.Direction.SERVER_TO_CLIENT, 1);
        final List<Trial.Result> runs = List.of(
            new Trial.Result("send_bw", f, true, 0, 0, "passed", 10, 0, 12, 0, 8000, -1, "", ""),
            new Trial.Result("send_bw", f, false, 1, 0, "-", 20, 0, 30, 0, 9500, -1, "SEND failed on QP 7: RETRY_EXC_ERR", ""),
            new Trial.Result("send_bw", f, false, 1, 0, "-", 0, 0, 3, 0, 9000, -1, "SEND failed on QP 9: RETRY_EXC_ERR", ""));
        final StringWriter out = new StringWriter();
        new CampaignTable(List.of(runs)).print(new PrintWriter(out));
        assertThat(out.toString()).contains("| send_bw | loss 1% s->c | 1/3 | 30 | 45 | 1.50 | 9.5 | - | "
            + "SEND failed on QP n: RETRY_EXC_ERR |");
    }

    @Test
    void soakReadsTheHistogramTotalAndJudgesGrowth() {
        final String histogram = " num     #instances         #bytes  class name (module)\n"
            + "   1:          2829        3291984  [J (java.base@17.0.15)\n"
            + "Total         99358        4602856\n";
        assertThat(HeapProbe.parseLiveKb(histogram)).isEqualTo(4602856 / 1024);
        assertThat(HeapProbe.parseLiveKb("jcmd: no such process")).isEqualTo(-1);
        // 10% + 1 MiB: 10,000 KiB may become 12,024 KiB, not 12,025; a missing figure fails.
        assertThat(Trial.heapFlat(10_000, 12_024)).isTrue();
        assertThat(Trial.heapFlat(10_000, 12_025)).isFalse();
        assertThat(Trial.heapFlat(-1, 10_000)).isFalse();
        assertThat(Fault.soak(1, 60, 64).label()).isEqualTo("soak 64 QPs 60s loss 1% both");
        assertThat(Trial.paranoid(List.of("java", "-cp", "x")))
            .containsExactly("java", "-Dio.netty.leakDetection.level=PARANOID", "-cp", "x");
    }
}
