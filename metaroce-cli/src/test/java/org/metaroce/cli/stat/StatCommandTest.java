// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.cli.stat;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.InetAddress;
import java.nio.file.Files;
import java.nio.file.Path;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.metaroce.cli.Metaroce;
import org.metaroce.netty.CounterDirectory;
import org.metaroce.netty.CounterFile;
import org.metaroce.netty.DeviceConfig;
import org.metaroce.netty.MetaRoceDevice;
import org.metaroce.netty.ObservabilityConfig;
import org.metaroce.netty.Transport;
import picocli.CommandLine;

/** {@code metaroce stat} against a device of this process, found through a directory of its own. */
class StatCommandTest {
    private static final long PID = ProcessHandle.current().pid();

    @TempDir
    Path base;

    private record Run(int exit, String out, String err) {
    }

    private static Run run(final String... args) {
        final CommandLine cl = Metaroce.commandLine();
        final StringWriter out = new StringWriter();
        final StringWriter err = new StringWriter();
        cl.setOut(new PrintWriter(out, true));
        cl.setErr(new PrintWriter(err, true));
        final int exit = cl.execute(args);
        return new Run(exit, out.toString(), err.toString());
    }

    private MetaRoceDevice device() {
        return new MetaRoceDevice(new DeviceConfig().bindAddress(InetAddress.getLoopbackAddress()).endpointPort(0)
            .entropyPortRange(2, 0).transport(Transport.NIO)
            .observability(new ObservabilityConfig().countersBase(base).countersIntervalNs(1_000_000)));
    }

    @Test
    void jsonListsEveryCounterOfEveryDevice() throws Exception {
        try (MetaRoceDevice a = device(); MetaRoceDevice b = device()) {
            final Run r = run("stat", "--dir", base.toString(), "--json", "--all", Long.toString(PID));
            assertThat(r.exit()).as(r.err()).isZero();
            final JsonNode doc = new ObjectMapper().readTree(r.out());
            assertThat(doc.get("pid").asLong()).isEqualTo(PID);
            assertThat(doc.get("devices")).hasSize(2);
            final JsonNode first = doc.get("devices").get(0);
            assertThat(first.get("description").asText()).startsWith("device /127.0.0.1:");
            boolean duty = false;
            for (final JsonNode c : first.get("counters")) {
                if (c.get("label").asText().equals("driver DUTY_CYCLES")) {
                    duty = true;
                    assertThat(c.get("type").asText()).isEqualTo("DRIVER");
                }
            }
            assertThat(duty).as("driver DUTY_CYCLES in %s", r.out()).isTrue();
        }
    }

    @Test
    void refreshesShowRatesOfCountersThatMove() {
        try (MetaRoceDevice a = device()) {
            // A DEDICATED device's duty cycles keep running: DUTY_CYCLES grows between refreshes.
            final Run r = run("stat", "--dir", base.toString(), "--count", "2", "--interval", "0.2", "--no-clear",
                "--filter", "DUTY_CYCLES");
            assertThat(r.exit()).as(r.err()).isZero();
            assertThat(r.out().split("metaroce stat: pid " + PID, -1)).hasSize(3);
            final String second = r.out().substring(r.out().lastIndexOf("metaroce stat:"));
            final String line = second.lines().filter(l -> l.contains("driver DUTY_CYCLES")).findFirst().orElseThrow();
            // Label, value, and a rate: three columns.
            assertThat(line.trim().split("\\s{2,}")).as(line).hasSize(3);
        }
    }

    @Test
    void aDeadProcessIsReportedStaleAndTheOnlyLiveOneIsFoundWithoutPid() throws Exception {
        final Process gone = new ProcessBuilder("true").start();
        gone.waitFor();
        final Path stale = CounterDirectory.forProcess(base, gone.pid());
        Files.createDirectories(stale);
        // A real counters file, with the dead pid written into its header (offset 16).
        CounterFile.create(stale.resolve("device-9.counters"), 256, "old").close();
        patchPid(stale.resolve("device-9.counters"), gone.pid());
        final Run staleRun = run("stat", "--dir", base.toString(), "--json", Long.toString(gone.pid()));
        assertThat(staleRun.exit()).isEqualTo(1);
        assertThat(staleRun.err()).contains("is not running");
        assertThat(run("stat", "--dir", base.toString(), "--json").err()).contains("no running MetaRoCE process");

        try (MetaRoceDevice a = device()) {
            // Opening a device removed the stale directory; the live one is found by itself.
            assertThat(stale).doesNotExist();
            final Run r = run("stat", "--dir", base.toString(), "--json");
            assertThat(r.exit()).as(r.err()).isZero();
            assertThat(r.out()).contains("\"pid\":" + PID);
            final Run list = run("stat", "--dir", base.toString(), "--list");
            assertThat(list.out()).contains("pid " + PID).contains("device-" + a.endpointPort() + ".counters");
        }
    }

    @Test
    void traceShowsTheStateChangesOfAQueuePair() throws Exception {
        try (MetaRoceDevice a = device()) {
            final int qpn = a.call(ep -> {
                final org.metaroce.core.verbs.CompletionQueue cq = ep.createCompletionQueue(16);
                final org.metaroce.core.engine.QueuePair qp = ep.createQueuePair(ep.allocateProtectionDomain(), cq, cq,
                    org.metaroce.core.engine.QueuePairCapabilities.defaults());
                qp.modify(org.metaroce.core.verbs.QpState.INIT, new org.metaroce.core.verbs.QpAttributes().port(1)
                    .accessFlags(org.metaroce.core.verbs.AccessFlags.ALL));
                return qp.qpn();
            });
            final String expected = String.format("QP 0x%06x STATE INIT", qpn);
            Run r = null;
            final long deadline = System.nanoTime() + 5_000_000_000L;
            while (System.nanoTime() - deadline < 0) {
                r = run("trace", "--dir", base.toString(), "--qp", String.format("0x%x", qpn), Long.toString(PID));
                if (r.out().contains(expected)) {
                    break;
                }
                Thread.sleep(20);
            }
            assertThat(r.exit()).as(r.err()).isZero();
            // Its time: relative to the newest event (itself), or "(before traffic)" when the
            // endpoint had not yet been given a time.
            assertThat(r.out()).containsPattern("(\\+0\\.000 ms|\\(before traffic\\)) "
                + java.util.regex.Pattern.quote(expected));
            // Another QP number: nothing.
            assertThat(run("trace", "--dir", base.toString(), "--qp", Integer.toString(qpn + 1), Long.toString(PID))
                .out()).doesNotContain("STATE");
        }
    }

    @Test
    void valuesAreGroupedByThousands() {
        assertThat(StatView.grouped(0)).isEqualTo("0");
        assertThat(StatView.grouped(999)).isEqualTo("999");
        assertThat(StatView.grouped(1_234_567)).isEqualTo("1,234,567");
        assertThat(StatView.grouped(-1000)).isEqualTo("-1,000");
        assertThat(StatView.grouped(Long.MIN_VALUE)).isEqualTo("-9,223,372,036,854,775,808");
    }

    private static void patchPid(final Path file, final long pid) throws Exception {
        try (java.nio.channels.FileChannel ch = java.nio.channels.FileChannel.open(file,
            java.nio.file.StandardOpenOption.WRITE)) {
            final java.nio.ByteBuffer b = java.nio.ByteBuffer.allocate(8).order(java.nio.ByteOrder.LITTLE_ENDIAN);
            b.putLong(0, pid);
            ch.write(b, 16);
        }
    }
}
