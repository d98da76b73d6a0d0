// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.netty;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;

import org.junit.jupiter.api.Test;

/**
 * {@link RequestQueue} on its own, with requests named "serviceId:name" and a set of those no
 * longer pending (their handshake entry expired): who gets which request, in which order, and
 * what is dropped [CM-039].
 */
class RequestQueueTest {
    private final Set<String> expired = new HashSet<>();
    private final RequestQueue<String> queue = new RequestQueue<>(r -> Long.parseLong(r.substring(0, r.indexOf(':'))),
        r -> !expired.contains(r));

    @Test
    void requestsWaitInArrivalOrderPerService() {
        queue.arrived("1:a");
        queue.arrived("2:x");
        queue.arrived("1:b");
        assertThat(queue.queued(1)).isEqualTo(2);
        assertThat(take(1).getNow(null)).isEqualTo("1:a");
        assertThat(take(2).getNow(null)).isEqualTo("2:x");
        assertThat(take(1).getNow(null)).isEqualTo("1:b");
        assertThat(queue.queued(1)).isZero();
    }

    @Test
    void aWaiterGetsTheNextRequestOfItsServiceOnly() {
        final CompletableFuture<String> waiter = take(1);
        assertThat(waiter).isNotDone();
        queue.arrived("2:x");
        assertThat(waiter).isNotDone();
        queue.arrived("1:a");
        assertThat(waiter).isCompletedWithValue("1:a");
        assertThat(queue.queued(1)).as("handed over, not queued").isZero();
        assertThat(queue.queued(2)).isEqualTo(1);
    }

    @Test
    void aWaiterThatGaveUpIsPassedOver() {
        final CompletableFuture<String> gaveUp = take(1);
        final CompletableFuture<String> waiting = take(1);
        gaveUp.cancel(false);
        queue.arrived("1:a");
        assertThat(waiting).isCompletedWithValue("1:a");
        queue.arrived("1:b");
        assertThat(queue.queued(1)).as("no waiter left").isEqualTo(1);
    }

    @Test
    void expiredRequestsAreSkippedWhenHandedOutAndDroppedFromTheHeadOnArrival() {
        queue.arrived("1:a");
        queue.arrived("1:b");
        queue.arrived("1:c");
        expired.add("1:a");
        expired.add("1:b");
        assertThat(take(1).getNow(null)).as("a and b expired").isEqualTo("1:c");

        queue.arrived("1:d");
        queue.arrived("1:e");
        expired.add("1:d");
        queue.arrived("1:f");
        // [CM-039]: the expired head goes as a new request arrives, so the queue holds e and f only.
        assertThat(queue.queued(1)).isEqualTo(2);
    }

    @Test
    void aRequestGivenBackIsTheNextHandedOut() {
        queue.arrived("1:b");
        queue.giveBack("1:a");
        assertThat(take(1).getNow(null)).isEqualTo("1:a");
        assertThat(take(1).getNow(null)).isEqualTo("1:b");
    }

    @Test
    void clearingHandsOverTheUndecidedOnesAndForgetsWaiters() {
        queue.arrived("1:a");
        queue.arrived("1:b");
        queue.arrived("2:x");
        expired.add("1:a");
        final CompletableFuture<String> waiter = take(3);
        final List<String> rejected = new ArrayList<>();
        queue.clear(rejected::add);
        assertThat(rejected).containsExactlyInAnyOrder("1:b", "2:x");
        assertThat(queue.queued(1)).isZero();
        queue.arrived("3:y");
        assertThat(waiter).as("forgotten").isNotDone();
        assertThat(queue.queued(3)).isEqualTo(1);
    }

    private CompletableFuture<String> take(final long serviceId) {
        final CompletableFuture<String> f = new CompletableFuture<>();
        queue.take(serviceId, f);
        return f;
    }
}
