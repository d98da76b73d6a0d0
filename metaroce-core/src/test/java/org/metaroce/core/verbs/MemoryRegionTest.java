// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.verbs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.metaroce.core.verbs.AccessFlags.LOCAL_WRITE;
import static org.metaroce.core.verbs.AccessFlags.REMOTE_ATOMIC;
import static org.metaroce.core.verbs.AccessFlags.REMOTE_READ;
import static org.metaroce.core.verbs.AccessFlags.REMOTE_WRITE;
import static org.metaroce.core.verbs.MemoryAccessResult.INVALID_KEY;
import static org.metaroce.core.verbs.MemoryAccessResult.MISALIGNED;
import static org.metaroce.core.verbs.MemoryAccessResult.NO_PERMISSION;
import static org.metaroce.core.verbs.MemoryAccessResult.OK;
import static org.metaroce.core.verbs.MemoryAccessResult.OUT_OF_BOUNDS;

import java.math.BigInteger;
import java.nio.ByteBuffer;

import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import org.agrona.BufferUtil;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;
import org.metaroce.core.SeededRandomSource;

class MemoryRegionTest {
    private static final int LENGTH = 4096;
    private static final ByteBuffer MEMORY = BufferUtil.allocateDirectAligned(LENGTH, 64);
    private final ProtectionDomain pd = new ProtectionDomain(3, new MemoryKeySpace(new SeededRandomSource(31)));
    private final MemoryRegion full = pd.registerMemory(MEMORY.duplicate(), LOCAL_WRITE | REMOTE_WRITE | REMOTE_READ | REMOTE_ATOMIC);
    private final long base = full.address();

    @Test
    void accessorsDescribeTheRegion() {
        assertThat(base).isEqualTo(BufferUtil.address(MEMORY));
        assertThat(full.length()).isEqualTo(LENGTH);
        assertThat(full.buffer().addressOffset()).isEqualTo(base);
        assertThat(full.buffer().capacity()).isEqualTo(LENGTH);
        assertThat(full.isValid()).isTrue();
        assertThat(full.lkey()).isNotZero();
        assertThat(full.rkey()).isNotZero();
        assertThat(full.offsetOf(base + 100)).isEqualTo(100);
        assertThat(full.toString()).contains("pd=3").contains("length=4096").contains("valid=true");
    }

    @Test
    void bufferSharesMemoryWithTheCallersBuffer() {
        full.buffer().putLong(8, 0x1122334455667788L);
        assertThat(new UnsafeBuffer(MEMORY).getLong(8)).isEqualTo(0x1122334455667788L);
    }

    @Test
    void remoteBoundsFrontRearAndExactFit() {
        assertThat(full.checkRemote(base, LENGTH, REMOTE_WRITE)).isEqualTo(OK);
        assertThat(full.checkRemote(base + 10, LENGTH - 10, REMOTE_WRITE)).isEqualTo(OK);
        assertThat(full.checkRemote(base - 1, 1, REMOTE_WRITE)).isEqualTo(OUT_OF_BOUNDS);
        assertThat(full.checkRemote(base - 1, 0, REMOTE_WRITE)).isEqualTo(OUT_OF_BOUNDS);
        assertThat(full.checkRemote(base, LENGTH + 1, REMOTE_WRITE)).isEqualTo(OUT_OF_BOUNDS);
        assertThat(full.checkRemote(base + LENGTH - 1, 2, REMOTE_WRITE)).isEqualTo(OUT_OF_BOUNDS);
        assertThat(full.checkRemote(base + LENGTH, 0, REMOTE_WRITE)).isEqualTo(OK);
        assertThat(full.checkRemote(base + LENGTH + 1, 0, REMOTE_WRITE)).isEqualTo(OUT_OF_BOUNDS);
    }

    @Test
    void remoteBoundsAreOverflowSafe() {
        assertThat(full.checkRemote(base, -1, REMOTE_READ)).isEqualTo(OUT_OF_BOUNDS);
        assertThat(full.checkRemote(base, Long.MIN_VALUE, REMOTE_READ)).isEqualTo(OUT_OF_BOUNDS);
        assertThat(full.checkRemote(base + 1, Long.MAX_VALUE, REMOTE_READ)).isEqualTo(OUT_OF_BOUNDS);
        assertThat(full.checkRemote(Long.MAX_VALUE, 1, REMOTE_READ)).isEqualTo(OUT_OF_BOUNDS);
        assertThat(full.checkRemote(-1L, 1, REMOTE_READ)).isEqualTo(OUT_OF_BOUNDS);
        assertThat(full.checkRemote(Long.MIN_VALUE, 0, REMOTE_READ)).isEqualTo(OUT_OF_BOUNDS);
        assertThat(full.checkRemote(0, base + 1, REMOTE_READ)).isEqualTo(OUT_OF_BOUNDS);
        assertThat(full.checkRemote(base + 8, -8, REMOTE_READ)).isEqualTo(OUT_OF_BOUNDS);
    }

    @Test
    void remotePermissionIsCheckedPerFlag() {
        final MemoryRegion readOnly = pd.registerMemory(MEMORY.duplicate(), REMOTE_READ);
        assertThat(readOnly.checkRemote(base, 8, REMOTE_READ)).isEqualTo(OK);
        assertThat(readOnly.checkRemote(base, 8, REMOTE_WRITE)).isEqualTo(NO_PERMISSION);
        assertThat(readOnly.checkRemote(base, 8, REMOTE_ATOMIC)).isEqualTo(NO_PERMISSION);
        assertThat(readOnly.checkRemote(base, 8, REMOTE_READ | REMOTE_WRITE)).isEqualTo(NO_PERMISSION);
        // Permission is reported before bounds.
        assertThat(readOnly.checkRemote(base - 1, 8, REMOTE_WRITE)).isEqualTo(NO_PERMISSION);
    }

    @Test
    void deregisteredRegionReportsInvalidKeyFirst() {
        final MemoryRegion region = pd.registerMemory(MEMORY.duplicate(), LOCAL_WRITE | REMOTE_ATOMIC);
        pd.deregister(region);
        assertThat(region.isValid()).isFalse();
        assertThat(region.checkRemote(base, 8, REMOTE_READ)).isEqualTo(INVALID_KEY);
        assertThat(region.checkLocal(base, 8, false)).isEqualTo(INVALID_KEY);
        assertThat(region.checkAtomic(base + 3)).isEqualTo(INVALID_KEY);
    }

    @Test
    void localChecksNeedLocalWriteOnlyForWrites() {
        final MemoryRegion readOnly = pd.registerMemory(MEMORY.duplicate(), REMOTE_READ);
        assertThat(readOnly.checkLocal(base, 16, false)).isEqualTo(OK);
        assertThat(readOnly.checkLocal(base, 16, true)).isEqualTo(NO_PERMISSION);
        assertThat(full.checkLocal(base, 16, true)).isEqualTo(OK);
        assertThat(full.checkLocal(base + LENGTH - 16, 16, true)).isEqualTo(OK);
        assertThat(full.checkLocal(base + LENGTH - 16, 17, true)).isEqualTo(OUT_OF_BOUNDS);
        assertThat(full.checkLocal(base - 16, 16, false)).isEqualTo(OUT_OF_BOUNDS);
        assertThat(full.checkLocal(base, -1, false)).isEqualTo(OUT_OF_BOUNDS);
        assertThat(full.checkLocal(base + 1, Integer.MAX_VALUE, false)).isEqualTo(OUT_OF_BOUNDS);
    }

    @Test
    void atomicChecksPermissionBoundsAndAlignment() {
        assertThat(full.checkAtomic(base)).isEqualTo(OK);
        assertThat(full.checkAtomic(base + LENGTH - 8)).isEqualTo(OK);
        assertThat(full.checkAtomic(base + LENGTH - 4)).isEqualTo(OUT_OF_BOUNDS);
        assertThat(full.checkAtomic(base + LENGTH)).isEqualTo(OUT_OF_BOUNDS);
        assertThat(full.checkAtomic(base - 8)).isEqualTo(OUT_OF_BOUNDS);
        assertThat(full.checkAtomic(base + 4)).isEqualTo(MISALIGNED);
        assertThat(full.checkAtomic(base + 1)).isEqualTo(MISALIGNED);
        final MemoryRegion noAtomic = pd.registerMemory(MEMORY.duplicate(), LOCAL_WRITE | REMOTE_WRITE);
        assertThat(noAtomic.checkAtomic(base)).isEqualTo(NO_PERMISSION);
    }

    @Test
    void checksDoNotAllocate() {
        final long[] sink = new long[1];
        final long bytes = Allocations.allocatedBy(100_000, () -> {
            sink[0] += full.checkRemote(base + (sink[0] & 1023), 64, REMOTE_WRITE);
            sink[0] += full.checkLocal(base - 1, 8, true);
            sink[0] += full.checkAtomic(base + 8);
        });
        assertThat(bytes).as("bytes allocated by 100k checks").isLessThan(1024);
    }

    @Property(tries = 2000)
    void checkRemoteSaysOkExactlyForInRangePairs(@ForAll("vas") final long vaOffsetOrRaw, @ForAll("lens") final long len,
        @ForAll final boolean relative) {
        final long va = relative ? base + vaOffsetOrRaw : vaOffsetOrRaw;
        final BigInteger start = new BigInteger(Long.toUnsignedString(va));
        final BigInteger regionStart = BigInteger.valueOf(base);
        final BigInteger regionEnd = regionStart.add(BigInteger.valueOf(LENGTH));
        final boolean inRange = len >= 0
            && start.compareTo(regionStart) >= 0
            && start.add(BigInteger.valueOf(len)).compareTo(regionEnd) <= 0;
        assertThat(full.checkRemote(va, len, REMOTE_READ))
            .as("va=0x%x len=%d", va, len)
            .isEqualTo(inRange ? OK : OUT_OF_BOUNDS);
        if (len >= Integer.MIN_VALUE && len <= Integer.MAX_VALUE) {
            assertThat(full.checkLocal(va, (int)len, false)).isEqualTo(inRange ? OK : OUT_OF_BOUNDS);
        }
    }

    @Provide
    Arbitrary<Long> vas() {
        return Arbitraries.oneOf(
            Arbitraries.longs().between(-64, LENGTH + 64),
            Arbitraries.longs(),
            Arbitraries.of(0L, -1L, Long.MAX_VALUE, Long.MIN_VALUE, (long)LENGTH, LENGTH - 1L, LENGTH + 1L));
    }

    @Provide
    Arbitrary<Long> lens() {
        return Arbitraries.oneOf(
            Arbitraries.longs().between(-8, LENGTH + 8),
            Arbitraries.longs(),
            Arbitraries.of(0L, -1L, Long.MAX_VALUE, Long.MIN_VALUE, (long)Integer.MAX_VALUE, 1L << 32));
    }
}
