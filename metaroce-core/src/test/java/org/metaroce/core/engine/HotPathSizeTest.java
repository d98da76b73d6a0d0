// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.metaroce.core.BytecodeSizes;
import org.metaroce.core.multipath.PathSelector;
import org.metaroce.core.reliability.ReceiveWindow;
import org.metaroce.core.reliability.RttEstimator;
import org.metaroce.core.verbs.CompletionQueue;
import org.metaroce.core.verbs.WorkRequestValidator;
import org.metaroce.core.wire.IntegrityCheck;
import org.metaroce.core.wire.PacketValidator;

/**
 * The methods C2 inlines on the request-reply path ({@code EnginePingPongBenchmark}: poll, packet
 * arrival, ACK, completion) stay small enough to be inlined: at most 325 bytes of bytecode,
 * HotSpot's {@code FreqInlineSize} for a hot call site (JDK 17 and 25). Above it a method becomes a
 * call of its own, which cost the first engine split of issue 19 about 6 % of a round trip: the
 * credit probe's check every poll, {@code Requester.probeCredit}, had grown from 317 to 326 bytes.
 * The list is what {@code -XX:+LogCompilation} showed inlined on main's ping-pong path at 100
 * bytes and more (docs/architecture.md, "Keeping the hot path inlined"); a renamed method fails
 * here until the list follows it. The big methods already called out of line on main
 * ({@code Endpoint.poll}, {@code Responder.onRequest}, {@code ResponderOutput.emit},
 * {@code Requester.emitNew}, {@code ResponseHandler.onAck}) are not listed.
 */
class HotPathSizeTest {
    /** HotSpot's FreqInlineSize on x86-64: the largest hot method C2 inlines. */
    private static final int FREQ_INLINE_SIZE = 325;

    @Test
    void theInlinedMethodsOfTheRequestReplyPathStayUnderFreqInlineSize() throws IOException {
        final List<String> tooBig = new ArrayList<>();
        final StringBuilder sizes = new StringBuilder();
        check(tooBig, sizes, QueuePair.class, "poll", "onPacket", "postSend", "postRecv");
        check(tooBig, sizes, QueuePairTraffic.class, "poll", "onPacket", "onRequest", "onResponse", "keepalive");
        check(tooBig, sizes, Requester.class, "emit", "probeCredit", "isCreditBlocked", "transmit", "onTimers");
        check(tooBig, sizes, Responder.class, "emit", "onlyCoalescedAckPending", "accept");
        check(tooBig, sizes, ResponderOutput.class, "onlyCoalescedAckPending");
        check(tooBig, sizes, Endpoint.class, "onDatagram");
        check(tooBig, sizes, AckWriter.class, "ack");
        check(tooBig, sizes, RequestEncoder.class, "layout");
        check(tooBig, sizes, RequestChecks.class, "matchReceive");
        check(tooBig, sizes, AtomicExecutor.class, "executeReady");
        check(tooBig, sizes, KeepaliveTimer.class, "due");
        check(tooBig, sizes, SenderCensus.class, "requestAccepted");
        check(tooBig, sizes, ReceiveQueue.class, "post");
        check(tooBig, sizes, SendQueue.class, "completeInOrder");
        check(tooBig, sizes, ScatterGather.class, "gather", "scatter");
        check(tooBig, sizes, PathSelector.class, "choose", "onFeedback");
        check(tooBig, sizes, PacketValidator.class, "firstViolation", "boundsViolation");
        check(tooBig, sizes, IntegrityCheck.class, "compute");
        check(tooBig, sizes, ReceiveWindow.class, "markReceived");
        check(tooBig, sizes, RttEstimator.class, "onSample");
        check(tooBig, sizes, CompletionQueue.class, "poll", "push");
        check(tooBig, sizes, WorkRequestValidator.class, "validateSend");
        System.out.println("bytecode sizes on the request-reply path:" + sizes);
        assertThat(tooBig).as("methods above FreqInlineSize (%d bytes)", FREQ_INLINE_SIZE).isEmpty();
    }

    private static void check(final List<String> tooBig, final StringBuilder sizes, final Class<?> type,
                              final String... methods) throws IOException {
        final Map<String, Integer> of = BytecodeSizes.of(type);
        for (final String method : methods) {
            assertThat(of).as("%s has a method %s", type.getSimpleName(), method).containsKey(method);
            final int size = of.get(method);
            sizes.append(' ').append(type.getSimpleName()).append('.').append(method).append('=').append(size);
            if (size > FREQ_INLINE_SIZE) {
                tooBig.add(type.getSimpleName() + "." + method + " (" + size + " bytes)");
            }
        }
    }
}
