// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.zip.CRC32C;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/** {@code --pcap FILE}: a loopback run leaves a capture of whole packets, each with a valid Integrity Check. */
class PcapOptionTest {
    @TempDir
    Path dir;

    @Test
    void aLoopbackRunRecordsEveryPacketOnceWithAValidIntegrityCheck() throws Exception {
        final Path file = dir.resolve("run.pcap");
        final CommandLine cl = Metaroce.commandLine();
        final StringWriter out = new StringWriter();
        final StringWriter err = new StringWriter();
        cl.setOut(new PrintWriter(out, true));
        cl.setErr(new PrintWriter(err, true));
        final int exit = cl.execute("write_bw", "--loopback", "-n", "50", "-s", "8192", "--no-progress", "--pcap",
            file.toString());
        assertThat(exit).as(err.toString()).isZero();
        final Matcher m = Pattern.compile("pcap: (\\d+) packets in ").matcher(err.toString());
        assertThat(m.find()).as(err.toString()).isTrue();
        final long said = Long.parseLong(m.group(1));

        final ByteBuffer b = ByteBuffer.wrap(Files.readAllBytes(file)).order(ByteOrder.LITTLE_ENDIAN);
        b.position(24);
        int records = 0;
        int writes = 0;
        int connects = 0;
        while (b.remaining() >= 16) {
            b.order(ByteOrder.LITTLE_ENDIAN);
            b.position(b.position() + 8);
            final int kept = b.getInt();
            assertThat(b.getInt()).as("whole packets").isEqualTo(kept);
            final byte[] frame = new byte[kept];
            b.get(frame);
            final int ipHeader = (frame[0] & 0x0F) * 4;
            final int at = ipHeader + 8;
            final int length = kept - at;
            final CRC32C crc = new CRC32C();
            crc.update(frame, at, length - 4);
            assertThat(ByteBuffer.wrap(frame, kept - 4, 4).getInt() & 0xFFFFFFFFL).as("integrity check of record %d",
                records + 1).isEqualTo(crc.getValue());
            final int opcode = frame[at + 1] & 0xFF;
            writes += opcode == 0x03 ? 1 : 0;
            connects += opcode == 0x20 ? 1 : 0;
            records++;
        }
        assertThat(records).isEqualTo(said);
        // 50 measured + warm-up WRITEs of 8 KiB in 4 KiB packets, each recorded once (by its sender).
        assertThat(writes).isGreaterThanOrEqualTo(100);
        assertThat(connects).as("CONNECT_REQUESTs: the connection manager's packets are captured too").isPositive();
    }
}
