// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.netty;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;

/** {@link CommandQueue} on its own: what it refuses and why, and what a waiting caller is told. */
class CommandQueueTest {
    private final AtomicBoolean closed = new AtomicBoolean();
    private final DriverCounters counters = new DriverCounters(1);
    private final AtomicInteger wakeups = new AtomicInteger();
    private final CommandQueue queue = new CommandQueue(2, null, closed, counters, wakeups::incrementAndGet);

    @Test
    void anAcceptedCommandWakesTheOwnerAndRunsAtTheNextDrain() {
        final List<String> ran = new ArrayList<>();
        assertThat(queue.offer(() -> ran.add("a"))).isTrue();
        assertThat(wakeups).hasValue(1);
        assertThat(queue.isEmpty()).isFalse();
        assertThat(queue.drain(Runnable::run)).isEqualTo(1);
        assertThat(ran).containsExactly("a");
        assertThat(queue.isEmpty()).isTrue();
    }

    @Test
    void aFullQueueRefusesCountsAndSaysSo() {
        assertThat(queue.offer(() -> { })).isTrue();
        assertThat(queue.offer(() -> { })).isTrue();
        assertThat(queue.offer(() -> { })).isFalse();
        assertThat(wakeups).as("no wake-up for a refused command").hasValue(2);
        assertThat(counters.get(DriverCounter.COMMANDS_REJECTED)).isEqualTo(1);
        assertThat(queue.rejection()).hasMessage("command queue is full (2)");
        final CompletableFuture<Integer> future = queue.submit(ep -> 1);
        assertThatThrownBy(() -> future.get(1, TimeUnit.SECONDS)).isInstanceOf(ExecutionException.class)
            .hasCauseInstanceOf(RejectedExecutionException.class).hasMessageContaining("command queue is full (2)");
    }

    @Test
    void aClosedDeviceRefusesEverythingAndFailsWhatWasQueued() throws Exception {
        final CompletableFuture<Integer> queued = queue.submit(ep -> 1);
        closed.set(true);
        assertThat(queue.offer(() -> { })).isFalse();
        assertThat(counters.get(DriverCounter.COMMANDS_REJECTED)).isEqualTo(1);
        assertThat(queue.rejection()).hasMessage("device is closed");
        queue.failQueued();
        assertThat(queue.isEmpty()).isTrue();
        assertThatThrownBy(() -> queued.get(1, TimeUnit.SECONDS)).hasCauseInstanceOf(RejectedExecutionException.class)
            .hasMessageContaining("device is closed");
    }

    @Test
    void aCallerGetsTheResultOrWhatTheFunctionThrew() throws Exception {
        final Thread owner = new Thread(() -> {
            while (!Thread.currentThread().isInterrupted()) {
                queue.drain(Runnable::run);
                Thread.onSpinWait();
            }
        });
        owner.start();
        try {
            final int result = queue.call(ep -> 42, TimeUnit.SECONDS.toNanos(5), "");
            assertThat(result).isEqualTo(42);
            assertThatThrownBy(() -> queue.call(ep -> {
                throw new IllegalArgumentException("bad");
            }, TimeUnit.SECONDS.toNanos(5), "")).isInstanceOf(IllegalArgumentException.class).hasMessage("bad");
        } finally {
            owner.interrupt();
            owner.join();
        }
    }

    @Test
    void aTimeoutNamesTheWaitAndTheModesHint() {
        assertThatThrownBy(() -> queue.call(ep -> 1, TimeUnit.MILLISECONDS.toNanos(20), " (a hint)"))
            .isInstanceOf(IllegalStateException.class)
            .hasMessage("the owning thread did not run the command within 20 ms (a hint)");
    }
}
