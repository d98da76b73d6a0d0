// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.cli.faults;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;

import org.junit.jupiter.api.Test;
import org.metaroce.cli.Metaroce;
import picocli.CommandLine;

/** {@code metaroce faults} rejects bad arguments before it needs root (exit 2, naming the option). */
class FaultsCommandTest {
    private static int run(final StringWriter err, final String... args) {
        final CommandLine cl = Metaroce.commandLine();
        cl.setOut(new PrintWriter(new StringWriter(), true));
        cl.setErr(new PrintWriter(err, true));
        return cl.execute(args);
    }

    @Test
    void aRunsCaptureIsNamedByToolFaultAndRunInCharactersAnyShellTakes() {
        assertThat(FaultsCommand.captureName("write_bw", Fault.blackhole(3), 0)).isEqualTo("write_bw-blackhole-3s-1.pcap");
        assertThat(FaultsCommand.captureName("send_bw", Fault.killServer(), 9)).isEqualTo("send_bw-kill-9-server-10.pcap");
    }

    @Test
    void badArgumentsExitWithTwo() {
        final StringWriter section = new StringWriter();
        assertThat(run(section, "faults", "--sections", "loss,nosuch")).isEqualTo(2);
        assertThat(section.toString()).contains("unknown section nosuch");

        final StringWriter pcapDir = new StringWriter();
        assertThat(run(pcapDir, "faults", "--pcap-dir")).isEqualTo(2);
        assertThat(pcapDir.toString()).contains("--pcap-dir");

        final StringWriter keep = new StringWriter();
        assertThat(run(keep, "faults", "--keep-captures")).isEqualTo(2);
        assertThat(keep.toString()).contains("--keep-captures keeps what --pcap-dir records");

        final StringWriter reps = new StringWriter();
        assertThat(run(reps, "faults", "-r", "0")).isEqualTo(2);
        assertThat(reps.toString()).contains("--reps");
    }
}
