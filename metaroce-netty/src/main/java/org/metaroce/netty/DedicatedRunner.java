// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.netty;

import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * {@link ThreadingMode#DEDICATED}: the device starts a driver thread of its own, which runs its
 * duty cycles and idles with the configured strategy, and stops it when the device closes.
 */
final class DedicatedRunner extends DriverThreadRunner {
    private static final AtomicInteger THREAD_IDS = new AtomicInteger();

    private final DriverLoop loop;

    /** Starts the driver thread (named by the configuration, else {@code metaroce-driver-N}). */
    DedicatedRunner(final DeviceConfig config, final Transport transport, final DrivenDevice device,
                    final AtomicBoolean closed) {
        this(new DriverLoop(config.threadName() != null ? config.threadName()
            : "metaroce-driver-" + THREAD_IDS.incrementAndGet(), transport, config.idleStrategy(),
            config.deadlineSpinNs()), device, closed);
    }

    private DedicatedRunner(final DriverLoop loop, final DrivenDevice device, final AtomicBoolean closed) {
        super(loop, device, closed);
        this.loop = loop;
    }

    @Override
    public ThreadingMode mode() {
        return ThreadingMode.DEDICATED;
    }

    @Override
    void stopLoop() {
        loop.stop();
    }

    @Override
    void stopLoopAndJoin() {
        loop.stopAndJoin();
    }
}
