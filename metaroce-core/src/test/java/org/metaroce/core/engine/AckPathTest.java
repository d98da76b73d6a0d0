// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.metaroce.core.testwire.LinkProfile;
import org.metaroce.core.verbs.RecvRequest;
import org.metaroce.core.verbs.SendFlags;
import org.metaroce.core.verbs.SendRequest;
import org.metaroce.core.verbs.WrOpcode;
import org.metaroce.core.wire.BaseHeader;
import org.metaroce.core.wire.Opcode;

/**
 * [MP-023]: with burst spraying, a bare ACK follows the path of its QP's latest new request packet
 * (once per packet), so that in a ping-pong the ACK of a ping and the pong that answers it leave
 * on one socket; with per-packet spraying ACKs keep the responder's own sequence [MP-022].
 */
class AckPathTest {
    private static final int ROUNDS = 40;

    /** One packet B sent: opcode and Path ID. */
    private record Sent(int opcode, int pathId) {
    }

    /** Runs a SEND ping-pong of {@link #ROUNDS} rounds; returns what B sent, in order. */
    private static List<Sent> pingPong(final int burst) {
        final TwoNodeFixture f = new TwoNodeFixture(6901 + burst, LinkProfile.perfect(),
            new EndpointConfig().pathBurstPackets(burst), QueuePairCapabilities.defaults(), 4096).connect(1024);
        final List<Sent> fromB = new ArrayList<>();
        f.wire.filter((from, to, buf, off, len, now) -> {
            if (from == f.b.node) {
                fromB.add(new Sent(BaseHeader.opcode(buf, off), BaseHeader.pathId(buf, off)));
            }
            return false;
        });
        for (int i = 0; i < ROUNDS; i++) {
            f.a.qp.postRecv(new RecvRequest(1).wrId(i).addSge(f.a.address(8192), 64, f.a.mr.lkey()));
            f.b.qp.postRecv(new RecvRequest(1).wrId(i).addSge(f.b.address(8192), 64, f.b.mr.lkey()));
        }
        for (int i = 0; i < ROUNDS; i++) {
            f.a.qp.postSend(new SendRequest(1).wrId(i).opcode(WrOpcode.SEND).sendFlags(SendFlags.SIGNALED)
                .addSge(f.a.address(0), 64, f.a.mr.lkey()));
            final int round = i + 1;
            assertThat(f.wire.runUntil(() -> {
                f.b.drain();
                return f.b.recvCompletions.size() >= round;
            }, 1_000_000_000L)).isTrue();
            f.b.qp.postSend(new SendRequest(1).wrId(i).opcode(WrOpcode.SEND).sendFlags(SendFlags.SIGNALED)
                .addSge(f.b.address(0), 64, f.b.mr.lkey()));
            assertThat(f.wire.runUntil(() -> {
                f.a.drain();
                return f.a.recvCompletions.size() >= round;
            }, 1_000_000_000L)).isTrue();
        }
        return fromB;
    }

    /** @return how many of B's ACKs left on the path of B's latest SEND before them (ACKs before B's first SEND not counted) */
    private static int[] followingAcks(final List<Sent> fromB) {
        int latestSendPath = -1;
        int acks = 0;
        int following = 0;
        for (final Sent s : fromB) {
            if (s.opcode() == Opcode.SEND.value()) {
                latestSendPath = s.pathId();
            } else if (s.opcode() == Opcode.ACK.value() && latestSendPath >= 0) {
                acks++;
                if (s.pathId() == latestSendPath) {
                    following++;
                }
            }
        }
        return new int[] {acks, following};
    }

    @Test
    void withBurstSprayingEveryAckOfAPingTakesThePongsPath() {
        final int[] counts = followingAcks(pingPong(16));
        assertThat(counts[0]).as("ACKs of pings after the first pong").isGreaterThanOrEqualTo(ROUNDS - 1);
        assertThat(counts[1]).as("of them on the path of B's latest pong").isEqualTo(counts[0]);
    }

    @Test
    void withPerPacketSprayingAcksKeepTheirOwnRotation() {
        final int[] counts = followingAcks(pingPong(1));
        assertThat(counts[0]).isGreaterThanOrEqualTo(ROUNDS - 1);
        // The responder's own rotation over 4 paths meets the pong's path about once in four.
        assertThat(counts[1]).isLessThan(counts[0] / 2);
    }
}
