// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.reflect.Proxy;
import java.util.ArrayList;
import java.util.List;
import org.agrona.BufferUtil;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;
import org.metaroce.core.SeededRandomSource;
import org.metaroce.core.verbs.AccessFlags;
import org.metaroce.core.verbs.CompletionQueue;
import org.metaroce.core.verbs.MemoryKeySpace;
import org.metaroce.core.verbs.MemoryRegion;
import org.metaroce.core.verbs.ProtectionDomain;
import org.metaroce.core.verbs.RecvRequest;
import org.metaroce.core.verbs.WcOpcode;
import org.metaroce.core.verbs.WcStatus;
import org.metaroce.core.verbs.WorkCompletion;

/** Receive completions on their own: post order, the cumulative PSN, flush statuses, overflow. */
class ReceiveCompletionsTest {
    private final ProtectionDomain pd = new ProtectionDomain(1, new MemoryKeySpace(new SeededRandomSource(7)));
    private final MemoryRegion region = pd.registerMemory(
        new UnsafeBuffer(BufferUtil.allocateDirectAligned(4096, 64)), AccessFlags.ALL);
    private final ReceiveQueue queue = new ReceiveQueue(8, 1);
    private final EndpointCounters counters = new EndpointCounters();
    private final List<CompletionQueue> overflowed = new ArrayList<>();

    private ReceiveCompletions completions(final CompletionQueue cq) {
        final ResponderContext qp = (ResponderContext) Proxy.newProxyInstance(getClass().getClassLoader(),
            new Class<?>[] {ResponderContext.class}, (proxy, method, args) -> switch (method.getName()) {
                case "recvCq" -> cq;
                case "qpn" -> 0x11;
                case "destQpnOrZero" -> 0x22;
                case "onCompletionQueueOverflow" -> overflowed.add((CompletionQueue) args[0]);
                default -> throw new UnsupportedOperationException(method.getName());
            });
        return new ReceiveCompletions(queue, qp, counters);
    }

    /** Posts a receive and, for {@code lastPsn} >= 0, gives it a whole message ending at that PSN. */
    private RecvWqe post(final long wrId, final int lastPsn) {
        queue.post(new RecvRequest(1).wrId(wrId).addSge(region.address(), 100, region.lkey()), pd);
        final RecvWqe recv = queue.forRsn((int) wrId);
        if (lastPsn >= 0) {
            recv.matched = true;
            recv.messageLength = 10;
            recv.bytesReceived = 10;
            recv.lastPsn = lastPsn;
        }
        return recv;
    }

    private static List<WorkCompletion> poll(final CompletionQueue cq) {
        final WorkCompletion[] out = new WorkCompletion[16];
        for (int i = 0; i < out.length; i++) {
            out[i] = new WorkCompletion();
        }
        return List.of(out).subList(0, cq.poll(out, out.length));
    }

    @Test
    void receivesCompleteInPostOrderOnceTheCumulativePsnPassesThem() {
        final CompletionQueue cq = new CompletionQueue(16);
        final ReceiveCompletions completions = completions(cq);
        post(0, 5);
        post(1, 3);
        post(2, 9);
        completions.completeInOrder(5);
        assertThat(poll(cq)).as("the oldest ends at the cumulative PSN: not yet").isEmpty();
        completions.completeInOrder(6);
        final List<WorkCompletion> done = poll(cq);
        assertThat(done).extracting(WorkCompletion::wrId).containsExactly(0L, 1L);
        assertThat(done.get(0).status()).isEqualTo(WcStatus.SUCCESS);
        assertThat(done.get(0).byteLen()).isEqualTo(10);
        assertThat(queue.posted()).isEqualTo(1);
        assertThat(overflowed).isEmpty();
    }

    @Test
    void aFlushGivesEachReceiveTheStatusItEarned() {
        final CompletionQueue cq = new CompletionQueue(16);
        post(0, 2);
        post(1, -1).tooSmall = true;
        post(2, -1).protectionError = true;
        post(3, 7);
        post(4, -1);
        completions(cq).flush(4);
        final List<WorkCompletion> done = poll(cq);
        assertThat(done).extracting(WorkCompletion::status).containsExactly(WcStatus.SUCCESS, WcStatus.LOC_LEN_ERR,
            WcStatus.LOC_PROT_ERR, WcStatus.WR_FLUSH_ERR, WcStatus.WR_FLUSH_ERR);
        assertThat(done.get(3).opcode()).isEqualTo(WcOpcode.RECV);
        assertThat(done.get(3).byteLen()).as("a flushed receive reports no bytes").isZero();
        assertThat(queue.posted()).isZero();
    }

    @Test
    void anOverflowStopsTheCompletionsAndIsReported() {
        final CompletionQueue cq = new CompletionQueue(1);
        post(0, 1);
        post(1, 2);
        post(2, 3);
        completions(cq).completeInOrder(10);
        assertThat(overflowed).containsExactly(cq);
        assertThat(counters.get(EndpointCounter.CQ_OVERFLOWS)).isEqualTo(1);
        assertThat(queue.posted()).as("the overflowing one is retired, the next waits").isEqualTo(1);
    }
}
