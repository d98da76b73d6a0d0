// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.netty;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;

import org.junit.jupiter.api.Test;

/**
 * {@link BlockingWait}'s arithmetic and exception mapping on their own; the waiting itself, in
 * every mode, is exercised through the service by {@code ConnectionServiceTest}.
 */
class BlockingWaitTest {
    @Test
    void aDeadlineIsNowPlusTheTimeoutCappedSoThatItCannotOverflow() {
        final long before = System.nanoTime();
        final long deadline = BlockingWait.deadline(Duration.ofMillis(5));
        assertThat(deadline - before).isBetween(5_000_000L, 5_000_000L + (System.nanoTime() - before));
        final long forever = BlockingWait.deadline(Duration.ofSeconds(Long.MAX_VALUE));
        assertThat(forever - System.nanoTime()).isLessThanOrEqualTo(BlockingWait.MAX_TIMEOUT_NS).isPositive();
        assertThat(BlockingWait.deadline(Duration.ZERO) - System.nanoTime()).isLessThanOrEqualTo(0);
    }

    @Test
    void aNegativeTimeoutIsRefused() {
        assertThatThrownBy(() -> BlockingWait.deadline(Duration.ofNanos(-1))).isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining("must not be negative");
        assertThatThrownBy(() -> BlockingWait.deadline(null)).isInstanceOf(NullPointerException.class);
    }

    @Test
    void checkedCausesAreWrappedRuntimeOnesKeptAndErrorsThrown() {
        final IllegalArgumentException runtime = new IllegalArgumentException("x");
        assertThat(BlockingWait.unchecked(runtime)).isSameAs(runtime);
        final IOException checked = new IOException("y");
        assertThat(BlockingWait.unchecked(checked)).isInstanceOf(IllegalStateException.class).hasCause(checked);
        final AssertionError error = new AssertionError("z");
        assertThatThrownBy(() -> BlockingWait.unchecked(error)).isSameAs(error);
    }

    @Test
    void theResultOfACompletedFutureIsItsValueOrItsCause() {
        assertThat(BlockingWait.resultOf(CompletableFuture.completedFuture("v"))).isEqualTo("v");
        final IllegalStateException failure = new IllegalStateException("closed");
        assertThatThrownBy(() -> BlockingWait.resultOf(CompletableFuture.failedFuture(failure))).isSameAs(failure);
    }
}
