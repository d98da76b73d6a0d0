// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.netty;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.metaroce.core.verbs.PostStatus;
import org.metaroce.core.verbs.SendFlags;
import org.metaroce.core.verbs.SendRequest;
import org.metaroce.core.verbs.WcStatus;
import org.metaroce.core.verbs.WrOpcode;

/**
 * A capture of the loopback interface while a device sends with UDP GSO sees one UDP payload per
 * GSO batch (the kernel captures before segmentation): with the dissector every captured frame
 * decodes as MetaRoCE, each packet of each batch with a verified Integrity Check, and the packets
 * add up to no more than the datagrams the devices sent (on a quiet host, exactly as many). Needs
 * root (to capture), dumpcap and tshark, and a transport with GSO; skipped with the reason
 * otherwise.
 */
class LoopbackGsoCaptureTest {
    @TempDir
    Path dir;

    @Test
    void everyPacketOfEveryGsoBatchDecodesWithAVerifiedIntegrityCheck() throws Exception {
        assumeTrue("root".equals(System.getProperty("user.name")),
            "capturing packets needs root; running as " + System.getProperty("user.name"));
        final String dumpcap = DeviceCaptureTest.onPath("dumpcap");
        final String tshark = DeviceCaptureTest.onPath("tshark");
        assumeTrue(dumpcap != null && tshark != null, "dumpcap/tshark not installed: apt-get install -y tshark");
        assumeTrue(Transport.epollAvailable(), "UDP GSO needs the epoll transport here");
        final Path pcap = dir.resolve("lo.pcapng");
        Process capture = null;
        // Bursts of 16 packets per path: consecutive packets to one socket make GSO batches (as the tools do).
        try (DevicePair p = new DevicePair(Transport.EPOLL, ThreadingMode.DEDICATED, 4,
            c -> c.endpointConfig().pathBurstPackets(16), c -> c.endpointConfig().pathBurstPackets(16))) {
            assumeTrue(p.a.device.gsoActive(), "UDP GSO is not active on this kernel");
            final StringBuilder filter = new StringBuilder("udp and (port ").append(p.a.device.endpointPort())
                .append(" or port ").append(p.b.device.endpointPort());
            for (final int port : p.a.device.entropyPorts()) {
                filter.append(" or port ").append(port);
            }
            filter.append(')');
            capture = new ProcessBuilder(dumpcap, "-q", "-i", "lo", "-f", filter.toString(), "-w", pcap.toString())
                .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
            awaitCaptureStarted(capture, pcap);

            p.connect(4096);
            final int status = p.a.device.call(ep -> p.a.qp.postSend(new SendRequest(1).wrId(1)
                .opcode(WrOpcode.RDMA_WRITE).sendFlags(SendFlags.SIGNALED)
                .addSge(p.a.address(0), 1 << 20, p.a.mr.lkey()).remoteAddr(p.b.address(0)).rkey(p.b.mr.rkey())));
            assertThat(status).isEqualTo(PostStatus.OK);
            assertThat(p.awaitCompletions(1, 0)).as(p::describe).isTrue();
            assertThat(p.a.sendCompletions.get(0).status()).isEqualTo(WcStatus.SUCCESS);
            Thread.sleep(300); // the last ACKs reach the capture
            p.a.device.close();
            p.b.device.close();
            capture.destroy();
            assertThat(capture.waitFor(10, TimeUnit.SECONDS)).as("dumpcap stopped").isTrue();
            final long sent = p.a.device.counters().get(DriverCounter.DATAGRAMS_SENT)
                + p.b.device.counters().get(DriverCounter.DATAGRAMS_SENT);
            final long gsoWrites = p.a.device.counters().get(DriverCounter.GSO_WRITES);
            assertThat(gsoWrites).as("GSO writes by the sender").isPositive();

            final List<String[]> frames = decode(tshark, pcap);
            int packets = 0;
            int batches = 0;
            for (final String[] f : frames) {
                assertThat(f[0]).as("protocol of a captured frame").isEqualTo("MetaRoCE");
                final String[] statuses = f[1].split(";");
                assertThat(statuses).as("integrity status of each packet in a frame").containsOnly("good");
                if (!f[2].isEmpty()) {
                    batches++;
                    assertThat(Integer.parseInt(f[2].split(";")[0])).isEqualTo(statuses.length);
                }
                packets += statuses.length;
            }
            System.out.println("loopback capture: " + frames.size() + " frames, " + batches + " GSO batches, "
                + packets + " MetaRoCE packets; devices sent " + sent + " datagrams in " + gsoWrites + " GSO writes");
            assertThat(batches).as("frames holding a GSO batch").isPositive();
            // At most what was sent (a capture on a loaded host may miss some, never invent any):
            // a batch split wrongly would count more packets than the devices sent.
            assertThat(packets).as("MetaRoCE packets in the capture vs datagrams the devices sent")
                .isPositive().isLessThanOrEqualTo((int) sent);
        } finally {
            if (capture != null && capture.isAlive()) {
                capture.destroyForcibly();
            }
        }
    }

    private static void awaitCaptureStarted(final Process capture, final Path pcap) throws Exception {
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (!(Files.exists(pcap) && Files.size(pcap) > 0)) {
            assertThat(capture.isAlive()).as("dumpcap running").isTrue();
            assertThat(System.nanoTime() - deadline).as("dumpcap started within 20 s").isNegative();
            Thread.sleep(20);
        }
        Thread.sleep(200); // the filter attaches just after the file header is written
    }

    /** @return per frame: protocol column, integrity statuses (;-joined), gso.count values (;-joined or empty) */
    private static List<String[]> decode(final String tshark, final Path pcap) throws Exception {
        final Path lua = DeviceCaptureTest.repoRoot().resolve("docs/wireshark/metaroce.lua");
        final Process p = new ProcessBuilder(tshark, "-n", "-r", pcap.toString(), "-X", "lua_script:" + lua,
            "-T", "fields", "-E", "separator=,", "-E", "occurrence=a", "-E", "aggregator=;",
            "-e", "_ws.col.Protocol", "-e", "metaroce.integrity.status", "-e", "metaroce.gso.count")
            .redirectError(ProcessBuilder.Redirect.DISCARD).start();
        final String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(120, TimeUnit.SECONDS)).isTrue();
        final List<String[]> frames = new ArrayList<>();
        for (final String line : out.split("\n")) {
            if (!line.isBlank()) {
                frames.add(line.split(",", -1));
            }
        }
        assertThat(frames).as("frames captured").isNotEmpty();
        return frames;
    }
}
