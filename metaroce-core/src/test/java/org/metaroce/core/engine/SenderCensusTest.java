// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Random;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.metaroce.core.congestion.CongestionControlAlgorithm;
import org.metaroce.core.testwire.LinkProfile;
import org.metaroce.core.verbs.AccessFlags;
import org.metaroce.core.verbs.QpAttributes;
import org.metaroce.core.verbs.QpState;
import org.metaroce.core.verbs.SendFlags;
import org.metaroce.core.verbs.SendRequest;
import org.metaroce.core.verbs.WrOpcode;
import org.metaroce.core.wire.ConnectHeader;

/**
 * The endpoint's counts of the queue pairs sending to it, kept on events by {@link SenderCensus},
 * equal a scan of every queue pair (the definition of [CC-018]'s n and [CC-038]'s Sender Count)
 * after every step of a seeded random mix of traffic, state changes, destruction and work posted
 * on a receiver with hundreds of queue pairs.
 */
class SenderCensusTest {
    private static final int SENDERS = 40;
    /** Receiver QPs in RTS that no sender uses: with the senders' QPs, more than 255 waiting at first. */
    private static final int IDLE = 250;
    private static final int MTU = 4096;
    private static final int SLICE = 64 * 1024;
    private static final long[] WINDOWS = {0, 1_000, 4_000, 20_000, 200_000, Long.MAX_VALUE / 4};

    /** The n of [CC-018] by its definition: every queue pair scanned. */
    private static int scanActive(final Endpoint e, final long nowNs, final long windowNs) {
        int n = 0;
        for (int i = 0; i < e.queuePairCount(); i++) {
            final long last = e.queuePairAt(i).lastRequestNs();
            if (last != Long.MIN_VALUE && nowNs - last <= windowNs) {
                n++;
            }
        }
        return Math.max(1, n);
    }

    /** The Sender Count of [CC-038] by its definition: every queue pair scanned. */
    private static int scanReceiving(final Endpoint e, final long nowNs, final long windowNs) {
        int n = 0;
        for (int i = 0; i < e.queuePairCount(); i++) {
            final QueuePair qp = e.queuePairAt(i);
            final long last = qp.lastRequestNs();
            if ((last != Long.MIN_VALUE && nowNs - last <= windowNs) || qp.waitsForFirstRequest()) {
                n++;
            }
        }
        return Math.min(255, Math.max(1, n));
    }

    private static void bringUp(final QueuePair qp, final int destQpn, final int peerNode, final Random random) {
        qp.modify(QpState.INIT, new QpAttributes().port(1).accessFlags(AccessFlags.ALL));
        qp.modify(QpState.RTR, new QpAttributes().pathMtu(MTU).destQpn(destQpn).rqPsn(random.nextInt() & 0xFFFFFF)
            .maxDestRdAtomic(16).minRnrTimerNs(20_000).paths(IncastFixture.PATHS).remotePeer(peerNode)
            .capabilities(ConnectHeader.CAP_ECN | ConnectHeader.CAP_SENDER_COUNT));
        qp.modify(QpState.RTS, new QpAttributes().sqPsn(random.nextInt() & 0xFFFFFF).timeoutNs(1_000_000)
            .retryCount(7).rnrRetry(7).maxRdAtomic(16).ccAlgorithm(CongestionControlAlgorithm.DEFAULT));
    }

    private static int checkAll(final Endpoint e, final long nowNs, final String step) {
        int checks = 0;
        for (final long offset : new long[] {0, -3_000, 7_000}) {
            final long now = nowNs + offset;
            for (final long w : WINDOWS) {
                assertThat(e.activeRequestSenders(now, w)).as(step + " n, now " + now + " window " + w)
                    .isEqualTo(scanActive(e, now, w));
                assertThat(e.receivingSenders(now, w)).as(step + " Sender Count, now " + now + " window " + w)
                    .isEqualTo(scanReceiving(e, now, w));
                checks++;
            }
        }
        return checks;
    }

    @Test
    @DisplayName("[CC-018] [CC-038] the counts kept on events equal a scan of every queue pair, step by step, with 290 QPs")
    void countsKeptOnEventsEqualAScan() {
        final long seed = 16_038;
        System.out.println("SenderCensusTest seed=" + seed);
        final Random random = new Random(seed);
        final EndpointConfig config = new EndpointConfig().linkRateBitsPerSecond(100_000_000_000L);
        final IncastFixture f = new IncastFixture(seed, SENDERS, config,
            ConnectHeader.CAP_ECN | ConnectHeader.CAP_SENDER_COUNT, CongestionControlAlgorithm.DEFAULT, MTU, SLICE,
            LinkProfile.builder().delayNs(1_000).build());
        final Endpoint r = f.receiver;
        final org.metaroce.core.verbs.ProtectionDomain pd = f.receiverQps.get(0).pd();
        final org.metaroce.core.verbs.CompletionQueue cq = f.receiverQps.get(0).sendCq();
        for (int i = 0; i < IDLE; i++) {
            final QueuePair qp = r.createQueuePair(pd, cq, cq, QueuePairCapabilities.defaults());
            if (i % 10 == 0) {
                // Some never reach RTS: never counted.
                qp.modify(QpState.INIT, new QpAttributes().port(1).accessFlags(AccessFlags.ALL));
                continue;
            }
            final IncastFixture.Sender peer = f.senders.get(i % SENDERS);
            bringUp(qp, peer.qp.qpn(), peer.node, random);
        }
        assertThat(r.receivingSenders(0, 10_000)).isEqualTo(255);
        int checks = checkAll(r, f.wire.now(), "connected");
        int waitingSeen = 0;
        int activeSeen = 0;
        for (int step = 0; step < 400; step++) {
            final int action = random.nextInt(10);
            final int i = random.nextInt(SENDERS);
            final QueuePair rqp = r.queuePairAt(random.nextInt(r.queuePairCount()));
            final String what;
            try {
                switch (action) {
                    case 0, 1, 2 -> {
                        what = "sender " + i + " writes";
                        if (f.senders.get(i).qp.state() == QpState.RTS) {
                            f.postWrites(i, 1 + random.nextInt(3), 1 + random.nextInt(SLICE / 4));
                        }
                    }
                    case 3, 4 -> {
                        what = "run";
                        f.wire.runFor(random.nextInt(30_000));
                    }
                    case 5 -> {
                        what = "QP " + rqp.qpn() + " to ERR";
                        rqp.modify(QpState.ERR, new QpAttributes());
                    }
                    case 6 -> {
                        what = "QP " + rqp.qpn() + " RESET and back to RTS";
                        rqp.modify(QpState.RESET, new QpAttributes());
                        checks += checkAll(r, f.wire.now(), "step " + step + " reset");
                        final IncastFixture.Sender peer = f.senders.get(i);
                        bringUp(rqp, peer.qp.qpn(), peer.node, random);
                    }
                    case 7 -> {
                        what = "QP " + rqp.qpn() + " destroyed";
                        r.destroyQueuePair(rqp);
                    }
                    case 8 -> {
                        // Work posted before any packet: queued, nothing sent yet (checked before the run).
                        what = "QP " + rqp.qpn() + " posts a WRITE";
                        final IncastFixture.Sender peer = f.senders.get(i);
                        rqp.postSend(new SendRequest(1).wrId(step).opcode(WrOpcode.RDMA_WRITE)
                            .sendFlags(SendFlags.SIGNALED).addSge(f.receiverMr.address(), 64, f.receiverMr.lkey())
                            .remoteAddr(peer.mr.address()).rkey(peer.mr.rkey()));
                    }
                    default -> {
                        what = "QP " + rqp.qpn() + " to SQD and back";
                        rqp.modify(QpState.SQD, new QpAttributes());
                        checks += checkAll(r, f.wire.now(), "step " + step + " SQD");
                        rqp.modify(QpState.RTS, new QpAttributes());
                    }
                }
            } catch (final IllegalStateException | IllegalArgumentException refused) {
                // A move the QP's state does not allow (or a destroyed QP): nothing changed.
                continue;
            }
            checks += checkAll(r, f.wire.now(), "step " + step + " (" + what + ")");
            int waiting = 0;
            for (int q = 0; q < r.queuePairCount(); q++) {
                waiting += r.queuePairAt(q).waitsForFirstRequest() ? 1 : 0;
            }
            waitingSeen = Math.max(waitingSeen, waiting);
            activeSeen = Math.max(activeSeen, scanActive(r, f.wire.now(), 20_000));
        }
        System.out.println("checks " + checks + ", up to " + waitingSeen + " waiting and " + activeSeen
            + " active in 20 us, " + r.queuePairCount() + " QPs left");
        // The mix did what it is for: many waiting, several sending at once, some destroyed.
        assertThat(waitingSeen).isGreaterThan(255);
        assertThat(activeSeen).isGreaterThan(3);
        assertThat(r.queuePairCount()).isLessThan(SENDERS + IDLE);
    }
}
