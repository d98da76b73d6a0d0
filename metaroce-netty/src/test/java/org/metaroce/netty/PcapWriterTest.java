// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.netty;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** What a capture writes to its file, and when. */
class PcapWriterTest {
    /** 24-byte file header, then per record 16 bytes of header and 20 + 8 + 100 bytes of packet. */
    private static final int RECORD_BYTES = 16 + 128;

    @TempDir
    Path dir;

    /** Records {@code count} 100-byte packets from and to ::ffff:127.0.0.1. */
    private static void record(final PcapWriter writer, final int count) {
        final UnsafeBuffer address = new UnsafeBuffer(new byte[16]);
        address.putInt(8, 0x0000FFFF, ByteOrder.BIG_ENDIAN);
        address.putInt(12, 0x7F000001, ByteOrder.BIG_ENDIAN);
        final UnsafeBuffer packet = new UnsafeBuffer(new byte[100]);
        for (int i = 0; i < count; i++) {
            writer.record(address, 0, 5000, address, 0, 4796, packet, 0, packet.capacity());
        }
    }

    /**
     * A capture closed by a thread whose interrupt flag is set (left by earlier work on that thread)
     * still writes its last buffer: a FileChannel written with the flag set closes itself, and the
     * records buffered then were lost while {@link PcapWriter#recorded()} still counted them (a
     * DeviceCaptureTest run found 245 records in a file that claimed 309).
     */
    @Test
    void anInterruptedCloserLosesNothingAndKeepsItsInterrupt() throws Exception {
        final Path file = dir.resolve("i.pcap");
        final PcapWriter writer = PcapWriter.open(file);
        record(writer, 10);
        Thread.currentThread().interrupt();
        try {
            writer.close();
            assertThat(Thread.currentThread().isInterrupted()).as("the interrupt is kept").isTrue();
        } finally {
            Thread.interrupted();
        }
        assertThat(writer.recorded()).isEqualTo(10);
        assertThat(writer.dropped()).isZero();
        assertThat(Files.size(file)).isEqualTo(24 + 10 * RECORD_BYTES);
    }

    /**
     * Records reach the file while the capture is still open and no more packets come: a process
     * that went quiet and was then killed (a hung fault-campaign run, destroyed after 60 s) kept
     * its last megabyte, the packets just before the hang, in memory and lost it.
     */
    @Test
    void aQuietCaptureReachesTheFileWithoutClose() throws Exception {
        final Path file = dir.resolve("q.pcap");
        final PcapWriter writer = PcapWriter.open(file);
        try {
            record(writer, 3);
            final long expected = 24 + 3 * RECORD_BYTES;
            // Generous: the flusher writes every 200 ms; a loaded machine may delay it, not stop it.
            final long deadline = System.nanoTime() + 10_000_000_000L;
            while (Files.size(file) < expected && System.nanoTime() < deadline) {
                Thread.sleep(20);
            }
            assertThat(Files.size(file)).as("bytes on disk before close").isEqualTo(expected);
            assertThat(writer.recorded()).isEqualTo(3);
        } finally {
            writer.close();
        }
        assertThat(Files.size(file)).isEqualTo(24 + 3 * RECORD_BYTES);
    }
}
