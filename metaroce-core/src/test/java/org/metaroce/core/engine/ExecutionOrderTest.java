// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.engine;

import static org.assertj.core.api.Assertions.assertThat;

import org.agrona.BufferUtil;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;
import org.metaroce.core.SeededRandomSource;
import org.metaroce.core.reliability.ReceiveWindow;
import org.metaroce.core.verbs.AccessFlags;
import org.metaroce.core.verbs.MemoryKeySpace;
import org.metaroce.core.verbs.MemoryRegion;
import org.metaroce.core.verbs.ProtectionDomain;

/** {@link ExecutionOrder} on its own: held READs and atomics take effect in PSN order [OPS-029]. */
class ExecutionOrderTest {
    private final MemoryRegion region = new ProtectionDomain(1, new MemoryKeySpace(new SeededRandomSource(29)))
        .registerMemory(new UnsafeBuffer(BufferUtil.allocateDirectAligned(4096, 64)), AccessFlags.ALL);
    private final ReceiveWindow window = new ReceiveWindow(64, 10);
    private final ReadResponder reads = new ReadResponder(4);
    private final AtomicExecutor atomics = new AtomicExecutor(4);
    private final ExecutionOrder order = new ExecutionOrder(window, reads, atomics);

    private void arrive(final int... psns) {
        for (final int psn : psns) {
            window.markReceived(psn);
        }
    }

    @Test
    void anAtomicBeforeAHeldReadRunsFirstAndTheReadWaitsForIt() {
        region.buffer().putLong(0, 1);
        atomics.hold(11, 1, false, region, 0, 5, 0);
        reads.hold(12, region, 0, 0, 8, 2, 1, 8, false);
        arrive(12);
        order.executeReadyAtomics();
        assertThat(region.buffer().getLong(0)).as("PSN 10 has not arrived").isEqualTo(1);
        assertThat(order.readExecutable()).isFalse();
        arrive(10, 11);
        assertThat(order.readExecutable()).as("the atomic before it has not run").isFalse();
        order.executeReadyAtomics();
        assertThat(region.buffer().getLong(0)).isEqualTo(6);
        assertThat(order.readExecutable()).isTrue();
    }

    @Test
    void anAtomicAfterAHeldReadWaitsUntilTheReadIsAnswered() {
        region.buffer().putLong(0, 1);
        reads.hold(11, region, 0, 0, 8, 1, 1, 8, false);
        atomics.hold(12, 2, false, region, 0, 5, 0);
        arrive(10, 11, 12);
        assertThat(order.readExecutable()).isTrue();
        order.executeReadyAtomics();
        assertThat(region.buffer().getLong(0)).as("the READ must read the value before the add").isEqualTo(1);
        reads.forgetOldest();
        order.executeReadyAtomics();
        assertThat(region.buffer().getLong(0)).isEqualTo(6);
    }
}
