// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.netty;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.CompletableFuture;

import org.junit.jupiter.api.Test;

/** {@link DisconnectWaiters} on its own, with plain objects as connections. */
class DisconnectWaitersTest {
    @Test
    void waitersCompleteTogetherWhenTheirConnectionIsOver() {
        final DisconnectWaiters<Object> waiters = new DisconnectWaiters<>();
        final Object c = new Object();
        final Object other = new Object();
        final CompletableFuture<Void> first = new CompletableFuture<>();
        final CompletableFuture<Void> second = new CompletableFuture<>();
        final CompletableFuture<Void> elsewhere = new CompletableFuture<>();
        waiters.add(c, first);
        waiters.add(c, second);
        waiters.add(other, elsewhere);
        waiters.over(c);
        assertThat(first).isCompleted();
        assertThat(second).isCompleted();
        assertThat(elsewhere).isNotDone();
        assertThat(waiters.size()).isEqualTo(1);
        waiters.clear();
        waiters.over(other);
        assertThat(elsewhere).as("forgotten").isNotDone();
    }

}
