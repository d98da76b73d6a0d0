// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.engine;

import org.metaroce.core.reliability.ReceiveWindow;

/**
 * The order between a responder's held READs and atomics [OPS-029]: each runs once every earlier
 * PSN has arrived and every earlier READ or atomic has run. Neither {@link ReadResponder} nor
 * {@link AtomicExecutor} knows the other or the window; this class, which reads all three, tells
 * each the cumulative PSN and the other's oldest held PSN as plain values.
 */
final class ExecutionOrder {
    private final ReceiveWindow window;
    private final ReadResponder reads;
    private final AtomicExecutor atomics;

    ExecutionOrder(final ReceiveWindow window, final ReadResponder reads, final AtomicExecutor atomics) {
        this.window = window;
        this.reads = reads;
        this.atomics = atomics;
    }

    /**
     * Executes held atomics whose turn has come: every earlier PSN has arrived and every earlier
     * READ has been answered, so atomics and READs take effect in PSN order [OPS-029].
     */
    void executeReadyAtomics() {
        final boolean readHeld = reads.hasHeld();
        atomics.executeReady(window.expectedPsn(), readHeld, readHeld ? reads.oldestPsn() : 0);
    }

    /** @return whether the oldest held READ may run: every earlier PSN arrived and earlier atomics ran [OPS-029] */
    boolean readExecutable() {
        final boolean atomicHeld = atomics.hasHeld();
        return reads.oldestMayRun(window.expectedPsn(), atomicHeld, atomicHeld ? atomics.oldestHeldPsn() : 0);
    }
}
