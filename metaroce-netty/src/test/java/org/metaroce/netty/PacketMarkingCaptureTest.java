// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.netty;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.File;
import java.io.IOException;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.metaroce.core.connection.Connection;
import org.metaroce.core.verbs.WcStatus;
import org.metaroce.core.verbs.WorkCompletion;

/**
 * What the driver's datagrams carry in their IP headers, read from a real capture on the loopback
 * interface (dumpcap) and decoded by tshark: a connection is set up through the connection manager
 * and an RDMA WRITE is acknowledged, over IPv4 and over IPv6.
 * <ul>
 *   <li>ENC-012: every packet from an entropy socket (data, ACKs) carries the data DSCP (26);</li>
 *   <li>ENC-013: connection-manager packets (from the endpoint socket) carry the control DSCP (48);</li>
 *   <li>ENC-015/016: the ECN field is Not-ECT (the driver cannot read CE marks);</li>
 *   <li>ENC-010: over IPv6 the flow label is non-zero and, for one pair of addresses, a function of
 *       the source port (the entropy value): one label per port, distinct across ports;</li>
 *   <li>IPv4 datagrams carry DF (path MTU discovery, ENC-021: no IP fragmentation).</li>
 * </ul>
 * Needs root (to capture), dumpcap and tshark; skipped with the reason otherwise (CI runs as root
 * and installs tshark).
 */
class PacketMarkingCaptureTest {
    private static final Duration WAIT = Duration.ofSeconds(15);
    private static final long SERVICE = 0xD5C9L;

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"127.0.0.1", "::1"})
    void headersCarryDscpFlowLabelAndDf(final String host) throws Exception {
        assumeTrue("root".equals(System.getProperty("user.name")),
            "capturing packets needs root (CI runs as root); running as " + System.getProperty("user.name"));
        final String dumpcap = onPath("dumpcap");
        final String tshark = onPath("tshark");
        assumeTrue(dumpcap != null && tshark != null, "dumpcap/tshark not installed: apt-get install -y tshark");
        final InetAddress bind = InetAddress.getByName(host);
        final boolean v6 = bind instanceof java.net.Inet6Address;
        if (v6) {
            try (java.net.DatagramSocket probe = new java.net.DatagramSocket(0, bind)) {
                probe.getLocalPort();
            } catch (final java.net.SocketException ex) {
                org.junit.jupiter.api.Assumptions.abort("no IPv6 loopback here: " + ex);
            }
        }

        final Path pcap = Files.createTempFile("metaroce-marking", ".pcapng");
        final ExecutorService pool = Executors.newSingleThreadExecutor();
        Process capture = null;
        try (ConnectionServiceTest.Side client = new ConnectionServiceTest.Side(ThreadingMode.DEDICATED, "mk-c", bind);
             ConnectionServiceTest.Side server = new ConnectionServiceTest.Side(ThreadingMode.DEDICATED, "mk-s", bind)) {
            final Set<Integer> endpointPorts = Set.of(client.address().getPort(), server.address().getPort());
            final Set<Integer> entropyPorts = new HashSet<>();
            for (final int p : client.device.entropyPorts()) {
                entropyPorts.add(p);
            }
            for (final int p : server.device.entropyPorts()) {
                entropyPorts.add(p);
            }
            final StringBuilder filter = new StringBuilder("udp and (");
            for (final int p : endpointPorts) {
                filter.append(filter.length() > 9 ? " or " : "").append("port ").append(p);
            }
            filter.append(')');
            capture = new ProcessBuilder(dumpcap, "-q", "-i", "lo", "-f", filter.toString(), "-w", pcap.toString())
                .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
            awaitCaptureStarted(capture, pcap);

            server.service.listen(SERVICE, server.listenParams());
            final Future<Connection> accepted = pool.submit(() ->
                server.service.accept(server.service.awaitRequest(SERVICE, WAIT), server.regionInfo(), WAIT));
            final Connection connection = client.service.connect(server.address(), SERVICE, client.connectParams(), WAIT);
            accepted.get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
            client.postWrite(connection, connection.peerPrivateData());
            final WorkCompletion wc = client.awaitCompletion();
            assertThat(wc.status()).isEqualTo(WcStatus.SUCCESS);
            // Let the last ACKs reach the capture before it stops.
            Thread.sleep(300);
            capture.destroy();
            assertThat(capture.waitFor(10, TimeUnit.SECONDS)).as("dumpcap stopped").isTrue();

            final List<String[]> rows = decode(tshark, pcap, v6);
            System.out.println(host + ": " + rows.size() + " datagrams captured; endpoint ports " + endpointPorts
                + ", entropy ports " + entropyPorts);
            int control = 0;
            int data = 0;
            final Map<Integer, Set<String>> labelsByPort = new HashMap<>();
            for (final String[] r : rows) {
                final int src = Integer.parseInt(r[0]);
                final int dscp = Integer.parseInt(r[2]);
                final int ecn = Integer.parseInt(r[3]);
                // ECT(0) where the transport reads ECN (native) [ENC-015], else Not-ECT.
                assertThat(ecn).as("ECN field of a datagram from port %d (%s)", src, client.device.transport())
                    .isEqualTo(client.device.readsEcn() ? 2 : 0);
                if (endpointPorts.contains(src)) {
                    control++;
                    assertThat(dscp).as("DSCP of a connection-manager packet from port %d [ENC-013]", src)
                        .isEqualTo(DeviceConfig.DEFAULT_CONTROL_DSCP);
                } else {
                    assertThat(entropyPorts).as("source port").contains(src);
                    data++;
                    assertThat(dscp).as("DSCP of a packet from entropy port %d [ENC-012]", src)
                        .isEqualTo(DeviceConfig.DEFAULT_DATA_DSCP);
                }
                if (v6) {
                    final String label = r[4];
                    assertThat(Long.decode(label)).as("IPv6 flow label from port %d [ENC-010]", src).isNotZero();
                    labelsByPort.computeIfAbsent(src, k -> new HashSet<>()).add(label);
                } else {
                    assertThat(r[4]).as("DF flag of an IPv4 datagram from port %d", src).isIn("1", "True", "true");
                }
            }
            assertThat(control).as("connection-manager datagrams captured").isGreaterThanOrEqualTo(3);
            assertThat(data).as("data and ACK datagrams captured").isGreaterThanOrEqualTo(2);
            if (v6) {
                final Set<String> all = new HashSet<>();
                for (final Map.Entry<Integer, Set<String>> e : labelsByPort.entrySet()) {
                    assertThat(e.getValue()).as("flow labels used by port %d", e.getKey()).hasSize(1);
                    all.addAll(e.getValue());
                }
                assertThat(all).as("distinct flow labels across source ports").hasSize(labelsByPort.size());
            }
        } finally {
            if (capture != null && capture.isAlive()) {
                capture.destroyForcibly();
            }
            pool.shutdownNow();
            Files.deleteIfExists(pcap);
        }
    }

    /** dumpcap writes the pcapng section header once it captures: wait for it (not for a fixed time). */
    private static void awaitCaptureStarted(final Process capture, final Path pcap) throws Exception {
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (!(Files.exists(pcap) && Files.size(pcap) > 0)) {
            if (!capture.isAlive()) {
                throw new AssertionError("dumpcap exited with " + capture.exitValue() + " before capturing");
            }
            if (System.nanoTime() - deadline > 0) {
                throw new AssertionError("dumpcap did not start capturing within 20 s");
            }
            Thread.sleep(20);
        }
        // The header precedes the filter's attachment by a hair; a short grace avoids losing the
        // first CONNECT_REQUEST (it would be retransmitted anyway, but the count below wants it).
        Thread.sleep(200);
    }

    private static List<String[]> decode(final String tshark, final Path pcap, final boolean v6)
        throws IOException, InterruptedException {
        final List<String> command = new ArrayList<>(List.of(tshark, "-r", pcap.toString(), "-T", "fields",
            "-E", "separator=,", "-e", "udp.srcport", "-e", "udp.dstport"));
        if (v6) {
            command.addAll(List.of("-e", "ipv6.tclass.dscp", "-e", "ipv6.tclass.ecn", "-e", "ipv6.flow"));
        } else {
            command.addAll(List.of("-e", "ip.dsfield.dscp", "-e", "ip.dsfield.ecn", "-e", "ip.flags.df"));
        }
        final Process p = new ProcessBuilder(command).redirectErrorStream(false).start();
        final byte[] out = p.getInputStream().readAllBytes();
        final String err = new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).as("tshark exit status; stderr: %s", err).isZero();
        final List<String[]> rows = new ArrayList<>();
        for (final String line : new String(out, StandardCharsets.UTF_8).split("\n")) {
            if (!line.isBlank()) {
                rows.add(line.trim().split(","));
            }
        }
        return rows;
    }

    private static String onPath(final String tool) {
        for (final String dir : System.getenv().getOrDefault("PATH", "").split(File.pathSeparator)) {
            final File f = new File(dir, tool);
            if (f.canExecute()) {
                return f.getPath();
            }
        }
        return null;
    }
}
