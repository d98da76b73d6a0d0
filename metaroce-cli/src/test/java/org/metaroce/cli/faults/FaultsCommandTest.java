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
    void badArgumentsExitWithTwo() {
        final StringWriter section = new StringWriter();
        assertThat(run(section, "faults", "--sections", "loss,nosuch")).isEqualTo(2);
        assertThat(section.toString()).contains("unknown section nosuch");

        final StringWriter reps = new StringWriter();
        assertThat(run(reps, "faults", "-r", "0")).isEqualTo(2);
        assertThat(reps.toString()).contains("--reps");
    }
}
