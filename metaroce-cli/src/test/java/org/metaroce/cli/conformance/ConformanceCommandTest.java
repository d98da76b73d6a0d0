// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.cli.conformance;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.InetAddress;
import java.nio.file.Files;
import java.nio.file.Path;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.metaroce.cli.Metaroce;
import org.metaroce.conformance.agent.AgentServer;
import org.metaroce.conformance.agent.ReferenceBackend;
import picocli.CommandLine;

/** {@code metaroce conformance}: listing, argument errors, and a run against the reference agent. */
class ConformanceCommandTest {
    private record Run(int exit, String out, String err) {
    }

    private static Run run(final String... args) {
        final StringWriter out = new StringWriter();
        final StringWriter err = new StringWriter();
        final CommandLine cl = Metaroce.commandLine();
        cl.setOut(new PrintWriter(out, true));
        cl.setErr(new PrintWriter(err, true));
        return new Run(cl.execute(args), out.toString(), err.toString());
    }

    @Test
    void listsTheCases() {
        final Run r = run("conformance", "--list");
        assertThat(r.exit()).isZero();
        assertThat(r.out().lines().count()).isGreaterThanOrEqualTo(60);
        assertThat(r.out()).contains("wire.integrity-check  MUST  [WIRE-040, WIRE-041, WIRE-050]");
    }

    @Test
    void runningWithoutAnAgentIsAnArgumentError() {
        final Run r = run("conformance");
        assertThat(r.exit()).isEqualTo(2);
        assertThat(r.err()).contains("--agent host:port is required");
    }

    @Test
    void sectionThreeAgainstTheReferenceAgentPassesAndWritesReports(@TempDir final Path dir) throws Exception {
        try (AgentServer agent = new AgentServer(new ReferenceBackend(InetAddress.getLoopbackAddress(), 0),
            InetAddress.getLoopbackAddress(), 0)) {
            final Path json = dir.resolve("r.json");
            final Path junit = dir.resolve("r.xml");
            final Run r = run("conformance", "--agent", "127.0.0.1:" + agent.address().getPort(), "--section",
                "3", "--seed", "5", "--json", json.toString(), "--junit", junit.toString());
            assertThat(r.exit()).as(r.out() + r.err()).isZero();
            final String[] lines = r.out().split("\\R");
            assertThat(lines[lines.length - 1]).matches("\\d+ passed, 0 failed, 0 skipped");
            assertThat(Files.readString(json)).contains("\"WIRE-041\":\"PASS\"").contains("\"seed\":5");
            assertThat(Files.readString(junit)).contains("<testsuite name=\"3 Packet formats\"");
        }
    }

    @Test
    void agentDeclaresEcnOnlyWithTheSelfTestFlag() {
        final AgentCommand plain = new AgentCommand();
        new CommandLine(plain).parseArgs("--control-port", "1");
        assertThat(plain.selfTestDeclareEcn).isFalse();
        final AgentCommand selfTest = new AgentCommand();
        new CommandLine(selfTest).parseArgs("--control-port", "1", "--self-test-declare-ecn");
        assertThat(selfTest.selfTestDeclareEcn).isTrue();
        assertThat(run("agent", "--help").out()).contains("--self-test-declare-ecn", "SELF-TESTS ONLY");
    }
}
