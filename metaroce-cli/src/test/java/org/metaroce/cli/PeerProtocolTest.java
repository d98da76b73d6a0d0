// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.HexFormat;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

/**
 * The peer protocol of docs/perftest.md ("Peer protocol"): every vector there is what the tools
 * encode, and decodes back to its fields, so another implementation can be written from the page.
 */
class PeerProtocolTest {
    private static final HexFormat HEX = HexFormat.of();
    static final String HELLO_CONTROL = "4d5250460200000000000002000100000000008000000001000000800000020000000000000000"
        + "001a2b3c4d000010000000000000000000";
    static final String HELLO_DATA = "4d5250460200000100000002000100000000008000000001000000800000020000000000000000"
        + "001a2b3c4d000010000000000000000000";
    static final String HELLO_WRITE_LAT = "4d5250460203000100000001000000400000000800000000000000010000020000007f3a12"
        + "c000401a2b3c4d000010000000000000000200";
    static final String REGION = "4d52504600007f3a12c040005ec2e7a10000000000800000";
    static final String DONE = "00000001000000000000000000001388000000000000271000000000499602d24201b1f3f80000000000"
        + "00000000138800000000000000000000000000000000";
    static final String RESULT = "00000002000000010000000001000000ffffffffffffffff" + "00".repeat(40);
    static final String MARK = "0000000300000000" + "00".repeat(56);
    static final String PATTERN_1_0 = "a1eeffee871a7f9ffc8b4317175ee31b";

    private static String page() throws IOException {
        Path dir = Paths.get("").toAbsolutePath();
        while (dir != null && !Files.isDirectory(dir.resolve("docs"))) {
            dir = dir.getParent();
        }
        return Files.readString(dir.resolve("docs/perftest.md"));
    }

    @Test
    void theVectorsAreOnThePage() throws IOException {
        final String page = page();
        for (final String v : new String[] {HELLO_CONTROL, HELLO_DATA, HELLO_WRITE_LAT, REGION, DONE, RESULT, MARK,
            PATTERN_1_0}) {
            assertThat(page).as("docs/perftest.md holds the vector").contains(v);
        }
    }

    @Test
    void serviceIdsAndKindsAreThoseOfTheTable() throws IOException {
        final String page = page();
        for (final TestKind k : TestKind.values()) {
            assertThat(k.controlService()).isEqualTo(0x4D52_5046_0000_0000L + 2L * k.ordinal());
            assertThat(k.dataService()).isEqualTo(k.controlService() + 1);
            assertThat(page).as(k.command).contains(String.format("| %d | `%s` | `0x%016X` |", k.ordinal(), k.command,
                k.controlService()));
        }
    }

    @Test
    void helloEncodesAndDecodes() {
        final Messages.Hello control = new Messages.Hello(TestKind.WRITE_BW, 0, 2, 65536, 128, Messages.FLAG_VERIFY,
            128, 512, 0, 0x1A2B3C4D, 4096, 0);
        assertThat(HEX.formatHex(control.encode())).isEqualTo(HELLO_CONTROL);
        assertThat(Messages.Hello.decode(HEX.parseHex(HELLO_CONTROL))).isEqualTo(control);
        final Messages.Hello data = new Messages.Hello(TestKind.WRITE_BW, 1, 2, 65536, 128, Messages.FLAG_VERIFY,
            128, 512, 0, 0x1A2B3C4D, 4096, 0);
        assertThat(HEX.formatHex(data.encode())).isEqualTo(HELLO_DATA);
        final Messages.Hello lat = new Messages.Hello(TestKind.WRITE_LAT, 1, 1, 64, BenchConfig.PING_PONG_SLOTS, 0, 1,
            512, 0x0000_7F3A_12C0_0040L, 0x1A2B3C4D, 4096, (long) BenchConfig.PING_PONG_SLOTS * 64);
        assertThat(HEX.formatHex(lat.encode())).isEqualTo(HELLO_WRITE_LAT);
        assertThat(Messages.Hello.decode(HEX.parseHex(HELLO_WRITE_LAT))).isEqualTo(lat);
        // Another version or magic is not a hello.
        final byte[] v3 = HEX.parseHex(HELLO_CONTROL);
        v3[4] = 3;
        assertThat(Messages.Hello.decode(v3)).isNull();
    }

    @Test
    void regionEncodesAndDecodes() {
        final Messages.Region r = new Messages.Region(0x0000_7F3A_12C0_4000L, 0x5EC2E7A1, 128L * 65536);
        assertThat(HEX.formatHex(r.encode())).isEqualTo(REGION);
        assertThat(Messages.Region.decode(HEX.parseHex(REGION))).isEqualTo(r);
    }

    @Test
    void controlMessagesEncodeAndDecode() {
        final UnsafeBuffer b = new UnsafeBuffer(new byte[Messages.CONTROL_LENGTH]);
        Messages.putDone(b, 0, 5000, 10000, 1_234_567_890L, 9.5e9, 5000);
        assertThat(HEX.formatHex(b.byteArray())).isEqualTo(DONE);
        assertThat(Messages.readDone(new UnsafeBuffer(HEX.parseHex(DONE)), 0))
            .isEqualTo(new Messages.Done(5000, 10000, 1_234_567_890L, 9.5e9, 5000));

        final UnsafeBuffer r = new UnsafeBuffer(new byte[Messages.CONTROL_LENGTH]);
        Messages.putResult(r, 0, Messages.VERIFY_PASSED, 16L << 20, -1, 0, 0, 0, 0, 0.0, 0);
        assertThat(HEX.formatHex(r.byteArray())).isEqualTo(RESULT);
        assertThat(Messages.readResult(new UnsafeBuffer(HEX.parseHex(RESULT)), 0))
            .isEqualTo(new Messages.Result(Messages.VERIFY_PASSED, 16L << 20, -1, 0, 0, 0, 0, 0.0, 0));
        assertThat(Messages.readDone(new UnsafeBuffer(HEX.parseHex(RESULT)), 0)).as("types do not mix").isNull();

        final UnsafeBuffer m = new UnsafeBuffer(new byte[Messages.CONTROL_LENGTH]);
        Messages.putMark(m, 0);
        assertThat(HEX.formatHex(m.byteArray())).isEqualTo(MARK);
        assertThat(Messages.isMark(new UnsafeBuffer(HEX.parseHex(MARK)), 0)).isTrue();
    }

    @Test
    void verificationPatternIsTheDocumentedSplitMix() {
        assertThat(Pattern.word(1, 0, 0)).isEqualTo(0x9F7F_1A87_EEFF_EEA1L);
        final UnsafeBuffer b = new UnsafeBuffer(new byte[16]);
        Pattern.fill(b, 0, 16, 1, 0);
        assertThat(HEX.formatHex(b.byteArray())).isEqualTo(PATTERN_1_0);
        assertThat(Pattern.firstMismatch(b, 0, 16, 1, 0)).isEqualTo(-1);
    }
}
