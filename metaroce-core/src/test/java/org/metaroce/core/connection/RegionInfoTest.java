// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.connection;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.HexFormat;

import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.LongRange;
import org.agrona.BufferUtil;
import org.junit.jupiter.api.Test;
import org.metaroce.core.SeededRandomSource;
import org.metaroce.core.verbs.AccessFlags;
import org.metaroce.core.verbs.MemoryKeySpace;
import org.metaroce.core.verbs.MemoryRegion;
import org.metaroce.core.verbs.ProtectionDomain;

/** The private-data codec for a region's address, rkey and length. */
class RegionInfoTest {
    private static final RegionInfo INFO = new RegionInfo(0x0000_7F3A_12C0_4000L, 0x5EC2_E7A1, 1L << 20);
    /** The documented layout, byte for byte: magic "MRRI", rkey, address, length, all little-endian. */
    private static final String GOLDEN = "4d525249" + "a1e7c25e" + "0040c0123a7f0000" + "0000100000000000";

    @Test
    void encodesTheDocumentedLittleEndianLayout() {
        assertThat(HexFormat.of().formatHex(INFO.encode())).isEqualTo(GOLDEN);
        assertThat(RegionInfo.decode(HexFormat.of().parseHex(GOLDEN))).isEqualTo(INFO);
    }

    @Test
    void encodesAfterAnApplicationHeaderAndReturnsTheNextOffset() {
        final byte[] data = new byte[8 + 2 * RegionInfo.BYTES];
        final RegionInfo second = new RegionInfo(0x1000, 7, 0);
        final int next = INFO.encode(data, 8);
        assertThat(next).isEqualTo(8 + RegionInfo.BYTES);
        assertThat(second.encode(data, next)).isEqualTo(data.length);
        assertThat(RegionInfo.decode(data, 8)).isEqualTo(INFO);
        assertThat(RegionInfo.decode(data, next)).isEqualTo(second);
    }

    @Test
    void byteBuffersAreReadAndWrittenLittleEndianAtAnAbsoluteIndexAndLeftUnchanged() {
        final ByteBuffer buffer = ByteBuffer.allocateDirect(64).order(ByteOrder.BIG_ENDIAN);
        buffer.position(3).limit(40);
        INFO.encode(buffer, 10);
        assertThat(buffer.position()).isEqualTo(3);
        assertThat(buffer.limit()).isEqualTo(40);
        assertThat(buffer.order()).isEqualTo(ByteOrder.BIG_ENDIAN);
        final byte[] written = new byte[RegionInfo.BYTES];
        buffer.duplicate().position(10).get(written);
        assertThat(HexFormat.of().formatHex(written)).isEqualTo(GOLDEN);
        assertThat(RegionInfo.decode(buffer, 10)).isEqualTo(INFO);
        assertThat(buffer.position()).isEqualTo(3);
    }

    @Property(tries = 200)
    void roundTripsEveryValue(@ForAll final long address, @ForAll final int rkey,
                              @ForAll @LongRange(min = 0, max = Long.MAX_VALUE) final long length,
                              @ForAll @IntRange(min = 0, max = 256 - RegionInfo.BYTES) final int offset) {
        final RegionInfo info = new RegionInfo(address, rkey, length);
        final byte[] data = new byte[offset + RegionInfo.BYTES];
        info.encode(data, offset);
        assertThat(RegionInfo.decode(data, offset)).isEqualTo(info);
    }

    @Test
    void shortInputNamesBothLengths() {
        assertThatThrownBy(() -> RegionInfo.decode(new byte[10]))
            .isInstanceOf(IllegalArgumentException.class)
            .hasMessage("cannot decode from private data of 10 bytes at offset 0: a region info needs 24 bytes, 10 remain");
        assertThatThrownBy(() -> RegionInfo.decode(new byte[30], 8))
            .isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining("at offset 8").hasMessageContaining("22 remain");
        assertThatThrownBy(() -> RegionInfo.decode(new byte[0]))
            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("0 remain");
        assertThatThrownBy(() -> INFO.encode(new byte[20], 0))
            .isInstanceOf(IllegalArgumentException.class)
            .hasMessage("cannot encode into private data of 20 bytes at offset 0: a region info needs 24 bytes, 20 remain");
    }

    @Test
    void negativeOffsetsAreRefused() {
        assertThatThrownBy(() -> RegionInfo.decode(new byte[48], -1))
            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("negative offset -1");
        assertThatThrownBy(() -> INFO.encode(new byte[48], -4))
            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("negative offset -4");
    }

    @Test
    void otherPrivateDataIsNotTakenForARegion() {
        final byte[] reason = "NO_LISTENER: service not offered here".getBytes(java.nio.charset.StandardCharsets.UTF_8);
        assertThatThrownBy(() -> RegionInfo.decode(reason))
            .isInstanceOf(IllegalArgumentException.class)
            .hasMessageStartingWith("not a region info at offset 0: magic 0x")
            .hasMessageEndingWith("expected 0x4952524d");
    }

    @Test
    void aLengthAboveTwoToTheSixtyThreeIsMalformed() {
        final byte[] data = INFO.encode();
        data[RegionInfo.BYTES - 1] = (byte) 0x80;
        assertThatThrownBy(() -> RegionInfo.decode(data))
            .isInstanceOf(IllegalArgumentException.class)
            .hasMessage("malformed region info at offset 0: length 0x8000000000100000 exceeds 2^63-1");
        assertThatThrownBy(() -> new RegionInfo(0, 0, -1))
            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("must not be negative");
    }

    @Test
    void encodingPastThePrivateDataLimitIsRefused() {
        // 256 bytes at most [CM-021]: the tenth description fits, an eleventh does not.
        assertThat(INFO.encode(new byte[300], 256 - RegionInfo.BYTES)).isEqualTo(256);
        assertThatThrownBy(() -> INFO.encode(new byte[300], 256 - RegionInfo.BYTES + 1))
            .isInstanceOf(IllegalArgumentException.class)
            .hasMessage("a region info at offset 233 would end at byte 257, past the 256-byte private-data limit [CM-021]");
    }

    @Test
    void describesAWholeRegisteredRegion() {
        final ProtectionDomain pd = new ProtectionDomain(1, new MemoryKeySpace(new SeededRandomSource(5)));
        final MemoryRegion mr = pd.registerMemory(BufferUtil.allocateDirectAligned(4096, 64), AccessFlags.ALL);
        assertThat(RegionInfo.of(mr)).isEqualTo(new RegionInfo(mr.address(), mr.rkey(), 4096));
        assertThat(RegionInfo.of(mr).toString()).contains("rkey=0x" + Integer.toHexString(mr.rkey()));
    }
}
