// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.verbs;

import org.agrona.collections.Int2ObjectHashMap;
import org.agrona.collections.IntHashSet;
import org.metaroce.core.RandomSource;

/**
 * The device-wide namespace of memory keys: hands out random 32-bit lkeys and rkeys and maps
 * them back to regions for the data path.
 *
 * <p>Keys are random (from the injected {@link RandomSource}) so that a peer cannot guess a
 * neighbour's rkey from its own. They are never 0 (so an uninitialised field never names a
 * region), never equal to any live lkey or rkey (the two kinds share one namespace, so a key
 * identifies exactly one region and one role), and never equal to a recently released key:
 * after deregistration a key stays in quarantine for at least the next
 * {@link #quarantineAllocations()} key allocations, so a late or retransmitted packet aimed at a
 * dead region is rejected instead of landing in whatever region was registered next.
 *
 * <p>Lookups are the hot path: {@link #lookupRkey(int)} and {@link #lookupLkey(int)} do not
 * allocate. Registration and deregistration are setup-time. Not thread-safe: the key space is
 * owned by the engine thread, and registration from an application thread must be handed to
 * that thread (or done before the engine starts).
 */
public final class MemoryKeySpace {
    /** Quarantine length used by {@link #MemoryKeySpace(RandomSource)}. */
    public static final int DEFAULT_QUARANTINE_ALLOCATIONS = 1024;
    /** Upper limit on the quarantine length (keeps the quarantine's memory bounded). */
    public static final int MAX_QUARANTINE_ALLOCATIONS = 1 << 24;
    /** Draws before giving up on finding a free key; only a broken source gets near this. */
    static final int MAX_DRAWS = 1000;

    private final RandomSource random;
    private final int quarantineAllocations;
    private final Int2ObjectHashMap<MemoryRegion> byLkey = new Int2ObjectHashMap<>(64, 0.5f, true);
    private final Int2ObjectHashMap<MemoryRegion> byRkey = new Int2ObjectHashMap<>(64, 0.5f, true);
    private final IntHashSet quarantined = new IntHashSet();

    // FIFO of released keys with the allocation count at release time; a key leaves once
    // quarantineAllocations further keys have been allocated. Grows only if many keys are
    // released without allocations in between.
    private int[] quarantineKeys;
    private long[] quarantineSince;
    private int quarantineHead;
    private int quarantineSize;
    private long allocations;

    /**
     * @param random source of keys; a {@link org.metaroce.core.SecureRandomSource} in production
     */
    public MemoryKeySpace(final RandomSource random) {
        this(random, DEFAULT_QUARANTINE_ALLOCATIONS);
    }

    /**
     * @param random source of keys
     * @param quarantineAllocations how many key allocations a released key must sit out,
     *     0..{@link #MAX_QUARANTINE_ALLOCATIONS}; 0 disables the quarantine (tests only)
     */
    public MemoryKeySpace(final RandomSource random, final int quarantineAllocations) {
        if (random == null) {
            throw new NullPointerException("random");
        }
        if (quarantineAllocations < 0 || quarantineAllocations > MAX_QUARANTINE_ALLOCATIONS) {
            throw new IllegalArgumentException("quarantineAllocations must be in 0.."
                + MAX_QUARANTINE_ALLOCATIONS + ", was " + quarantineAllocations);
        }
        this.random = random;
        this.quarantineAllocations = quarantineAllocations;
        final int initial = Math.max(16, Math.min(quarantineAllocations, 1024));
        this.quarantineKeys = new int[initial];
        this.quarantineSince = new long[initial];
    }

    /**
     * @return how many key allocations a released key sits out
     */
    public int quarantineAllocations() {
        return quarantineAllocations;
    }

    /**
     * Finds the live region an rkey names. Hot path: no allocation.
     *
     * @param rkey key from a peer's packet
     * @return the region, or null if no live region has this rkey
     */
    public MemoryRegion lookupRkey(final int rkey) {
        return byRkey.get(rkey);
    }

    /**
     * Finds the live region an lkey names. Hot path: no allocation.
     *
     * @param lkey key from a local scatter/gather entry
     * @return the region, or null if no live region has this lkey
     */
    public MemoryRegion lookupLkey(final int lkey) {
        return byLkey.get(lkey);
    }

    /**
     * @return number of live (registered) regions
     */
    public int liveRegionCount() {
        return byLkey.size();
    }

    /**
     * @param key any value
     * @return whether {@code key} is a live lkey or rkey
     */
    public boolean isLive(final int key) {
        return byLkey.containsKey(key) || byRkey.containsKey(key);
    }

    /**
     * @param key any value
     * @return whether {@code key} was released recently and may not be handed out yet
     */
    public boolean isQuarantined(final int key) {
        expireQuarantine();
        return quarantined.contains(key);
    }

    /**
     * @return number of released keys currently in quarantine
     */
    public int quarantineSize() {
        expireQuarantine();
        return quarantineSize;
    }

    /**
     * @return total keys handed out since creation (two per region)
     */
    public long allocations() {
        return allocations;
    }

    MemoryRegion register(
        final ProtectionDomain pd,
        final long address,
        final int length,
        final int access,
        final Object keepAlive) {
        final int lkey = allocateKey();
        final int rkey = allocateKey(lkey);
        final MemoryRegion region = new MemoryRegion(pd, lkey, rkey, access, address, length, keepAlive);
        byLkey.put(lkey, region);
        byRkey.put(rkey, region);
        return region;
    }

    void deregister(final MemoryRegion region) {
        if (byLkey.get(region.lkey()) != region || byRkey.get(region.rkey()) != region) {
            throw new IllegalStateException("memory region is not registered in this key space: " + region);
        }
        byLkey.remove(region.lkey());
        byRkey.remove(region.rkey());
        region.invalidate();
        quarantine(region.lkey());
        quarantine(region.rkey());
    }

    private int allocateKey() {
        return allocateKey(0);
    }

    /** Draws a key that is not 0, not {@code alsoExclude}, not live and not quarantined. */
    private int allocateKey(final int alsoExclude) {
        expireQuarantine();
        for (int i = 0; i < MAX_DRAWS; i++) {
            final int key = random.nextInt();
            if (key != 0 && key != alsoExclude && !isLive(key) && !quarantined.contains(key)) {
                allocations++;
                return key;
            }
        }
        throw new IllegalStateException("no free memory key after " + MAX_DRAWS
            + " draws from " + random + " (live regions " + liveRegionCount()
            + ", quarantined keys " + quarantineSize + "); the random source is broken");
    }

    private void quarantine(final int key) {
        if (quarantineAllocations == 0) {
            return;
        }
        if (quarantineSize == quarantineKeys.length) {
            growQuarantine();
        }
        final int tail = (quarantineHead + quarantineSize) % quarantineKeys.length;
        quarantineKeys[tail] = key;
        quarantineSince[tail] = allocations;
        quarantineSize++;
        quarantined.add(key);
    }

    private void expireQuarantine() {
        while (quarantineSize > 0 && allocations - quarantineSince[quarantineHead] >= quarantineAllocations) {
            quarantined.remove(quarantineKeys[quarantineHead]);
            quarantineHead = (quarantineHead + 1) % quarantineKeys.length;
            quarantineSize--;
        }
    }

    private void growQuarantine() {
        final int[] keys = new int[quarantineKeys.length * 2];
        final long[] since = new long[keys.length];
        for (int i = 0; i < quarantineSize; i++) {
            final int from = (quarantineHead + i) % quarantineKeys.length;
            keys[i] = quarantineKeys[from];
            since[i] = quarantineSince[from];
        }
        quarantineKeys = keys;
        quarantineSince = since;
        quarantineHead = 0;
    }

    @Override
    public String toString() {
        return "MemoryKeySpace{live=" + liveRegionCount()
            + ", quarantined=" + quarantineSize
            + ", quarantineAllocations=" + quarantineAllocations
            + ", allocations=" + allocations
            + ", random=" + random + "}";
    }
}
