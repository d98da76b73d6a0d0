// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.cli.collectives;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.zip.CRC32C;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code --pcap FILE} on a collective tool: the ranks of one process leave one capture of whole
 * packets, each with a valid Integrity Check, holding every rank's chunk WRITEs; and
 * {@code --counters} prints each rank's collectives counters.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class CollectivePcapTest {
    @TempDir
    Path dir;

    @Test
    void threeRanksInOneProcessRecordTheirWritesInOneFile() throws Exception {
        final Path file = dir.resolve("all_reduce.pcap");
        final CollectivePerfCommandTest.Run run = CollectivePerfCommandTest.run("all_reduce_perf", "--ranks", "3",
            "-b", "64K", "-e", "64K", "-n", "2", "-w", "1", "--pcap", file.toString(), "--counters");
        assertThat(run.exitCode()).as(run::toString).isZero();
        // --counters prints each rank's collectives counters with the driver's and the engine's.
        for (int r = 0; r < 3; r++) {
            assertThat(run.out()).containsPattern("#   collectives: coll rank " + r + "/3\\{OPERATIONS=[1-9]");
        }
        final Matcher m = Pattern.compile("pcap: (\\d+) packets in ").matcher(run.err());
        assertThat(m.find()).as(run::toString).isTrue();
        final long said = Long.parseLong(m.group(1));

        final ByteBuffer b = ByteBuffer.wrap(Files.readAllBytes(file)).order(ByteOrder.LITTLE_ENDIAN);
        assertThat(b.getInt(0)).as("pcap magic (nanosecond timestamps)").isEqualTo(0xA1B23C4D);
        b.position(24);
        int records = 0;
        int writes = 0;
        final Set<Integer> sourcePorts = new HashSet<>();
        while (b.remaining() >= 16) {
            b.position(b.position() + 8);
            final int kept = b.getInt();
            assertThat(b.getInt()).as("whole packets").isEqualTo(kept);
            final byte[] frame = new byte[kept];
            b.get(frame);
            final int at = (frame[0] & 0x0F) * 4 + 8;
            final CRC32C crc = new CRC32C();
            crc.update(frame, at, kept - at - 4);
            assertThat(ByteBuffer.wrap(frame, kept - 4, 4).getInt() & 0xFFFFFFFFL)
                .as("integrity check of record %d", records + 1).isEqualTo(crc.getValue());
            final int opcode = frame[at + 1] & 0xFF;
            if (opcode == 0x03 || opcode == 0x04) { // WRITE, WRITE_WITH_IMM: the chunks
                writes++;
                sourcePorts.add((frame[at - 8] & 0xFF) << 8 | (frame[at - 7] & 0xFF));
            }
            records++;
        }
        assertThat(records).isEqualTo(said);
        // Each rank sends 2/3 of 64 KiB per all-reduce (4 KiB packets), 6 all-reduces (warm-up and
        // measured, out of place and in place): at least 3 x 6 x 10 chunk packets.
        assertThat(writes).as(run::toString).isGreaterThanOrEqualTo(180);
        // Every rank sends, each from its own entropy port: one per device, the ranks sharing a
        // loopback host (LocalCluster.deviceConfig, Bootstrap.entropyPorts).
        assertThat(sourcePorts.size()).as("source ports of the chunk WRITEs").isEqualTo(3);
    }
}
