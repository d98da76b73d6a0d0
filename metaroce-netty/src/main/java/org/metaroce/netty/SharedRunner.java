// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.netty;

import java.util.concurrent.atomic.AtomicBoolean;

/**
 * {@link ThreadingMode#SHARED}: the device registers with the loop of a {@link SharedDriver}, whose
 * thread drives it among others, and only detaches when it closes: the thread and its event loop
 * are the driver's to stop ({@link SharedDriver#close()}).
 */
final class SharedRunner extends DriverThreadRunner {
    /** Attaches to {@code driver}'s loop when started. */
    SharedRunner(final SharedDriver driver, final DrivenDevice device, final AtomicBoolean closed) {
        super(driver.loop(), device, closed);
    }

    @Override
    public ThreadingMode mode() {
        return ThreadingMode.SHARED;
    }

    @Override
    void stopLoop() {
        // The driver's, not the device's.
    }

    @Override
    void stopLoopAndJoin() {
        // The driver's, not the device's.
    }
}
