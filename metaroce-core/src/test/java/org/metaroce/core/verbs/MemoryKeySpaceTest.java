// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.verbs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;
import org.junit.jupiter.api.Test;
import org.metaroce.core.RandomSource;
import org.metaroce.core.SeededRandomSource;

class MemoryKeySpaceTest {
    private final ByteBuffer memory = ByteBuffer.allocateDirect(64);

    @Test
    void rejectsBadConstructorArguments() {
        assertThatThrownBy(() -> new MemoryKeySpace(null)).isInstanceOf(NullPointerException.class);
        final RandomSource random = new SeededRandomSource(1);
        assertThatThrownBy(() -> new MemoryKeySpace(random, -1))
            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("quarantineAllocations must be in 0..16777216, was -1");
        assertThatThrownBy(() -> new MemoryKeySpace(random, MemoryKeySpace.MAX_QUARANTINE_ALLOCATIONS + 1))
            .isInstanceOf(IllegalArgumentException.class);
        assertThat(new MemoryKeySpace(random, MemoryKeySpace.MAX_QUARANTINE_ALLOCATIONS).quarantineAllocations())
            .isEqualTo(MemoryKeySpace.MAX_QUARANTINE_ALLOCATIONS);
        assertThat(new MemoryKeySpace(random).quarantineAllocations()).isEqualTo(1024);
    }

    @Test
    void neverHandsOutZeroAndLkeyDiffersFromRkey() {
        final MemoryKeySpace keys = new MemoryKeySpace(new ScriptedRandomSource(0, 0, 5, 5, 0, 6));
        final MemoryRegion region = new ProtectionDomain(1, keys).registerMemory(memory, 0);
        assertThat(region.lkey()).isEqualTo(5);
        assertThat(region.rkey()).isEqualTo(6);
        assertThat(keys.allocations()).isEqualTo(2);
    }

    @Test
    void skipsLiveKeys() {
        final MemoryKeySpace keys = new MemoryKeySpace(new ScriptedRandomSource(5, 6, 6, 5, 7, 5, 8));
        final ProtectionDomain pd = new ProtectionDomain(1, keys);
        pd.registerMemory(memory, 0);
        final MemoryRegion second = pd.registerMemory(memory, 0);
        assertThat(second.lkey()).isEqualTo(7);
        assertThat(second.rkey()).isEqualTo(8);
        assertThat(keys.isLive(5)).isTrue();
        assertThat(keys.isLive(8)).isTrue();
        assertThat(keys.isLive(9)).isFalse();
        assertThat(keys.liveRegionCount()).isEqualTo(2);
    }

    @Test
    void releasedKeysSitOutExactlyTheNextNAllocations() {
        final MemoryKeySpace keys = new MemoryKeySpace(
            new ScriptedRandomSource(5, 6, 5, 6, 10, 5, 6, 11, 5, 6, 12, 5, 6, 13, 5, 6), 4);
        final ProtectionDomain pd = new ProtectionDomain(1, keys);
        final MemoryRegion first = pd.registerMemory(memory, 0);
        pd.deregister(first);
        assertThat(keys.isQuarantined(5)).isTrue();
        assertThat(keys.isQuarantined(6)).isTrue();
        assertThat(keys.quarantineSize()).isEqualTo(2);

        final MemoryRegion second = pd.registerMemory(memory, 0);
        final MemoryRegion third = pd.registerMemory(memory, 0);
        assertThat(new int[] {second.lkey(), second.rkey(), third.lkey(), third.rkey()}).containsExactly(10, 11, 12, 13);
        assertThat(keys.quarantineSize()).isZero(); // four allocations since release: free again
        assertThat(keys.isQuarantined(5)).isFalse();

        final MemoryRegion fourth = pd.registerMemory(memory, 0);
        assertThat(fourth.lkey()).isEqualTo(5);
        assertThat(fourth.rkey()).isEqualTo(6);
    }

    @Test
    void zeroQuarantineAllowsImmediateReuse() {
        final MemoryKeySpace keys = new MemoryKeySpace(new ScriptedRandomSource(5, 6), 0);
        final ProtectionDomain pd = new ProtectionDomain(1, keys);
        pd.deregister(pd.registerMemory(memory, 0));
        assertThat(keys.quarantineSize()).isZero();
        final MemoryRegion again = pd.registerMemory(memory, 0);
        assertThat(again.lkey()).isEqualTo(5);
    }

    @Test
    void brokenRandomSourceFailsInsteadOfLoopingForever() {
        final MemoryKeySpace keys = new MemoryKeySpace(new ScriptedRandomSource(0));
        final ProtectionDomain pd = new ProtectionDomain(1, keys);
        assertThatThrownBy(() -> pd.registerMemory(memory, 0))
            .isInstanceOf(IllegalStateException.class)
            .hasMessageContaining("no free memory key after 1000 draws");
        assertThat(pd.regionCount()).isZero();
        assertThat(keys.liveRegionCount()).isZero();
    }

    @Test
    void lookupsFindLiveRegionsByRoleAndReturnNullOtherwise() {
        final MemoryKeySpace keys = new MemoryKeySpace(new SeededRandomSource(11));
        final ProtectionDomain pd = new ProtectionDomain(1, keys);
        final MemoryRegion region = pd.registerMemory(memory, AccessFlags.LOCAL_WRITE);
        assertThat(keys.lookupLkey(region.lkey())).isSameAs(region);
        assertThat(keys.lookupRkey(region.rkey())).isSameAs(region);
        assertThat(keys.lookupLkey(region.rkey())).isNull();
        assertThat(keys.lookupRkey(region.lkey())).isNull();
        assertThat(keys.lookupRkey(0)).isNull();
        pd.deregister(region);
        assertThat(keys.lookupLkey(region.lkey())).isNull();
        assertThat(keys.lookupRkey(region.rkey())).isNull();
        assertThat(keys.isLive(region.lkey())).isFalse();
    }

    @Test
    void lookupsDoNotAllocate() {
        final MemoryKeySpace keys = new MemoryKeySpace(new SeededRandomSource(12));
        final ProtectionDomain pd = new ProtectionDomain(1, keys);
        final MemoryRegion region = pd.registerMemory(memory, 0);
        final int rkey = region.rkey();
        final int lkey = region.lkey();
        final long[] sink = new long[1];
        final long bytes = Allocations.allocatedBy(100_000, () -> {
            sink[0] += keys.lookupRkey(rkey).length() + keys.lookupLkey(lkey).length();
            sink[0] += keys.lookupRkey(rkey + 1) == null ? 1 : 0;
        });
        assertThat(bytes).as("bytes allocated by 100k lookups").isLessThan(1024);
    }

    @Test
    void deregisteringAForeignRegionIsRejected() {
        final MemoryKeySpace keys = new MemoryKeySpace(new SeededRandomSource(13));
        final MemoryKeySpace other = new MemoryKeySpace(new SeededRandomSource(14));
        final MemoryRegion region = new ProtectionDomain(1, keys).registerMemory(memory, 0);
        assertThatThrownBy(() -> other.deregister(region))
            .isInstanceOf(IllegalStateException.class)
            .hasMessageContaining("not registered in this key space");
        assertThat(region.isValid()).isTrue();
    }

    @Test
    void quarantineGrowsWhenManyKeysAreReleasedAtOnce() {
        final long seed = 15;
        System.out.println("quarantineGrowsWhenManyKeysAreReleasedAtOnce seed=" + seed);
        final MemoryKeySpace keys = new MemoryKeySpace(new SeededRandomSource(seed), 1000);
        final ProtectionDomain pd = new ProtectionDomain(1, keys);
        final List<MemoryRegion> regions = new ArrayList<>();
        for (int i = 0; i < 600; i++) {
            regions.add(pd.registerMemory(memory, 0));
        }
        for (final MemoryRegion region : regions) {
            pd.deregister(region);
        }
        assertThat(keys.quarantineSize()).isEqualTo(1200);
        for (final MemoryRegion region : regions) {
            assertThat(keys.isQuarantined(region.lkey())).isTrue();
            assertThat(keys.isQuarantined(region.rkey())).isTrue();
        }
        // After 1000 more allocations every one of them is released from quarantine.
        for (int i = 0; i < 500; i++) {
            pd.registerMemory(memory, 0);
        }
        assertThat(keys.quarantineSize()).isZero();
        assertThat(keys.toString()).contains("live=500").contains("quarantineAllocations=1000");
    }

    @Property(tries = 200)
    void neverHandsOutAZeroLiveOrQuarantinedKey(
        @ForAll final long seed,
        @ForAll @IntRange(min = 0, max = 8) final int quarantine,
        @ForAll @Size(max = 300) final List<@IntRange(min = 0, max = 99) Integer> ops) {
        // A narrow key range forces collisions with live and quarantined keys all the time.
        final SeededRandomSource seeded = new SeededRandomSource(seed);
        final RandomSource narrow = new RandomSource() {
            @Override
            public int nextInt() {
                return seeded.nextInt(401) - 200;
            }

            @Override
            public long nextLong() {
                return nextInt();
            }

            @Override
            public int nextInt(final int bound) {
                return seeded.nextInt(bound);
            }
        };
        final MemoryKeySpace keys = new MemoryKeySpace(narrow, quarantine);
        final ProtectionDomain pd = new ProtectionDomain(1, keys);
        final List<MemoryRegion> live = new ArrayList<>();
        final Map<Integer, Long> releasedAt = new HashMap<>();
        for (final int op : ops) {
            if (op < 55 && live.size() < 30) {
                final long allocationsBefore = keys.allocations();
                final MemoryRegion region = pd.registerMemory(memory, 0);
                checkFresh(region.lkey(), allocationsBefore, live, releasedAt, quarantine);
                checkFresh(region.rkey(), allocationsBefore + 1, live, releasedAt, quarantine);
                assertThat(region.lkey()).isNotEqualTo(region.rkey());
                live.add(region);
            } else if (!live.isEmpty()) {
                final MemoryRegion region = live.remove(op % live.size());
                pd.deregister(region);
                releasedAt.put(region.lkey(), keys.allocations());
                releasedAt.put(region.rkey(), keys.allocations());
            }
            assertThat(keys.liveRegionCount()).isEqualTo(live.size());
            for (final MemoryRegion region : live) {
                assertThat(keys.lookupLkey(region.lkey())).isSameAs(region);
                assertThat(keys.lookupRkey(region.rkey())).isSameAs(region);
            }
        }
    }

    private static void checkFresh(
        final int key,
        final long allocationIndex,
        final List<MemoryRegion> live,
        final Map<Integer, Long> releasedAt,
        final int quarantine) {
        assertThat(key).isNotZero();
        for (final MemoryRegion region : live) {
            assertThat(key).isNotEqualTo(region.lkey()).isNotEqualTo(region.rkey());
        }
        final Long released = releasedAt.get(key);
        if (released != null) {
            assertThat(allocationIndex - released)
                .as("allocations between release and reuse of key %d", key)
                .isGreaterThanOrEqualTo(quarantine);
        }
    }
}
