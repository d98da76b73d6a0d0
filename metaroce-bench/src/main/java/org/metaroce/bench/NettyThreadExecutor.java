// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.bench;

import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import io.netty.util.concurrent.FastThreadLocalThread;

/**
 * JMH's benchmark threads as Netty {@link FastThreadLocalThread}s (selected by {@link BenchmarkBase}
 * with {@code -Djmh.executor=CUSTOM}). MetaRoCE's INVOKER-mode devices run Netty's send and receive
 * paths on the benchmark thread, and Netty 4.2 pools its per-packet objects (the {@code Recycler})
 * only on such threads: on a plain thread every pooled buffer and outbound entry is a new object.
 * The {@code metaroce} tools and the DEDICATED/SHARED driver threads are FastThreadLocalThreads too,
 * so this measures what users of the library get; the peers (Aeron, TCP) do not use Netty and are
 * unaffected. JMH calls the {@code (int, String)} constructor.
 */
public final class NettyThreadExecutor extends ThreadPoolExecutor {
    /**
     * @param maxThreads benchmark threads JMH needs
     * @param prefix thread name prefix
     */
    public NettyThreadExecutor(final int maxThreads, final String prefix) {
        super(maxThreads, maxThreads, 1, TimeUnit.MINUTES, new LinkedBlockingQueue<>(), new NamedFactory(prefix));
    }

    private static final class NamedFactory implements java.util.concurrent.ThreadFactory {
        private final String prefix;
        private final AtomicInteger next = new AtomicInteger();

        NamedFactory(final String prefix) {
            this.prefix = prefix;
        }

        @Override
        public Thread newThread(final Runnable r) {
            final Thread t = new FastThreadLocalThread(r, prefix + "-jmh-worker-" + next.incrementAndGet());
            t.setDaemon(true);
            return t;
        }
    }
}
