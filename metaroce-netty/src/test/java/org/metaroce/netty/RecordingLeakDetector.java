// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.netty;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.UnpooledByteBufAllocator;
import io.netty.util.ResourceLeakDetector;

/**
 * Netty's leak detector, recording every leak it reports so that tests can fail on them. Installed
 * for the whole test JVM by the surefire system property {@code io.netty.customResourceLeakDetector}
 * (so it is in place before Netty creates its first detector), with {@code PARANOID} level: every
 * buffer is tracked.
 */
public final class RecordingLeakDetector<T> extends ResourceLeakDetector<T> {
    private static final List<String> LEAKS = new ArrayList<>();
    private static final AtomicInteger INSTANCES = new AtomicInteger();

    public RecordingLeakDetector(final Class<?> resourceType, final int samplingInterval) {
        super(resourceType, samplingInterval);
        INSTANCES.incrementAndGet();
    }

    /** The constructor Netty's factory looks up first (it logs an error when it is missing). */
    @SuppressWarnings("deprecation")
    public RecordingLeakDetector(final Class<?> resourceType, final int samplingInterval, final long maxActive) {
        this(resourceType, samplingInterval);
    }

    @Override
    protected boolean needReport() {
        return true;
    }

    @Override
    protected void reportTracedLeak(final String resourceType, final String records) {
        record("LEAK: " + resourceType + ".release() was not called before it was garbage-collected." + records);
    }

    @Override
    protected void reportUntracedLeak(final String resourceType) {
        record("LEAK: " + resourceType + ".release() was not called before it was garbage-collected (untraced).");
    }

    private static void record(final String leak) {
        synchronized (LEAKS) {
            LEAKS.add(leak);
        }
        System.err.println(leak);
    }

    /** @return whether Netty uses this detector (the system property took effect) */
    static boolean installed() {
        // Touch the buffer classes so their detectors exist.
        PooledByteBufAllocator.DEFAULT.directBuffer(1).release();
        return INSTANCES.get() > 0 && ResourceLeakDetector.getLevel() == Level.PARANOID;
    }

    /**
     * Makes the garbage collector find unreachable, unreleased buffers and Netty report them, then
     * returns (and forgets) every leak reported so far.
     *
     * @return the leak reports
     */
    static List<String> collectLeaks() {
        for (int i = 0; i < 4; i++) {
            System.gc();
            try {
                Thread.sleep(10);
            } catch (final InterruptedException ex) {
                Thread.currentThread().interrupt();
                break;
            }
            // Netty reports queued leaks when it tracks the next resource.
            final ByteBuf a = PooledByteBufAllocator.DEFAULT.directBuffer(16);
            a.release();
            final ByteBuf b = UnpooledByteBufAllocator.DEFAULT.heapBuffer(16);
            b.release();
        }
        synchronized (LEAKS) {
            final List<String> out = new ArrayList<>(LEAKS);
            LEAKS.clear();
            return out;
        }
    }
}
