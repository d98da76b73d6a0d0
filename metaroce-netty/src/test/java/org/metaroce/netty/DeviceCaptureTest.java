// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.netty;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.File;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.zip.CRC32C;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.metaroce.core.verbs.PostStatus;
import org.metaroce.core.verbs.SendFlags;
import org.metaroce.core.verbs.SendRequest;
import org.metaroce.core.verbs.WcStatus;
import org.metaroce.core.verbs.WrOpcode;

/**
 * A device's own capture ({@link ObservabilityConfig#capture}): one record per MetaRoCE packet it
 * sent or received, each a whole packet whose Integrity Check verifies, and, where tshark is
 * installed, every record decodes with the dissector.
 */
class DeviceCaptureTest {
    @TempDir
    Path dir;

    /** One record of a pcap file: its UDP ports and payload. */
    private record Record(int sourcePort, int destinationPort, byte[] payload, int originalLength, int keptLength) {
    }

    private static Transport gsoTransport() {
        return Transport.epollAvailable() ? Transport.EPOLL : Transport.NIO;
    }

    @Test
    void everyPacketSentAndReceivedIsOneRecordWithAValidIntegrityCheck() throws Exception {
        final Path file = dir.resolve("a.pcap");
        final long sent;
        final long received;
        final int[] entropyPorts;
        final int endpointPort;
        try (PcapWriter writer = PcapWriter.open(file)) {
            try (DevicePair p = new DevicePair(gsoTransport(), ThreadingMode.DEDICATED, 4,
                c -> c.observability(new ObservabilityConfig().counters(false).capture(writer, true)),
                c -> c.observability(new ObservabilityConfig().counters(false)))) {
                p.connect(4096);
                final int length = 1 << 20;
                final int status = p.a.device.call(ep -> p.a.qp.postSend(new SendRequest(1).wrId(1)
                    .opcode(WrOpcode.RDMA_WRITE).sendFlags(SendFlags.SIGNALED)
                    .addSge(p.a.address(0), length, p.a.mr.lkey()).remoteAddr(p.b.address(0)).rkey(p.b.mr.rkey())));
                assertThat(status).isEqualTo(PostStatus.OK);
                assertThat(p.awaitCompletions(1, 0)).as(p::describe).isTrue();
                assertThat(p.a.sendCompletions.get(0).status()).isEqualTo(WcStatus.SUCCESS);
                entropyPorts = p.a.device.entropyPorts();
                endpointPort = p.a.device.endpointPort();
                p.a.device.close();
                sent = p.a.device.counters().get(DriverCounter.DATAGRAMS_SENT);
                received = p.a.device.counters().get(DriverCounter.DATAGRAMS_RECEIVED);
            }
            assertThat(writer.dropped()).isZero();
            assertThat(writer.recorded()).isEqualTo(sent + received);
        }
        final List<Record> records = read(file);
        assertThat(records).hasSize((int) (sent + received));
        int fromEntropyPorts = 0;
        int toEndpointPort = 0;
        for (final Record r : records) {
            assertThat(r.keptLength()).isEqualTo(r.originalLength());
            final byte[] pkt = r.payload();
            final int headers = (pkt[15] & 0xFF) * 4;
            final int payloadLength = ((pkt[12] & 0xFF) << 8) | (pkt[13] & 0xFF);
            // One MetaRoCE packet per record, even where the driver sent a GSO batch.
            assertThat(pkt.length).as("record length").isEqualTo(headers + payloadLength + 4);
            final CRC32C crc = new CRC32C();
            crc.update(pkt, 0, pkt.length - 4);
            assertThat(ByteBuffer.wrap(pkt, pkt.length - 4, 4).getInt() & 0xFFFFFFFFL).as("integrity check")
                .isEqualTo(crc.getValue());
            for (final int port : entropyPorts) {
                fromEntropyPorts += r.sourcePort() == port ? 1 : 0;
            }
            toEndpointPort += r.destinationPort() == endpointPort ? 1 : 0;
        }
        assertThat(fromEntropyPorts).as("records sent from A's entropy ports").isEqualTo((int) sent);
        assertThat(toEndpointPort).as("records received on A's endpoint port").isEqualTo((int) received);

        final String tshark = onPath("tshark");
        Assumptions.assumeTrue(tshark != null, "tshark not installed (apt-get install -y tshark): the "
            + "dissector check of the capture is skipped");
        final List<String> statuses = tshark(tshark, file, "metaroce.integrity.status");
        assertThat(statuses).hasSize(records.size()).containsOnly("good");
        assertThat(tshark(tshark, file, "_ws.col.Protocol")).containsOnly("MetaRoCE");
    }

    @Test
    void theCaptureStopsAtItsSizeLimit() throws Exception {
        final Path file = dir.resolve("small.pcap");
        try (PcapWriter writer = PcapWriter.open(file, 128, 4096)) {
            try (DevicePair p = new DevicePair(Transport.NIO, ThreadingMode.DEDICATED, 2,
                c -> c.observability(new ObservabilityConfig().counters(false).capture(writer, true)),
                c -> c.observability(new ObservabilityConfig().counters(false)))) {
                p.connect(4096);
                final int status = p.a.device.call(ep -> p.a.qp.postSend(new SendRequest(1).wrId(1)
                    .opcode(WrOpcode.RDMA_WRITE).sendFlags(SendFlags.SIGNALED)
                    .addSge(p.a.address(0), 1 << 20, p.a.mr.lkey()).remoteAddr(p.b.address(0)).rkey(p.b.mr.rkey())));
                assertThat(status).isEqualTo(PostStatus.OK);
                assertThat(p.awaitCompletions(1, 0)).as(p::describe).isTrue();
            }
            assertThat(writer.dropped()).isPositive();
            writer.close();
            assertThat(Files.size(file)).isLessThanOrEqualTo(4096);
            final List<Record> records = read(file);
            assertThat(records).hasSize((int) writer.recorded());
            // Snapshot length 128: IPv4 and UDP headers and the first 100 bytes of each packet.
            assertThat(records).allSatisfy(r -> assertThat(r.keptLength()).isLessThanOrEqualTo(128));
            final String tshark = onPath("tshark");
            Assumptions.assumeTrue(tshark != null, "tshark not installed (apt-get install -y tshark): the "
                + "dissector check of the snapped capture is skipped");
            // Cut packets still decode, their Integrity Check unverified (never reported bad).
            assertThat(tshark(tshark, file, "_ws.col.Protocol")).hasSize(records.size()).containsOnly("MetaRoCE");
            assertThat(tshark(tshark, file, "metaroce.integrity.status")).contains("unverified")
                .allSatisfy(status -> assertThat(status).isIn("unverified", "good"));
        }
    }

    /** Reads a nanosecond pcap of link type RAW with IPv4 records. */
    private static List<Record> read(final Path file) throws Exception {
        final ByteBuffer b = ByteBuffer.wrap(Files.readAllBytes(file)).order(ByteOrder.LITTLE_ENDIAN);
        assertThat(b.getInt()).as("magic (nanosecond pcap)").isEqualTo(0xA1B23C4D);
        b.position(20);
        assertThat(b.getInt()).as("link type RAW").isEqualTo(101);
        final List<Record> records = new ArrayList<>();
        while (b.remaining() >= 16) {
            b.order(ByteOrder.LITTLE_ENDIAN);
            b.getInt();
            b.getInt();
            final int kept = b.getInt();
            final int original = b.getInt();
            final byte[] frame = new byte[kept];
            b.get(frame);
            final ByteBuffer f = ByteBuffer.wrap(frame).order(ByteOrder.BIG_ENDIAN);
            assertThat(frame[0] >> 4).as("IP version").isEqualTo(4);
            final int sourcePort = f.getShort(20) & 0xFFFF;
            final int destinationPort = f.getShort(22) & 0xFFFF;
            final byte[] payload = new byte[kept - 28];
            System.arraycopy(frame, 28, payload, 0, payload.length);
            records.add(new Record(sourcePort, destinationPort, payload, original, kept));
        }
        return records;
    }

    private static List<String> tshark(final String tshark, final Path file, final String field) throws Exception {
        final Path lua = repoRoot().resolve("docs/wireshark/metaroce.lua");
        final Process p = new ProcessBuilder(tshark, "-n", "-r", file.toString(), "-X", "lua_script:" + lua,
            "-T", "fields", "-E", "occurrence=a", "-E", "aggregator=;", "-e", field)
            .redirectError(ProcessBuilder.Redirect.DISCARD).start();
        final String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(120, TimeUnit.SECONDS)).isTrue();
        final List<String> values = new ArrayList<>();
        for (final String line : out.split("\n")) {
            if (!line.isBlank()) {
                values.add(line.trim());
            }
        }
        return values;
    }

    static Path repoRoot() {
        final String property = System.getProperty("metaroce.repo.root");
        Path p = property != null && !property.isBlank() ? Paths.get(property) : Paths.get("").toAbsolutePath();
        while (p != null && !Files.isDirectory(p.resolve("docs/wireshark"))) {
            p = p.getParent();
        }
        assertThat(p).as("repository root (with docs/wireshark)").isNotNull();
        return p;
    }

    static String onPath(final String tool) {
        for (final String d : System.getenv().getOrDefault("PATH", "").split(File.pathSeparator)) {
            final File f = new File(d, tool);
            if (f.canExecute()) {
                return f.getPath();
            }
        }
        return null;
    }
}
