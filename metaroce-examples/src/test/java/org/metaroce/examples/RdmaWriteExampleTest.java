// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.examples;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/** The WRITE example end to end: the server's memory holds what the client wrote. */
class RdmaWriteExampleTest {
    @Test
    void theServerSeesTheBytesTheClientWrote() throws Exception {
        assertThat(RdmaWriteExample.runOnLoopback()).isEqualTo(RdmaWriteExample.MESSAGE);
    }

    /**
     * The README's usage — INVOKER devices built on plain (not Netty) threads — logs no warning.
     * slf4j-simple writes to System.err: the probe proves a warning would be seen.
     */
    @Test
    void theReadmeUsageLogsNoWarning() throws Exception {
        final ByteArrayOutputStream captured = new ByteArrayOutputStream();
        final PrintStream original = System.err;
        System.setErr(new PrintStream(captured, true, StandardCharsets.UTF_8));
        try {
            LoggerFactory.getLogger(RdmaWriteExampleTest.class).warn("probe");
            assertThat(RdmaWriteExample.runOnLoopback()).isEqualTo(RdmaWriteExample.MESSAGE);
        } finally {
            System.setErr(original);
        }
        final String log = captured.toString(StandardCharsets.UTF_8);
        original.print(log);
        assertThat(log).as("the probe warning was captured").contains("WARN " + RdmaWriteExampleTest.class.getName() + " - probe");
        assertThat(log.lines().filter(l -> l.contains(" WARN ") && !l.endsWith(" - probe")))
            .as("warnings logged while the example ran").isEmpty();
    }
}
