// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayDeque;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.metaroce.core.verbs.SendFlags;
import org.metaroce.core.verbs.SendRequest;
import org.metaroce.core.verbs.WcStatus;
import org.metaroce.core.verbs.WrOpcode;
import org.metaroce.core.wire.BaseHeader;
import org.metaroce.core.wire.Flags;
import org.metaroce.core.wire.Opcode;

/**
 * [REL-059]: transmissions answered by NACK TRIMMED do not count towards the limit of 16
 * transmissions [REL-030]. Under incast with trimming a packet can be trimmed many times in a
 * row while the path and the peer are demonstrably alive; the limit is for black holes.
 */
class TrimmedRetransmissionLimitTest {
    private static final int TRIMS = 24;

    /** Trims the first {@code trims} transmissions of the WRITE, then lets it through; returns the fixture. */
    private static TwoNodeFixture writeTrimmed(final int trims, final boolean alsoDropSilently) {
        final TwoNodeFixture f = TwoNodeFixture.countingRetriesOnly(1201).connect(1024);
        final ArrayDeque<UnsafeBuffer> captured = new ArrayDeque<>();
        final int[] seen = {0};
        f.wire.filter((from, to, buf, off, len, now) -> {
            if (from != f.a.node || buf.getByte(off + 1) != Opcode.WRITE_WITH_IMM.value() && buf.getByte(off + 1) != Opcode.WRITE.value()) {
                return false;
            }
            seen[0]++;
            if (seen[0] > trims) {
                return false;
            }
            if (!alsoDropSilently) {
                final UnsafeBuffer copy = new UnsafeBuffer(new byte[len]);
                copy.putBytes(0, buf, off, len);
                captured.add(copy);
            }
            return true;
        });
        f.a.mr.buffer().setMemory(0, 1000, (byte) 0x5A);
        f.a.qp.postSend(new SendRequest(1).wrId(1).opcode(WrOpcode.RDMA_WRITE).sendFlags(SendFlags.SIGNALED)
            .addSge(f.a.address(0), 1000, f.a.mr.lkey()).remoteAddr(f.b.address(0)).rkey(f.b.mr.rkey()));
        final long deadline = f.wire.now() + 2_000_000_000L;
        while (f.a.sendCompletions.isEmpty() && f.wire.now() < deadline) {
            f.wire.runUntil(() -> !captured.isEmpty() || !f.a.sendCompletions.isEmpty(), 100_000_000L);
            f.a.drain();
            final UnsafeBuffer trimmed = captured.poll();
            if (trimmed != null) {
                // What a trimming switch delivers [WIRE-042]: the header with TRIMMED and Payload
                // Length 0, payload and integrity check cut.
                final int opcode = trimmed.getByte(1);
                final int headerLength = opcode == Opcode.WRITE.value() ? Opcode.WRITE.headerLength()
                    : Opcode.WRITE_WITH_IMM.headerLength();
                final BaseHeader h = new BaseHeader().wrap(trimmed, 0);
                h.flags(h.flags() | Flags.TRIMMED).payloadLength(0);
                f.b.endpoint.onDatagram(f.wire.now(), trimmed, 0, headerLength, f.a.node, DatagramEndpoint.ECN_NOT_ECT);
            }
        }
        return f;
    }

    @Test
    @DisplayName("[REL-059] [REL-036] a WRITE trimmed 24 times in a row is still delivered; the QP does not end")
    void trimmedTransmissionsDoNotEndTheQp() {
        System.out.println("seed=1201");
        final TwoNodeFixture f = writeTrimmed(TRIMS, false);
        assertThat(f.a.sendCompletions).hasSize(1);
        assertThat(f.a.sendCompletions.get(0).status()).isEqualTo(WcStatus.SUCCESS);
        assertThat(f.b.endpoint.counters().get(EndpointCounter.NACKS_OUT_TRIMMED)).isEqualTo(TRIMS);
        // More trim-caused retransmissions than the 16 transmissions REL-030 allows (a tail
        // probe may have resent one copy before its NACK arrived).
        assertThat(f.a.endpoint.counters().get(EndpointCounter.RETRANSMITS_TRIMMED)).isGreaterThan(16);
        System.out.println(f.a.endpoint.counters());
        for (int i = 0; i < 1000; i++) {
            assertThat(f.b.mr.buffer().getByte(i)).isEqualTo((byte) 0x5A);
        }
    }

    @Test
    @DisplayName("[REL-030] [REL-059] silent losses still count: a WRITE lost 24 times ends the QP with RETRY_EXC_ERR")
    void silentLossesStillEndTheQp() {
        System.out.println("seed=1201");
        final TwoNodeFixture f = writeTrimmed(TRIMS, true);
        assertThat(f.a.sendCompletions).hasSize(1);
        assertThat(f.a.sendCompletions.get(0).status()).isEqualTo(WcStatus.RETRY_EXC_ERR);
    }

    @Test
    @DisplayName("[REL-059] [REL-036] a WRITE trimmed for ever still ends the QP, at the trim limit")
    void trimmedForeverEndsAtTheTrimLimit() {
        System.out.println("seed=1201");
        final TwoNodeFixture f = writeTrimmed(Integer.MAX_VALUE, false);
        assertThat(f.a.sendCompletions).hasSize(1);
        assertThat(f.a.sendCompletions.get(0).status()).isEqualTo(WcStatus.RETRY_EXC_ERR);
        // Each trim restarts the timer [REL-036], so the trim limit, not the retry count, ends it.
        assertThat(f.b.endpoint.counters().get(EndpointCounter.NACKS_OUT_TRIMMED))
            .isGreaterThanOrEqualTo(Requester.TRIM_LIMIT);
        System.out.println(f.a.endpoint.counters());
    }
}
