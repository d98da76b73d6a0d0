// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.wire;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.math.BigInteger;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import java.util.zip.CRC32C;
import org.assertj.core.api.SoftAssertions;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;

/**
 * Verifies the Wireshark dissector {@code docs/wireshark/metaroce.lua} against the specification's
 * test vectors ({@code spec-notes/vectors/*.json}, section 3.8) by running {@code tshark}.
 *
 * <p>All vectors are written into one classic pcap file (Ethernet / IPv4 / UDP to port 4796), followed
 * by a copy of the first integrity-protected vector with one bit flipped. tshark is run once with
 * {@code -T json -e <field>...}; for every vector and every entry of its {@code fields} map the test
 * checks that the dissector reports exactly that value, and that {@code metaroce.integrity.status} is
 * {@code good} ({@code absent} for a trimmed packet). The corrupted copy must be reported {@code bad}.
 *
 * <p>System properties: {@code metaroce.repo.root} (set by surefire; otherwise the working directory
 * and its parents are searched for {@code spec-notes/}), {@code metaroce.vectors.dir} (overrides
 * {@code spec-notes/vectors}). The test is skipped when {@code tshark} is not on the PATH.
 *
 * <p>Wireshark 4.0 run as root prints "Running as user root ... This could be dangerous." but still
 * loads {@code -X lua_script:}; nothing special is needed for CI containers running as root.
 */
class WiresharkDissectorTest {

    private static final int METAROCE_PORT = 4796;
    private static final long TSHARK_TIMEOUT_SECONDS = 120;
    private static final String SKIP_MESSAGE = "tshark not installed: apt-get install -y tshark (CI installs it)";

    /** Expert-info severities in Wireshark's encoding (epan/proto.h PI_WARN, PI_ERROR). */
    private static final long PI_WARN = 0x00600000L;

    /** Every field the dissector must register, with its Wireshark type. */
    private static final Map<String, String> REQUIRED_FIELDS = requiredFields();

    /** The tshark executable, or null when it is not on the PATH (every test is then skipped). */
    private static Path tshark;
    private static Path repoRoot;
    private static Path luaScript;
    private static List<Vector> vectors;
    private static Vector corruptedSource;
    private static byte[] corruptedPacket;
    /** tshark output per frame number (1-based): field abbreviation to its values. */
    private static Map<Integer, Map<String, List<String>>> frames;
    private static Map<String, String> registeredFields;
    /** Packets concatenated into one UDP payload, as a capture before GSO segmentation sees them. */
    private static List<Vector> superDatagramParts;
    /** Index (0-based) of the packet corrupted in the second super-datagram. */
    private static int corruptedPart;

    private record Vector(String file, String name, byte[] packet, Map<String, JsonNode> fields) {

        boolean trimmed() {
            return packet.length >= 24 && (packet[2] & 0x08) != 0 && packet.length == (packet[15] & 0xFF) * 4;
        }

        boolean trailerIsValidCrc() {
            if (packet.length < 4) {
                return false;
            }
            CRC32C crc = new CRC32C();
            crc.update(packet, 0, packet.length - 4);
            long stored = ByteBuffer.wrap(packet, packet.length - 4, 4).getInt() & 0xFFFFFFFFL;
            return crc.getValue() == stored;
        }

        String label() {
            return name + " (" + file + ")";
        }
    }

    @BeforeAll
    static void runTshark() throws Exception {
        tshark = findOnPath("tshark");
        if (tshark == null) {
            // Not an assumption here: surefire does not report a class-level abort as skipped. Each
            // test assumes tshark instead, so the skip and its message show up in the report.
            return;
        }

        repoRoot = findRepoRoot();
        luaScript = repoRoot.resolve("docs/wireshark/metaroce.lua").toAbsolutePath().normalize();
        assertThat(luaScript).as("Wireshark dissector").isRegularFile();

        String vectorsProperty = System.getProperty("metaroce.vectors.dir");
        Path vectorDir = vectorsProperty == null || vectorsProperty.isBlank()
                ? repoRoot.resolve("spec-notes/vectors")
                : Paths.get(vectorsProperty);
        vectors = loadVectors(vectorDir);
        assertThat(vectors).as("test vectors in %s", vectorDir).isNotEmpty();

        corruptedSource = vectors.stream()
                .filter(v -> !v.trimmed() && v.packet().length > 20)
                .findFirst()
                .orElseThrow(() -> new AssertionError("no integrity-protected vector to corrupt in " + vectorDir));
        corruptedPacket = corruptedSource.packet().clone();
        corruptedPacket[16] ^= 0x01; // least significant bit of the Transmit Timestamp's first byte

        Path workDir = Paths.get("target", "wireshark-test").toAbsolutePath();
        Files.createDirectories(workDir);
        // An empty personal configuration directory: user preferences, disabled protocols or a copy of
        // metaroce.lua in the personal plugin folder must not influence (or double-register) the test.
        Path configDir = workDir.resolve("config");
        Files.createDirectories(configDir);

        List<byte[]> packets = new ArrayList<>();
        vectors.forEach(v -> packets.add(v.packet()));
        packets.add(corruptedPacket);
        // Two GSO super-datagrams: every self-delimiting vector back to back, then the same with one
        // bit flipped in the middle packet.
        superDatagramParts = vectors.stream().filter(WiresharkDissectorTest::selfDelimiting).toList();
        assertThat(superDatagramParts).as("vectors to concatenate into a super-datagram").hasSizeGreaterThan(2);
        corruptedPart = superDatagramParts.size() / 2;
        packets.add(concatenate(superDatagramParts, -1));
        packets.add(concatenate(superDatagramParts, corruptedPart));
        Path pcap = workDir.resolve("metaroce-vectors.pcap");
        Files.write(pcap, pcapFile(packets));

        // 1. Which fields does the dissector register (tshark -G fields)?
        Path fieldsOut = workDir.resolve("tshark-fields.txt");
        run(configDir, fieldsOut, workDir.resolve("tshark-fields.err"),
                List.of("-G", "fields", "-X", "lua_script:" + luaScript));
        registeredFields = new LinkedHashMap<>();
        for (String line : Files.readAllLines(fieldsOut, StandardCharsets.UTF_8)) {
            String[] cols = line.split("\t");
            if (cols.length >= 4 && cols[0].equals("F") && cols[2].startsWith("metaroce.")) {
                registeredFields.put(cols[2], cols[3]);
            }
        }
        assertThat(registeredFields)
                .as("fields registered by %s (is the Lua script loading? see %s)", luaScript,
                        workDir.resolve("tshark-fields.err"))
                .isNotEmpty();

        // 2. Dissect the capture, exporting every field any vector mentions.
        Set<String> exported = new LinkedHashSet<>(List.of("frame.number", "metaroce.integrity.status",
                "metaroce.gso.index", "metaroce.gso.count",
                "metaroce.integrity.crc32c", "metaroce.bh.timestamp", "_ws.expert.message",
                "_ws.expert.severity", "_ws.malformed"));
        for (Vector v : vectors) {
            for (String key : v.fields().keySet()) {
                String abbrev = abbreviation(key);
                if (registeredFields.containsKey(abbrev)) {
                    exported.add(abbrev); // unknown ones are reported per vector below
                }
            }
        }
        List<String> args = new ArrayList<>(List.of("-n", "-r", pcap.toString(),
                "-X", "lua_script:" + luaScript, "-T", "json"));
        for (String field : exported) {
            args.add("-e");
            args.add(field);
        }
        Path jsonOut = workDir.resolve("tshark-output.json");
        run(configDir, jsonOut, workDir.resolve("tshark-output.err"), args);

        frames = new LinkedHashMap<>();
        JsonNode root = new ObjectMapper().readTree(jsonOut.toFile());
        for (JsonNode packet : root) {
            JsonNode layers = packet.path("_source").path("layers");
            Map<String, List<String>> values = new LinkedHashMap<>();
            for (Map.Entry<String, JsonNode> e : layers.properties()) {
                List<String> list = new ArrayList<>();
                if (e.getValue().isArray()) {
                    e.getValue().forEach(n -> list.add(n.asText()));
                } else {
                    list.add(e.getValue().asText());
                }
                values.put(e.getKey(), list);
            }
            frames.put(Integer.parseInt(values.get("frame.number").get(0)), values);
        }
        assertThat(frames).as("packets dissected by tshark in %s", jsonOut).hasSize(packets.size());
    }

    @Test
    void dissectorRegistersEveryFieldOfTheSpecification() {
        assumeTshark();
        SoftAssertions softly = new SoftAssertions();
        REQUIRED_FIELDS.forEach((abbrev, type) -> softly.assertThat(registeredFields.get(abbrev))
                .as("field %s registered by %s", abbrev, luaScript.getFileName())
                .isEqualTo(type));
        softly.assertAll();
    }

    @TestFactory
    Stream<DynamicTest> everyVectorDecodesToItsFields() {
        if (tshark == null) {
            return Stream.of(DynamicTest.dynamicTest("tshark", WiresharkDissectorTest::assumeTshark));
        }
        List<DynamicTest> tests = new ArrayList<>();
        for (int i = 0; i < vectors.size(); i++) {
            Vector v = vectors.get(i);
            int frame = i + 1;
            tests.add(DynamicTest.dynamicTest(v.name(), () -> checkVector(v, frame)));
        }
        return tests.stream();
    }

    @Test
    void flippedBitIsReportedAsBadIntegrity() {
        assumeTshark();
        int frame = vectors.size() + 1;
        Map<String, List<String>> layers = frames.get(frame);
        String label = corruptedSource.label() + " with bit 0 of byte 16 flipped";
        assertThat(layers).as("tshark output for %s (frame %d)", label, frame).isNotNull();
        assertThat(layers.get("metaroce.integrity.status"))
                .as("%s: integrity.status", label)
                .containsExactly("bad");
        assertThat(layers.getOrDefault("_ws.expert.message", List.of()))
                .as("%s: expert info", label)
                .anySatisfy(m -> assertThat(m).contains("Integrity Check failed"));
        long expectedTimestamp = ByteBuffer.wrap(corruptedPacket, 16, 4).getInt() & 0xFFFFFFFFL;
        assertThat(layers.get("metaroce.bh.timestamp"))
                .as("%s: bh.timestamp still decoded", label)
                .containsExactly(Long.toString(expectedTimestamp));
    }

    @Test
    void everyPacketOfASuperDatagramIsDissectedAndVerified() {
        assumeTshark();
        Map<String, List<String>> layers = frames.get(vectors.size() + 2);
        int n = superDatagramParts.size();
        List<String> expected = superDatagramParts.stream().map(v -> v.trimmed() ? "absent" : "good").toList();
        assertThat(layers.get("metaroce.integrity.status")).as("integrity status of each of %d packets", n)
                .containsExactlyElementsOf(expected);
        assertThat(layers.get("metaroce.gso.count")).as("gso.count").hasSize(n).containsOnly(Integer.toString(n));
        assertThat(layers.get("metaroce.gso.index")).as("gso.index")
                .containsExactlyElementsOf(Stream.iterate(1, i -> i + 1).limit(n).map(String::valueOf).toList());
        assertThat(layers.get("metaroce.bh.timestamp")).as("timestamps, in order")
                .containsExactlyElementsOf(superDatagramParts.stream()
                        .map(v -> Long.toString(ByteBuffer.wrap(v.packet(), 16, 4).getInt() & 0xFFFFFFFFL)).toList());
    }

    @Test
    void aCorruptedPacketInsideASuperDatagramIsTheOnlyBadOne() {
        assumeTshark();
        Map<String, List<String>> layers = frames.get(vectors.size() + 3);
        List<String> expected = new ArrayList<>(superDatagramParts.stream()
                .map(v -> v.trimmed() ? "absent" : "good").toList());
        expected.set(corruptedPart, "bad");
        assertThat(layers.get("metaroce.integrity.status")).as("integrity status of each packet")
                .containsExactlyElementsOf(expected);
    }

    /** Whether a vector's own headers give its length (so that packets after it can be found). */
    private static boolean selfDelimiting(Vector v) {
        byte[] p = v.packet();
        if (p.length < 24 || (p[0] & 0xF0) != 0x10) {
            return false;
        }
        int headers = (p[15] & 0xFF) * 4;
        int payloadLength = ((p[12] & 0xFF) << 8) | (p[13] & 0xFF);
        return v.trimmed() ? payloadLength == 0 : p.length == headers + payloadLength + 4 && v.trailerIsValidCrc();
    }

    /** The packets back to back; the one at {@code corrupt} (if >= 0) with a timestamp bit flipped. */
    private static byte[] concatenate(List<Vector> parts, int corrupt) {
        ByteBuffer b = ByteBuffer.allocate(parts.stream().mapToInt(v -> v.packet().length).sum());
        for (int i = 0; i < parts.size(); i++) {
            byte[] p = parts.get(i).packet().clone();
            if (i == corrupt) {
                p[16] ^= 0x01;
            }
            b.put(p);
        }
        return b.array();
    }

    private static void assumeTshark() {
        Assumptions.assumeTrue(tshark != null, SKIP_MESSAGE);
    }

    private static void checkVector(Vector v, int frame) {
        Map<String, List<String>> layers = frames.get(frame);
        assertThat(layers).as("tshark output for vector %s (frame %d)", v.label(), frame).isNotNull();
        SoftAssertions softly = new SoftAssertions();

        for (Map.Entry<String, JsonNode> e : v.fields().entrySet()) {
            String key = e.getKey();
            String abbrev = abbreviation(key);
            String what = String.format("vector %s, field %s (%s)", v.label(), key, abbrev);
            if (!registeredFields.containsKey(abbrev)) {
                softly.fail("%s: the dissector does not register %s", what, abbrev);
                continue;
            }
            List<String> actual = layers.getOrDefault(abbrev, List.of());
            String type = registeredFields.get(abbrev);
            if (type.equals("FT_BYTES")) {
                String expected = normalizeHex(e.getValue().asText());
                String got = actual.stream().map(WiresharkDissectorTest::normalizeHex).collect(Collectors.joining());
                softly.assertThat(got).as(what).isEqualTo(expected);
                if (!expected.isEmpty()) {
                    softly.assertThat(actual).as("%s: occurrences", what).hasSize(1);
                }
            } else if (type.equals("FT_STRING")) {
                softly.assertThat(actual).as(what).containsExactly(e.getValue().asText());
            } else {
                BigInteger expected = parseInteger(e.getValue());
                if (expected == null) {
                    softly.fail("%s: vector value %s is not an integer", what, e.getValue());
                    continue;
                }
                softly.assertThat(actual).as("%s: occurrences (expected value %s)", what, expected).hasSize(1);
                if (actual.size() == 1) {
                    softly.assertThat(parseInteger(actual.get(0))).as("%s: tshark reported \"%s\"", what, actual.get(0))
                            .isEqualTo(expected);
                }
            }
        }

        String expectedStatus = v.trimmed() ? "absent" : "good";
        softly.assertThat(layers.get("metaroce.integrity.status"))
                .as("vector %s, field integrity.status (vector trailer is a valid CRC-32C: %s)",
                        v.label(), v.trimmed() ? "n/a, trimmed" : v.trailerIsValidCrc())
                .containsExactly(expectedStatus);

        List<String> severities = layers.getOrDefault("_ws.expert.severity", List.of());
        List<String> messages = layers.getOrDefault("_ws.expert.message", List.of());
        for (int i = 0; i < severities.size(); i++) {
            long severity = Long.parseLong(severities.get(i));
            String message = i < messages.size() ? messages.get(i) : "?";
            softly.assertThat(severity)
                    .as("vector %s: unexpected expert info \"%s\"", v.label(), message)
                    .isLessThan(PI_WARN);
        }
        softly.assertThat(layers.get("_ws.malformed")).as("vector %s: malformed packet", v.label()).isNull();
        softly.assertAll();
    }

    // ---------------------------------------------------------------------------------------------
    // Vectors
    // ---------------------------------------------------------------------------------------------

    private static List<Vector> loadVectors(Path dir) throws IOException {
        assertThat(dir).as("test vector directory").isDirectory();
        ObjectMapper mapper = new ObjectMapper();
        List<Path> files;
        try (Stream<Path> s = Files.list(dir)) {
            files = s.filter(p -> p.getFileName().toString().endsWith(".json")).sorted().toList();
        }
        List<Vector> result = new ArrayList<>();
        for (Path file : files) {
            JsonNode node = mapper.readTree(file.toFile());
            String fileName = file.getFileName().toString();
            assertThat(node.path("hex").isTextual()).as("%s has a \"hex\" string", fileName).isTrue();
            assertThat(node.path("fields").isObject()).as("%s has a \"fields\" object", fileName).isTrue();
            byte[] packet = HexFormat.of().parseHex(normalizeHex(node.get("hex").asText()));
            Map<String, JsonNode> fields = new LinkedHashMap<>();
            node.get("fields").properties().forEach(e -> fields.put(e.getKey(), e.getValue()));
            String name = node.path("name").asText(fileName);
            result.add(new Vector(fileName, name, packet, fields));
        }
        return result;
    }

    /** Maps a vector field key to the dissector's field abbreviation. */
    private static String abbreviation(String key) {
        if (key.equals("payload.hex")) {
            return "metaroce.payload";
        }
        return "metaroce." + key;
    }

    private static String normalizeHex(String s) {
        String t = s.trim().toLowerCase(Locale.ROOT);
        if (t.startsWith("0x")) {
            t = t.substring(2);
        }
        return t.replaceAll("[:\\s-]", "");
    }

    private static BigInteger parseInteger(JsonNode node) {
        if (node.isIntegralNumber()) {
            return node.bigIntegerValue();
        }
        if (node.isBoolean()) {
            return node.booleanValue() ? BigInteger.ONE : BigInteger.ZERO;
        }
        return parseInteger(node.asText());
    }

    /** Parses a decimal (or 0x-prefixed hexadecimal) integer; null when the text is neither. */
    private static BigInteger parseInteger(String text) {
        String t = text.trim().toLowerCase(Locale.ROOT);
        try {
            if (t.startsWith("0x")) {
                return new BigInteger(t.substring(2), 16);
            }
            return new BigInteger(t);
        } catch (NumberFormatException e) {
            return null;
        }
    }

    // ---------------------------------------------------------------------------------------------
    // pcap
    // ---------------------------------------------------------------------------------------------

    /** A classic (microsecond) pcap file, link type Ethernet, one Ethernet/IPv4/UDP frame per payload. */
    static byte[] pcapFile(List<byte[]> payloads) {
        int size = 24;
        for (byte[] p : payloads) {
            size += 16 + 14 + 20 + 8 + p.length;
        }
        ByteBuffer buf = ByteBuffer.allocate(size).order(ByteOrder.LITTLE_ENDIAN);
        buf.putInt(0xA1B2C3D4).putShort((short) 2).putShort((short) 4).putInt(0).putInt(0)
                .putInt(65535).putInt(1); // LINKTYPE_ETHERNET
        long seconds = 1_700_000_000L;
        for (int i = 0; i < payloads.size(); i++) {
            byte[] frame = ethernetIpv4Udp(payloads.get(i), 49152 + i, i);
            buf.order(ByteOrder.LITTLE_ENDIAN)
                    .putInt((int) (seconds + i)).putInt(0).putInt(frame.length).putInt(frame.length);
            buf.put(frame);
        }
        return buf.array();
    }

    static byte[] ethernetIpv4Udp(byte[] payload, int srcPort, int ipId) {
        ByteBuffer b = ByteBuffer.allocate(14 + 20 + 8 + payload.length).order(ByteOrder.BIG_ENDIAN);
        b.put(new byte[] {0x02, 0, 0, 0, 0, 0x02}); // destination MAC
        b.put(new byte[] {0x02, 0, 0, 0, 0, 0x01}); // source MAC
        b.putShort((short) 0x0800);
        int ipStart = b.position();
        b.put((byte) 0x45).put((byte) 0) // version 4, IHL 5; DSCP/ECN 0
                .putShort((short) (20 + 8 + payload.length))
                .putShort((short) ipId).putShort((short) 0x4000) // DF
                .put((byte) 64).put((byte) 17).putShort((short) 0) // TTL, UDP, checksum placeholder
                .put(new byte[] {10, 0, 0, 1}).put(new byte[] {10, 0, 0, 2});
        int sum = 0;
        for (int i = 0; i < 20; i += 2) {
            sum += ((b.get(ipStart + i) & 0xFF) << 8) | (b.get(ipStart + i + 1) & 0xFF);
        }
        while ((sum >>> 16) != 0) {
            sum = (sum & 0xFFFF) + (sum >>> 16);
        }
        b.putShort(ipStart + 10, (short) ~sum);
        b.putShort((short) srcPort).putShort((short) METAROCE_PORT)
                .putShort((short) (8 + payload.length)).putShort((short) 0); // no UDP checksum
        b.put(payload);
        return b.array();
    }

    // ---------------------------------------------------------------------------------------------
    // Environment
    // ---------------------------------------------------------------------------------------------

    private static void run(Path configDir, Path stdout, Path stderr, List<String> args)
            throws IOException, InterruptedException {
        List<String> command = new ArrayList<>();
        command.add(tshark.toString());
        command.addAll(args);
        ProcessBuilder pb = new ProcessBuilder(command)
                .redirectOutput(stdout.toFile())
                .redirectError(stderr.toFile());
        pb.environment().put("WIRESHARK_CONFIG_DIR", configDir.toString());
        Process process = pb.start();
        process.getOutputStream().close();
        if (!process.waitFor(TSHARK_TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
            process.destroyForcibly();
            fail("tshark did not finish within %d s: %s", TSHARK_TIMEOUT_SECONDS, String.join(" ", command));
        }
        String err = Files.readString(stderr, StandardCharsets.UTF_8);
        if (process.exitValue() != 0 || err.contains("Lua: Error") || err.contains("Lua: syntax error")) {
            fail("tshark failed (exit %d): %s%n%s", process.exitValue(), String.join(" ", command), err);
        }
    }

    private static Path findOnPath(String program) {
        String path = System.getenv("PATH");
        if (path == null) {
            return null;
        }
        for (String dir : path.split(File.pathSeparator)) {
            if (dir.isEmpty()) {
                continue;
            }
            Path candidate = Paths.get(dir, program);
            if (Files.isRegularFile(candidate) && Files.isExecutable(candidate)) {
                return candidate;
            }
        }
        return null;
    }

    private static Path findRepoRoot() {
        String property = System.getProperty("metaroce.repo.root");
        if (property != null && !property.isBlank()) {
            Path p = Paths.get(property).toAbsolutePath().normalize();
            if (Files.isDirectory(p.resolve("spec-notes"))) {
                return p;
            }
        }
        for (Path p = Paths.get("").toAbsolutePath(); p != null; p = p.getParent()) {
            if (Files.isDirectory(p.resolve("spec-notes"))) {
                return p;
            }
        }
        throw new UncheckedIOException(new IOException(
                "cannot locate the repository root (a directory containing spec-notes/); set -Dmetaroce.repo.root"));
    }

    private static Map<String, String> requiredFields() {
        Map<String, String> m = new LinkedHashMap<>();
        String[][] spec = {
            {"bh.version", "FT_UINT8"}, {"bh.opcode", "FT_UINT8"}, {"bh.flags", "FT_UINT16"},
            {"bh.dqpn", "FT_UINT24"}, {"bh.psn", "FT_UINT32"}, {"bh.payload_length", "FT_UINT16"},
            {"bh.path_id", "FT_UINT8"}, {"bh.header_length", "FT_UINT8"}, {"bh.timestamp", "FT_UINT32"},
            {"bh.sqpn", "FT_UINT24"},
            {"bh.flags.ack_req", "FT_BOOLEAN"}, {"bh.flags.solicited", "FT_BOOLEAN"},
            {"bh.flags.last", "FT_BOOLEAN"}, {"bh.flags.retransmit", "FT_BOOLEAN"},
            {"bh.flags.trimmed", "FT_BOOLEAN"},
            {"msg.msn", "FT_UINT32"}, {"msg.offset", "FT_UINT32"}, {"msg.length", "FT_UINT32"},
            {"msg.rsn", "FT_UINT32"},
            {"reth.va", "FT_UINT64"}, {"reth.rkey", "FT_UINT32"}, {"reth.dma_length", "FT_UINT32"},
            {"imm.data", "FT_UINT32"},
            {"atomic.va", "FT_UINT64"}, {"atomic.rkey", "FT_UINT32"}, {"atomic.swap_add", "FT_UINT64"},
            {"atomic.compare", "FT_UINT64"},
            {"aack.original", "FT_UINT64"},
            {"ack.cumulative_psn", "FT_UINT32"}, {"ack.sack_bitmap", "FT_UINT64"},
            {"ack.echoed_timestamp", "FT_UINT32"}, {"ack.ack_delay", "FT_UINT32"}, {"ack.ce_count", "FT_UINT32"},
            {"ack.credit", "FT_UINT32"}, {"ack.echoed_path_id", "FT_UINT8"}, {"ack.flags", "FT_UINT8"},
            {"ack.sender_count", "FT_UINT8"},
            {"nack.reason", "FT_UINT8"}, {"nack.rnr_timer", "FT_UINT8"}, {"nack.psn", "FT_UINT32"},
            {"cm.service_id", "FT_UINT64"}, {"cm.transaction_id", "FT_UINT64"}, {"cm.initial_psn", "FT_UINT32"},
            {"cm.path_mtu", "FT_UINT16"}, {"cm.capabilities", "FT_UINT16"}, {"cm.initiator_depth", "FT_UINT8"},
            {"cm.responder_resources", "FT_UINT8"}, {"cm.path_count", "FT_UINT8"}, {"cm.reason", "FT_UINT8"},
            {"cm.cookie", "FT_BYTES"},
            {"payload", "FT_BYTES"}, {"integrity.crc32c", "FT_UINT32"}, {"integrity.status", "FT_STRING"},
        };
        for (String[] f : spec) {
            m.put("metaroce." + f[0], f[1]);
        }
        return m;
    }
}
