// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.cli.sim;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.metaroce.cli.Metaroce;
import picocli.CommandLine;

/** {@code metaroce sim}: a small head-to-head run end to end, and argument errors (exit 2). */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class SimCommandTest {
    private record Run(int exitCode, String out, String err) {
    }

    private static Run run(final String... args) {
        final StringWriter out = new StringWriter();
        final StringWriter err = new StringWriter();
        final CommandLine cl = Metaroce.commandLine();
        cl.setOut(new PrintWriter(out, true));
        cl.setErr(new PrintWriter(err, true));
        final int code = cl.execute(args);
        return new Run(code, out.toString(), err.toString());
    }

    @Test
    void incastBothTransportsWritesReportsAndComparison(@TempDir final Path tmp) throws Exception {
        final Run r = run("sim", "incast", "--hosts", "5", "--hosts-per-leaf", "4", "--bytes", "65536",
            "--transport", "both", "--seed", "3", "--out", tmp.toString());
        assertThat(r.exitCode()).as(r.toString()).isZero();
        assertThat(r.out()).contains("incast rocev2: completed, 4/4 flows").contains("incast metaroce: completed, 4/4 flows");
        for (final String t : new String[] {"rocev2", "metaroce"}) {
            for (final String f : new String[] {"flows.csv", "queue.csv", "counters.csv", "summary.md", "queue.svg",
                "slowdown_cdf.svg"}) {
                assertThat(tmp.resolve(t).resolve(f)).exists();
            }
            assertThat(Files.readAllLines(tmp.resolve(t).resolve("flows.csv"))).hasSize(5);
        }
        assertThat(Files.readString(tmp.resolve("comparison.md"))).contains("| metric | rocev2 | metaroce |");
        assertThat(Files.readString(tmp.resolve("slowdown_cdf.svg"))).startsWith("<svg").contains("polyline");
    }

    @Test
    void badArgumentsExitWithTwoAndSayWhy() {
        final Run scenario = run("sim", "nosuch");
        assertThat(scenario.exitCode()).isEqualTo(2);
        assertThat(scenario.err()).contains("unknown scenario 'nosuch'");
        final Run transport = run("sim", "incast", "--transport", "tcp");
        assertThat(transport.exitCode()).isEqualTo(2);
        assertThat(transport.err()).contains("unknown transport 'tcp'");
        final Run rate = run("sim", "incast", "--rate-gbps", "3");
        assertThat(rate.exitCode()).isEqualTo(2);
        final Run cc = run("sim", "incast", "--cc", "cubic");
        assertThat(cc.exitCode()).isEqualTo(2);
        assertThat(cc.err()).contains("--cc must be delay, credit, delay+credit or fixed:N, got 'cubic'");
    }

    @Test
    void creditProfileRunsReceiverCreditNegotiated(@TempDir final Path tmp) throws Exception {
        final Run r = run("sim", "incast", "--hosts", "5", "--hosts-per-leaf", "4", "--bytes", "65536",
            "--transport", "metaroce", "--cc", "credit", "--seed", "3", "--out", tmp.toString());
        assertThat(r.exitCode()).as(r.toString()).isZero();
        assertThat(r.out()).contains("incast metaroce: completed, 4/4 flows");
        assertThat(Files.readString(tmp.resolve("summary.md"))).contains("cc=RECEIVER_CREDIT (8.6)");
        final Path combined = tmp.resolve("combined");
        final Run d = run("sim", "incast", "--hosts", "5", "--hosts-per-leaf", "4", "--bytes", "65536",
            "--transport", "metaroce", "--cc", "delay+credit", "--seed", "3", "--out", combined.toString());
        assertThat(d.exitCode()).as(d.toString()).isZero();
        assertThat(Files.readString(combined.resolve("summary.md")))
            .contains("metaroce+delay+credit (cc=DEFAULT (delay-based, 8.5) under receiver credit (8.6)");
    }
}
