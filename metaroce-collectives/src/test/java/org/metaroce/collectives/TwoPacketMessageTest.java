// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.collectives;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.net.InetAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.List;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.metaroce.core.engine.EndpointCounter;
import org.metaroce.netty.DriverCounter;
import org.metaroce.netty.ThreadingMode;

/**
 * The second packet of a message: a rank's device sends the packets of one message to one peer as
 * one UDP GSO write from two packets on, since every rank receives with GRO (a GSO write arrives
 * whole). Sent as two datagrams, a two-packet message took the kernel's send and receive paths
 * twice, and a one-shot all-reduce just over one packet took 1.26-1.28x the time of one of exactly
 * one packet on 4 INVOKER ranks sharing 2 cores (docs/collectives.md, "The second packet of a
 * message").
 */
class TwoPacketMessageTest {
    private static final int RANKS = 4;
    private static final int OPERATIONS = 20;
    /** Two packets at path MTU 4096. */
    private static final int BYTES = 8192;

    @Test
    @DisplayName("Ranks' devices receive with GRO and send runs of two datagrams as one GSO write")
    void rankDevicesSendTwoDatagramRunsAsOneGsoWrite() {
        for (final ThreadingMode mode : ThreadingMode.values()) {
            assertThat(LocalCluster.defaultDeviceConfig(mode).gsoMinSegments()).as(mode.toString()).isEqualTo(2);
            assertThat(LocalCluster.defaultDeviceConfig(mode).gro()).as(mode.toString()).isTrue();
        }
        final var launched = Bootstrap.defaultDeviceConfig(InetAddress.getLoopbackAddress());
        assertThat(launched.gsoMinSegments()).isEqualTo(2);
        assertThat(launched.gro()).isTrue();
    }

    @Test
    @DisplayName("Every two-packet WRITE of a one-shot all-reduce leaves in a GSO write, and the result is exact")
    void everyTwoPacketWriteLeavesInAGsoWrite() throws Exception {
        final CommConfig cfg = new CommConfig().oneShotAllReduceBytes(BYTES);
        assertThat(cfg.pathMtu()).as("two packets per message").isEqualTo(BYTES / 2);
        try (LocalCluster cluster = LocalCluster.startInvoker(RANKS, cfg, null)) {
            assumeTrue(cluster.communicator(0).device().gsoActive(), "the transport has no UDP GSO here");
            final List<Integer> wrong = cluster.run(c -> {
                final int count = BYTES / Integer.BYTES;
                final ByteBuffer send = ByteBuffer.allocateDirect(BYTES).order(ByteOrder.nativeOrder());
                final ByteBuffer recv = ByteBuffer.allocateDirect(BYTES).order(ByteOrder.nativeOrder());
                int bad = 0;
                for (int op = 0; op < OPERATIONS; op++) {
                    for (int i = 0; i < count; i++) {
                        send.putInt(i * Integer.BYTES, (c.rank() + 1) * (op + i));
                    }
                    c.allReduce(send, recv, count, DataType.INT32, ReduceOp.SUM);
                    for (int i = 0; i < count; i++) {
                        // sum over ranks r of (r + 1) * (op + i)
                        if (recv.getInt(i * Integer.BYTES) != RANKS * (RANKS + 1) / 2 * (op + i)) {
                            bad++;
                        }
                    }
                }
                return bad;
            }, Duration.ofSeconds(60));
            assertThat(wrong).containsOnly(0);
            long gsoWrites = 0;
            long gsoSegments = 0;
            long alone = 0;
            for (int r = 0; r < RANKS; r++) {
                final var counters = cluster.communicator(r).device().counters();
                final var endpoint = cluster.communicator(r).device().endpoint().counters();
                System.out.println("rank " + r + ": " + counters + " " + endpoint);
                assertThat(counters.get(DriverCounter.SEND_ERRORS)).isZero();
                gsoWrites += counters.get(DriverCounter.GSO_WRITES);
                gsoSegments += counters.get(DriverCounter.GSO_SEGMENTS);
                // A timer's packets leave alone: a tail probe sends one new packet beyond the
                // window [REL-026], and a timeout's retransmission shrinks the window, so the
                // next message may go one packet per poll. On a loaded host (CI) a late ACK
                // sets one off now and then; each may cost one message its GSO write.
                alone += endpoint.get(EndpointCounter.TAIL_PROBES_NEW) + endpoint.get(EndpointCounter.TIMEOUTS)
                    + endpoint.get(EndpointCounter.RETRANSMITS_TAIL_PROBE);
            }
            // One message per rank and peer per operation. With runs of 3 and more only, the rank
            // that posts an operation's WRITEs first (nothing to acknowledge yet) sent each of its
            // three messages as two datagrams: at most 3/4 of them left in GSO writes.
            final long messages = (long) RANKS * (RANKS - 1) * OPERATIONS;
            assertThat(gsoWrites).as("GSO writes for " + messages + " two-packet messages, " + alone
                + " timer events").isGreaterThanOrEqualTo(messages - alone);
            assertThat(gsoSegments).isGreaterThanOrEqualTo(2 * (messages - alone));
        }
    }
}
