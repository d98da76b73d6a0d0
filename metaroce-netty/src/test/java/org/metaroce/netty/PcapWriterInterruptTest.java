// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.netty;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A capture closed by a thread whose interrupt flag is set (left by earlier work on that thread)
 * still writes its last buffer: a FileChannel written with the flag set closes itself, and the
 * records buffered then were lost while {@link PcapWriter#recorded()} still counted them (a
 * DeviceCaptureTest run found 245 records in a file that claimed 309).
 */
class PcapWriterInterruptTest {
    @TempDir
    Path dir;

    @Test
    void anInterruptedCloserLosesNothingAndKeepsItsInterrupt() throws Exception {
        final Path file = dir.resolve("i.pcap");
        final UnsafeBuffer address = new UnsafeBuffer(new byte[16]);
        address.putInt(8, 0x0000FFFF, java.nio.ByteOrder.BIG_ENDIAN); // ::ffff:127.0.0.1
        address.putInt(12, 0x7F000001, java.nio.ByteOrder.BIG_ENDIAN);
        final UnsafeBuffer packet = new UnsafeBuffer(new byte[100]);
        final PcapWriter writer = PcapWriter.open(file);
        for (int i = 0; i < 10; i++) {
            writer.record(address, 0, 5000, address, 0, 4796, packet, 0, packet.capacity());
        }
        Thread.currentThread().interrupt();
        try {
            writer.close();
            assertThat(Thread.currentThread().isInterrupted()).as("the interrupt is kept").isTrue();
        } finally {
            Thread.interrupted();
        }
        assertThat(writer.recorded()).isEqualTo(10);
        assertThat(writer.dropped()).isZero();
        // 24-byte file header, then per record 16 bytes of header and 20 + 8 + 100 bytes of packet.
        assertThat(Files.size(file)).isEqualTo(24 + 10 * (16 + 128));
    }
}
