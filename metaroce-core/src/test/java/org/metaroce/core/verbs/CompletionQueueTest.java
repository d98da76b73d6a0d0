// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.verbs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayDeque;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

class CompletionQueueTest {
    private static WorkCompletion[] completions(final int n) {
        final WorkCompletion[] out = new WorkCompletion[n];
        for (int i = 0; i < n; i++) {
            out[i] = new WorkCompletion();
        }
        return out;
    }

    private static boolean push(final CompletionQueue cq, final long wrId) {
        return cq.push(wrId, WcStatus.SUCCESS, WcOpcode.SEND, (int)wrId, 0, 0, 1, 2);
    }

    @Test
    void capacityIsValidated() {
        assertThatThrownBy(() -> new CompletionQueue(0))
            .isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining("capacity must be in 1..1048576, was 0");
        assertThatThrownBy(() -> new CompletionQueue(-1)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new CompletionQueue(CompletionQueue.MAX_CAPACITY + 1))
            .isInstanceOf(IllegalArgumentException.class);
        assertThat(new CompletionQueue(1).capacity()).isEqualTo(1);
        assertThat(new CompletionQueue(CompletionQueue.MAX_CAPACITY).capacity()).isEqualTo(1 << 20);
    }

    @Test
    void pollReturnsCompletionsInPushOrderWithEveryField() {
        final CompletionQueue cq = new CompletionQueue(4);
        assertThat(cq.push(10L, WcStatus.SUCCESS, WcOpcode.RECV, 100, 0x77, WorkCompletion.WC_WITH_IMM, 5, 6)).isTrue();
        assertThat(cq.push(11L, WcStatus.REM_ACCESS_ERR, WcOpcode.RDMA_READ, 0, 0, 0, 5, 0)).isTrue();
        final WorkCompletion[] out = completions(4);
        assertThat(cq.poll(out, 4)).isEqualTo(2);
        assertThat(out[0].wrId()).isEqualTo(10L);
        assertThat(out[0].status()).isEqualTo(WcStatus.SUCCESS);
        assertThat(out[0].opcode()).isEqualTo(WcOpcode.RECV);
        assertThat(out[0].byteLen()).isEqualTo(100);
        assertThat(out[0].immData()).isEqualTo(0x77);
        assertThat(out[0].hasImm()).isTrue();
        assertThat(out[0].qpNum()).isEqualTo(5);
        assertThat(out[0].srcQp()).isEqualTo(6);
        assertThat(out[1].wrId()).isEqualTo(11L);
        assertThat(out[1].status()).isEqualTo(WcStatus.REM_ACCESS_ERR);
        assertThat(cq.poll(out, 4)).isZero();
        assertThat(cq.isEmpty()).isTrue();
    }

    @Test
    void pollNeverFillsMoreThanMaxOrTheArray() {
        final CompletionQueue cq = new CompletionQueue(10);
        for (int i = 0; i < 10; i++) {
            push(cq, i);
        }
        assertThat(cq.poll(completions(3), 5)).isEqualTo(3);
        assertThat(cq.poll(completions(8), 2)).isEqualTo(2);
        assertThat(cq.poll(completions(8), 0)).isZero();
        assertThat(cq.poll(new WorkCompletion[0], 5)).isZero();
        assertThat(cq.size()).isEqualTo(5);
        final WorkCompletion[] out = completions(8);
        assertThat(cq.poll(out, 8)).isEqualTo(5);
        assertThat(out[0].wrId()).isEqualTo(5);
        assertThat(out[4].wrId()).isEqualTo(9);
    }

    @Test
    void negativeMaxIsRejected() {
        final CompletionQueue cq = new CompletionQueue(2);
        assertThatThrownBy(() -> cq.poll(completions(1), -1))
            .isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining("max must not be negative, was -1");
    }

    @Test
    void wrapsAroundWithNonPowerOfTwoCapacity() {
        final CompletionQueue cq = new CompletionQueue(3);
        final WorkCompletion[] out = completions(2);
        long next = 0;
        long expected = 0;
        for (int round = 0; round < 100; round++) {
            assertThat(push(cq, next++)).isTrue();
            assertThat(push(cq, next++)).isTrue();
            assertThat(cq.poll(out, 2)).isEqualTo(2);
            assertThat(out[0].wrId()).isEqualTo(expected++);
            assertThat(out[1].wrId()).isEqualTo(expected++);
        }
        assertThat(cq.isInError()).isFalse();
    }

    @Test
    void overflowLatchesErrorAndCountsEveryLostCompletion() {
        final CompletionQueue cq = new CompletionQueue(2);
        assertThat(push(cq, 1)).isTrue();
        assertThat(push(cq, 2)).isTrue();
        assertThat(cq.remainingCapacity()).isZero();
        assertThat(cq.isInError()).isFalse();
        assertThat(push(cq, 3)).isFalse();
        assertThat(cq.isInError()).isTrue();
        assertThat(cq.overflowCount()).isEqualTo(1);

        // Already queued completions are still delivered.
        final WorkCompletion[] out = completions(4);
        assertThat(cq.poll(out, 4)).isEqualTo(2);
        assertThat(out[0].wrId()).isEqualTo(1);
        assertThat(out[1].wrId()).isEqualTo(2);

        // Even with room again, the queue stays in error and keeps counting.
        assertThat(push(cq, 4)).isFalse();
        assertThat(cq.overflowCount()).isEqualTo(2);
        assertThat(cq.poll(out, 4)).isZero();
        assertThat(cq.toString()).contains("inError=true").contains("overflowCount=2");
    }

    @Test
    void sizeAndRemainingCapacityTrackOccupancy() {
        final CompletionQueue cq = new CompletionQueue(5);
        assertThat(cq.size()).isZero();
        assertThat(cq.remainingCapacity()).isEqualTo(5);
        push(cq, 1);
        push(cq, 2);
        assertThat(cq.size()).isEqualTo(2);
        assertThat(cq.isEmpty()).isFalse();
        assertThat(cq.remainingCapacity()).isEqualTo(3);
        assertThat(cq.toString()).contains("capacity=5").contains("size=2");
    }

    @Test
    void pushAndPollDoNotAllocate() {
        final CompletionQueue cq = new CompletionQueue(16);
        final WorkCompletion[] out = completions(4);
        final long bytes = Allocations.allocatedBy(100_000, () -> {
            push(cq, 1);
            push(cq, 2);
            cq.poll(out, 4);
        });
        assertThat(bytes).as("bytes allocated by 100k push/push/poll").isLessThan(1024);
        assertThat(cq.isInError()).isFalse();
    }

    @Property(tries = 300)
    void preservesFifoOrderUnderRandomInterleavings(
        @ForAll @IntRange(min = 1, max = 9) final int capacity,
        @ForAll @Size(max = 200) final List<@IntRange(min = -4, max = 6) Integer> ops) {
        // op > 0: push that many; op <= 0: poll up to -op (0 = poll with max 0).
        final CompletionQueue cq = new CompletionQueue(capacity);
        final ArrayDeque<Long> model = new ArrayDeque<>();
        final WorkCompletion[] out = completions(4);
        boolean modelError = false;
        long modelOverflow = 0;
        long next = 0;
        for (final int op : ops) {
            if (op > 0) {
                for (int i = 0; i < op; i++) {
                    final long wrId = next++;
                    final boolean expectAccepted = !modelError && model.size() < capacity;
                    assertThat(push(cq, wrId)).isEqualTo(expectAccepted);
                    if (expectAccepted) {
                        model.addLast(wrId);
                    } else {
                        modelError = true;
                        modelOverflow++;
                    }
                }
            } else {
                final int polled = cq.poll(out, -op);
                assertThat(polled).isEqualTo(Math.min(-op, model.size()));
                for (int i = 0; i < polled; i++) {
                    assertThat(out[i].wrId()).isEqualTo(model.removeFirst());
                    assertThat(out[i].byteLen()).isEqualTo((int)out[i].wrId());
                }
            }
            assertThat(cq.size()).isEqualTo(model.size());
            assertThat(cq.isInError()).isEqualTo(modelError);
            assertThat(cq.overflowCount()).isEqualTo(modelOverflow);
        }
    }

    @Test
    // A hang guard, not a performance bound: on two cores shared with other work a spinning
    // thread can wait whole scheduler slices for the other one, so both yield when stuck.
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void twoThreadsLoseAndDuplicateNothing() throws Exception {
        final int total = 1_000_000;
        final CompletionQueue cq = new CompletionQueue(1000); // not a power of two on purpose
        final AtomicReference<Throwable> producerFailure = new AtomicReference<>();
        final Thread producer = new Thread(() -> {
            try {
                for (int i = 0; i < total; i++) {
                    while (cq.remainingCapacity() == 0) {
                        Thread.yield();
                    }
                    if (!cq.push(i, WcStatus.SUCCESS, WcOpcode.RDMA_WRITE, i, ~i, 0, i & 0xFFFFFF, 0)) {
                        throw new AssertionError("push failed with free capacity at " + i);
                    }
                }
            } catch (final Throwable t) {
                producerFailure.set(t);
            }
        }, "cq-producer");
        final long start = System.nanoTime();
        producer.start();
        final WorkCompletion[] out = completions(64);
        long expected = 0;
        while (expected < total) {
            final int n = cq.poll(out, out.length);
            for (int i = 0; i < n; i++) {
                final WorkCompletion wc = out[i];
                if (wc.wrId() != expected || wc.byteLen() != (int)expected || wc.immData() != ~(int)expected) {
                    throw new AssertionError("expected completion " + expected + " but got " + wc);
                }
                expected++;
            }
            if (n == 0) {
                if (producerFailure.get() != null) {
                    break;
                }
                Thread.yield();
            }
        }
        producer.join();
        final long elapsedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        System.out.println("CompletionQueue SPSC: " + total + " completions in " + elapsedMs + " ms");
        assertThat(producerFailure.get()).isNull();
        assertThat(expected).isEqualTo(total);
        assertThat(cq.poll(out, out.length)).isZero();
        assertThat(cq.isInError()).isFalse();
        assertThat(cq.overflowCount()).isZero();
    }

    @Test
    @Timeout(value = 30, unit = TimeUnit.SECONDS)
    void awaitCompletionsReturnsAtOnceWhenOneIsQueuedAndWakesOnPush() throws Exception {
        final CompletionQueue cq = new CompletionQueue(8);
        push(cq, 1);
        assertThat(cq.awaitCompletions(TimeUnit.SECONDS.toNanos(10))).isFalse();
        final WorkCompletion[] out = {new WorkCompletion()};
        assertThat(cq.poll(out, 1)).isEqualTo(1);
        // A push from the producer thread ends a 10 s wait: 200 rounds each well under the wait.
        for (int i = 0; i < 200; i++) {
            final long id = i;
            final Thread producer = new Thread(() -> {
                java.util.concurrent.locks.LockSupport.parkNanos(50_000);
                push(cq, id);
            });
            final long start = System.nanoTime();
            producer.start();
            while (cq.size() == 0) {
                cq.awaitCompletions(TimeUnit.SECONDS.toNanos(10));
            }
            assertThat(System.nanoTime() - start).as("round %d", i).isLessThan(TimeUnit.SECONDS.toNanos(5));
            assertThat(cq.poll(out, 1)).isEqualTo(1);
            assertThat(out[0].wrId()).isEqualTo(id);
            producer.join();
        }
    }
}
