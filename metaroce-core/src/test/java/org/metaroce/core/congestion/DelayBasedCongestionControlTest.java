// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.congestion;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** Reactions of the default algorithm of specification 8.5 [CC-010]..[CC-017]. */
class DelayBasedCongestionControlTest {
    private static final int PMTU = 4096;
    private static final long GBPS_100 = 100_000_000_000L;

    @Test
    void startsAtOneBdpOfTheInitialBaseRtt() {
        // [CC-010] one BDP at BASE_RTT_INIT; [CC-006] the initial window is within MAX_CWND (1.5 BDP).
        final DelayBasedCongestionControl cc = new DelayBasedCongestionControl(PMTU, GBPS_100, false);
        // 100 Gb/s x 10 us = 125,000 bytes.
        assertThat(cc.windowBytes()).isCloseTo(125_000, within(1.0));
        assertThat(cc.windowPackets()).isEqualTo(30);
        assertThat(cc.windowBytes()).as("initial window within MAX_CWND = 1.5 BDP").isLessThanOrEqualTo(1.5 * 125_000);
    }

    @Test
    void lowDelayGrowsTheWindowFastAndHighDelayShrinksIt() {
        // Without ECN, delay alone drives the window [CC-013, CC-004]: no CE mark is ever reported here.
        final DelayBasedCongestionControl cc = new DelayBasedCongestionControl(PMTU, GBPS_100, false);
        long now = 0;
        cc.onAck(now, 1, 10_000, false, 0); // baseRTT 10 us, q = 0
        final double before = cc.windowBytes();
        cc.onAck(now += 1_000, 4, 10_000, false, 0);
        assertThat(cc.windowBytes()).as("fast increase: FAST_AI x PMTU x A / cwnd at q = 0")
            .isCloseTo(before + DelayBasedCongestionControl.FAST_AI * PMTU * (4.0 * PMTU / before), within(1.0));
        // Two SRTT windows later only 30 us samples remain: queueing delay 20 us >= T (about 5.7 us
        // with flow scaling at 30 packets): decrease by max(1 - 0.8 x (20 - T)/20, 0.5) = 0.5.
        cc.onAck(now += 20_000, 0, 30_000, false, 0);
        cc.onAck(now += 20_000, 0, 30_000, false, 0);
        final double high = cc.windowBytes();
        cc.onAck(now += 1_000, 1, 30_000, false, 0);
        assertThat(cc.windowBytes()).isCloseTo(high * 0.5, within(1.0));
    }

    @Test
    @DisplayName("[CC-033] fast increase adds at most the bytes acknowledged: small and sub-packet windows at most double per RTT")
    void fastIncreaseAddsAtMostWhatTheAckAcknowledged() {
        // A quarter-packet window (CONGESTION_WINDOW) and an ACK of one packet at q = 0: the
        // formula alone adds FAST_AI x PMTU x 4 = 32 packets, the cap one packet.
        final DelayBasedCongestionControl sub = new DelayBasedCongestionControl(PMTU, GBPS_100, false, PMTU / 4.0, 0);
        sub.onAck(0, 1, 10_000, false, 0);
        assertThat(sub.windowBytes()).isCloseTo(PMTU / 4.0 + PMTU, within(1.0));
        // Two packets: the formula would add FAST_AI / 2 = 4 packets for one acknowledged.
        final DelayBasedCongestionControl two = new DelayBasedCongestionControl(PMTU, GBPS_100, false, 2.0 * PMTU, 0);
        two.onAck(0, 1, 10_000, false, 0);
        assertThat(two.windowBytes()).isCloseTo(3.0 * PMTU, within(1.0));
        // Thirty packets: FAST_AI x PMTU x A / cwnd is below A, the cap does not bind.
        final DelayBasedCongestionControl big = new DelayBasedCongestionControl(PMTU, GBPS_100, false, 30.0 * PMTU, 0);
        big.onAck(0, 1, 10_000, false, 0);
        assertThat(big.windowBytes()).isCloseTo(30.0 * PMTU + DelayBasedCongestionControl.FAST_AI * PMTU / 30.0,
            within(1.0));
    }

    @Test
    void decreasesAtMostOncePerSrtt() {
        final DelayBasedCongestionControl cc = new DelayBasedCongestionControl(PMTU, GBPS_100, false);
        cc.onAck(0, 1, 10_000, false, 0);
        cc.onAck(100_000, 1, 16_000, false, 0);
        final double afterFirst = cc.windowBytes();
        // Within SRTT of that decrease: no further reaction, up or down [CC-014].
        cc.onAck(101_000, 1, 40_000, false, 0);
        cc.onLoss(102_000, 0, false);
        assertThat(cc.windowBytes()).isEqualTo(afterFirst);
        cc.onLoss(200_000, 0, false);
        assertThat(cc.windowBytes()).isLessThan(afterFirst);
    }

    @Test
    void lossHalvesTrimTakesAQuarterTimeoutResetsToOnePacket() {
        // [CC-015] and, with no CE marks at all, the loss signals work [CC-004, CC-003].
        final DelayBasedCongestionControl cc = new DelayBasedCongestionControl(PMTU, GBPS_100, false);
        final double w = cc.windowBytes();
        cc.onLoss(1_000_000, 0, false);
        assertThat(cc.windowBytes()).isCloseTo(w * 0.5, within(1.0));
        cc.onLoss(2_000_000, 0, true);
        assertThat(cc.windowBytes()).isCloseTo(w * 0.5 * 0.75, within(1.0));
        cc.onRetransmitTimeout(3_000_000);
        assertThat(cc.windowBytes()).isEqualTo(PMTU);
        assertThat(cc.windowPackets()).isEqualTo(1);
    }

    @Test
    @DisplayName("[CC-015] [CC-003] an RTO expiry takes the window to one packet at most and never raises a paced window")
    void timeoutNeverRaisesASubPacketWindow() {
        // A window paced at a tenth of a packet per round trip (a fair share of a slow bottleneck):
        // the expiry leaves it there, where raising it to one packet multiplied the rate by ten.
        final DelayBasedCongestionControl paced = new DelayBasedCongestionControl(PMTU, GBPS_100, true, PMTU / 10.0, 0);
        final double before = paced.windowBytes();
        assertThat(before).isCloseTo(PMTU / 10.0, within(1.0));
        paced.onRetransmitTimeout(1_000_000);
        assertThat(paced.windowBytes()).isEqualTo(before);
        // Above one packet the expiry still takes it to one packet.
        final DelayBasedCongestionControl big = new DelayBasedCongestionControl(PMTU, GBPS_100, true);
        big.onRetransmitTimeout(1_000_000);
        assertThat(big.windowBytes()).isEqualTo(PMTU);
    }

    /** Sends PMTU packets at {@code t} while the pacing lets them go; @return how many went. */
    private static int burstAt(final DelayBasedCongestionControl cc, final long t) {
        int n = 0;
        while (cc.nextSendTimeNs(t) <= t && n < 10_000) {
            cc.onPacketSent(t, PMTU, 0);
            n++;
        }
        return n;
    }

    /** Sends {@code packets} PMTU packets, each at its slot or at {@code t}, whichever is later; @return the next slot. */
    private static long sendOnSchedule(final DelayBasedCongestionControl cc, final long t, final int packets) {
        long at = t;
        for (int i = 0; i < packets; i++) {
            at = Math.max(at, cc.nextSendTimeNs(at));
            cc.onPacketSent(at, PMTU, 0);
        }
        return cc.nextSendTimeNs(at);
    }

    @Test
    @DisplayName("[CC-041] a software endpoint on marks alone paces at its delivery rate from its first marked round trip, whatever its window, probes too; other endpoints do not")
    void softwareEndpointPacesAtItsDeliveryRate() {
        final DelayBasedCongestionControl soft = new DelayBasedCongestionControl(PMTU, GBPS_100, true).softwareEndpoint(true);
        final DelayBasedCongestionControl hard = new DelayBasedCongestionControl(PMTU, GBPS_100, true);
        // One packet acknowledged every 100 us, 20 us round trips: a delivery rate of PMTU per 100 us,
        // far below what a window of one BDP would send.
        long now = 1_000_000;
        for (int i = 0; i < 12; i++) {
            now += 100_000;
            soft.onAck(now, 1, 20_000, false, 0);
            hard.onAck(now, 1, 20_000, false, 0);
        }
        assertThat(soft.windowBytes()).isGreaterThan(PMTU);
        final double perNs = PMTU / 100_000.0;
        hard.onPacketSent(now, PMTU, 0);
        // Nothing marked yet: no rate, a window above one packet is not paced, probes neither.
        assertThat(burstAt(soft, now)).isEqualTo(10_000);
        assertThat(soft.probeNotBeforeNs()).isEqualTo(Long.MIN_VALUE);
        // A marked round trip: paced at the delivery rate times (1 - alpha / 4), probes too. The
        // first packets may catch up the schedule by one window at most; then one slot per packet.
        long t = now + 100_000;
        soft.onAck(t, 1, 20_000, true, 0);
        final int first = burstAt(soft, t);
        assertThat(first).isBetween(DelayBasedCongestionControl.PACING_CREDIT + 1,
            (int) (soft.windowBytes() / PMTU) + 2);
        t = soft.nextSendTimeNs(t);
        final long marked = sendOnSchedule(soft, t, 1) - t;
        assertThat(marked).isGreaterThanOrEqualTo((long) (PMTU / perNs / (1 - soft.markedFraction() / 4)) - 10)
            .isLessThanOrEqualTo((long) (PMTU / perNs / (1 - soft.markedFraction() / 2)));
        t += marked;
        assertThat(soft.probeNotBeforeNs()).isEqualTo(soft.nextSendTimeNs(t)).isEqualTo(t);
        // Unmarked ACKs raise the rate in time, never above PACING_GAIN x the delivery rate.
        for (int i = 0; i < 400; i++) {
            t += 100_000;
            soft.onAck(t, 1, 20_000, false, 0);
        }
        burstAt(soft, t);
        t = soft.nextSendTimeNs(t);
        final long grown = sendOnSchedule(soft, t, 1) - t;
        assertThat(grown).isLessThan(marked)
            .isGreaterThanOrEqualTo((long) (PMTU / (DelayBasedCongestionControl.PACING_GAIN * perNs)) - 10);
        t += grown;
        // A sender 10 slots late (its thread descheduled) catches up the 10 slots it missed, as its
        // window, far above 10 packets, allows; then it waits for the schedule again.
        assertThat(soft.windowBytes()).isGreaterThan(12 * PMTU);
        t += 10 * grown;
        assertThat(burstAt(soft, t)).isEqualTo(11);
        assertThat(soft.nextSendTimeNs(t)).isGreaterThan(t);
        // Hardware timestamps (the simulator): a window above one packet is not paced, probes never.
        assertThat(hard.nextSendTimeNs(now)).isEqualTo(now);
        assertThat(hard.probeNotBeforeNs()).isEqualTo(Long.MIN_VALUE);
    }

    @Test
    @DisplayName("[CC-035] with ECN, a loss no congestion signal confirms stops at LOSS_FLOOR; without ECN, with a mark, with delay or a trim it does not")
    void randomLossStopsAtTheLossFloorOnlyWithoutEvidence() {
        // 100 Gb/s x 10 us: BDP = 125,000 B, the initial window; LOSS_FLOOR = 0.5 BDP.
        final double bdp = 125_000;
        final double floor = DelayBasedCongestionControl.LOSS_FLOOR_BDPS * bdp;
        final DelayBasedCongestionControl random = new DelayBasedCongestionControl(PMTU, GBPS_100, true);
        final DelayBasedCongestionControl plain = new DelayBasedCongestionControl(PMTU, GBPS_100, false);
        final DelayBasedCongestionControl marked = new DelayBasedCongestionControl(PMTU, GBPS_100, true);
        final DelayBasedCongestionControl queued = new DelayBasedCongestionControl(PMTU, GBPS_100, true);
        final DelayBasedCongestionControl trimmed = new DelayBasedCongestionControl(PMTU, GBPS_100, true);
        final DelayBasedCongestionControl blind = new DelayBasedCongestionControl(PMTU, GBPS_100, true);
        for (final DelayBasedCongestionControl cc : new DelayBasedCongestionControl[] {random, plain, marked, queued,
            trimmed, blind}) {
            cc.onAck(0, 0, 10_000, false, 0);
        }
        long now = 0;
        for (int i = 0; i < 6; i++) {
            now += 1_000_000;
            // A fresh sample before each loss: base RTT (no queue) on every QP but two.
            random.onAck(now - 1_000, 0, 10_000, false, 0);
            plain.onAck(now - 1_000, 0, 10_000, false, 0);
            marked.onAck(now - 1_000, 0, 10_000, true, 0); // a CE mark within CE_MEMORY
            trimmed.onAck(now - 1_000, 0, 10_000, false, 0);
            // Path 1 of this QP shows a standing 60 us of queueing, far above T.
            queued.onAck(now - 2_000, 0, 10_000, false, 0);
            queued.onAck(now - 1_500, 0, 70_000, false, 1);
            queued.onAck(now - 1_000, 0, 70_000, false, 1);
            for (final DelayBasedCongestionControl cc : new DelayBasedCongestionControl[] {random, plain, marked, queued,
                blind}) {
                cc.onLoss(now, 0, false);
            }
            trimmed.onLoss(now, 0, true);
        }
        assertThat(random.windowBytes()).as("random loss, ECN, no mark, no queue: floor").isCloseTo(floor, within(1.0));
        assertThat(plain.windowBytes()).as("no ECN: loss is the signal [CC-015]").isLessThan(bdp / 32);
        assertThat(marked.windowBytes()).as("a mark within CE_MEMORY").isLessThan(bdp / 32);
        assertThat(queued.windowBytes()).as("a path queued above the target").isLessThan(bdp / 32);
        assertThat(trimmed.windowBytes()).as("a trim is congestion").isLessThan(floor * 0.75);
        assertThat(blind.windowBytes()).as("no fresh delay sample: assume congestion").isLessThan(bdp / 32);
        // A window already below the floor stays; the timeout still takes it to one packet [CC-003].
        random.onRetransmitTimeout(now += 1_000_000);
        assertThat(random.windowBytes()).isEqualTo(PMTU);
        random.onAck(now += 1_000_000, 0, 10_000, false, 0);
        random.onLoss(now += 1_000, 0, false);
        assertThat(random.windowBytes()).isEqualTo(PMTU);
    }

    @Test
    @DisplayName("[CC-035] with host delay H at or above the fabric target, delay is no evidence: only marks are")
    void withHostDelayOnlyMarksConfirmALoss() {
        final long rate = 10_000_000_000L;
        final DelayBasedCongestionControl host = hostDelayLearnt(rate);
        long now = 20_000_000;
        final double before = host.windowBytes();
        now += 1_000_000;
        host.onAck(now - 1_000, 0, 110_000, false, 0);
        host.onLoss(now, 0, false);
        System.out.println("before " + before + " B, after " + host.windowBytes() + " B, " + host);
        assertThat(host.windowBytes()).as("the standing 100 us is the hosts', not a queue")
            .isGreaterThan(before * 0.5 + 1);
    }

    @Test
    @DisplayName("[CC-036] a spurious timeout gives back the window its first expiry took, unless congestion is evident or the episode ended otherwise")
    void aSpuriousTimeoutRestoresTheWindowWithoutEvidence() {
        final long rate = 10_000_000_000L;
        // Software hosts: H learnt above the fabric target, so only marks confirm [CC-035].
        final DelayBasedCongestionControl host = hostDelayLearnt(rate);
        final DelayBasedCongestionControl marked = hostDelayLearnt(rate);
        final DelayBasedCongestionControl needed = hostDelayLearnt(rate);
        final DelayBasedCongestionControl fabric = new DelayBasedCongestionControl(PMTU, rate, true);
        fabric.onAck(0, 1, 10_000, false, 0);
        long now = 20_100_000;
        final double before = host.windowBytes();
        assertThat(before).isGreaterThan(2 * PMTU);
        marked.onAck(now - 1_000, 0, 110_000, true, 0);
        for (final DelayBasedCongestionControl cc : new DelayBasedCongestionControl[] {host, marked, needed, fabric}) {
            cc.onRetransmitTimeout(now);
            // The backoff's second expiry does not overwrite the window to restore.
            cc.onRetransmitTimeout(now + 67_000_000);
            assertThat(cc.windowBytes()).isEqualTo(PMTU);
        }
        now += 100_000_000;
        // needed: the retransmission was acknowledged first; the episode ended with progress.
        needed.onAck(now, 1, 0, false, 0);
        for (final DelayBasedCongestionControl cc : new DelayBasedCongestionControl[] {host, marked, needed, fabric}) {
            cc.onSpuriousTimeout(now);
        }
        System.out.println("before " + (long) before + " B; host " + host + "; marked " + marked + "; needed " + needed
            + "; fabric " + fabric);
        assertThat(host.windowBytes()).as("late, not lost, nothing marked: restored").isEqualTo(before);
        assertThat(host.undoneTimeouts()).isEqualTo(1);
        assertThat(marked.windowBytes()).as("a mark within CE_MEMORY: the reduction stands").isLessThan(2 * PMTU);
        assertThat(needed.windowBytes()).as("the episode ended with progress first").isLessThan(2 * PMTU);
        // H = 0 and no fresh delay sample after the pause: the delay measures the fabric, and
        // with nothing to go on the late packets are taken as queued [CC-035].
        assertThat(fabric.windowBytes()).as("fabric timestamps, no fresh sample").isLessThan(2 * PMTU);
        // A second proof for the same episode restores nothing.
        host.onLoss(now + 1_000_000, 0, false);
        final double afterLoss = host.windowBytes();
        host.onSpuriousTimeout(now + 2_000_000);
        assertThat(host.windowBytes()).isEqualTo(afterLoss);
    }

    @Test
    @DisplayName("[CC-037] on a software endpoint with ECN one mark costs one decrease of alpha/2, not a halving per SRTT for CE_MEMORY")
    void aSoftwareEndpointDecidesOnMarksAlone() {
        final long rate = 10_000_000_000L;
        final DelayBasedCongestionControl delay = new DelayBasedCongestionControl(PMTU, rate, true);
        final DelayBasedCongestionControl software = new DelayBasedCongestionControl(PMTU, rate, true)
            .softwareEndpoint(true);
        final DelayBasedCongestionControl noEcn = new DelayBasedCongestionControl(PMTU, rate, false)
            .softwareEndpoint(true);
        assertThat(noEcn.markedFraction()).as("without ECN nothing changes").isNaN();
        long now = 0;
        // Host delay: every sample 1 ms above a 10 us base, far above the target; 100 ACKs per SRTT.
        for (final DelayBasedCongestionControl cc : new DelayBasedCongestionControl[] {delay, software}) {
            cc.onAck(0, 1, 10_000, false, 0);
        }
        final double[] atMark = new double[2];
        final double[] afterMemory = new double[2];
        for (int i = 1; i <= 2_000; i++) {
            now = i * 10_000L;
            if (i == 1_000) {
                atMark[0] = delay.windowBytes();
                atMark[1] = software.windowBytes();
            }
            for (final DelayBasedCongestionControl cc : new DelayBasedCongestionControl[] {delay, software}) {
                // One mark, at 10 ms; every other ACK unmarked, for 20 SRTTs.
                cc.onAck(now, 1, 1_010_000, i == 1_000, 0);
            }
            if (i == 1_500) {
                // Five SRTTs after the mark: CE_MEMORY (4 SRTTs) is over.
                afterMemory[0] = delay.windowBytes();
                afterMemory[1] = software.windowBytes();
            }
        }
        System.out.printf("window at the mark / 5 SRTTs later: delay-decided %.0f / %.0f B, marks-only %.0f / %.0f B;"
            + " %s; %s%n", atMark[0], afterMemory[0], atMark[1], afterMemory[1], delay, software);
        assertThat(software.markedFraction()).isLessThan(1.0);
        // The delay quadrants take every SRTT of CE_MEMORY after the mark as a queue at a marking
        // switch (q >= T): four halvings or more, and the mark reset H, so MAX_CWND fell to
        // 1.5 x LINK_RATE x baseRTT [CC-031].
        assertThat(delay.decreases()).isGreaterThanOrEqualTo(4);
        assertThat(software.decreases()).isEqualTo(1);
        assertThat(afterMemory[0]).isLessThan(atMark[0] / 2);
        // Marks alone: one decrease of alpha/2 (alpha about 0.5 here, from 1 at the start, g = 1/16),
        // then the fair increase within CE_MEMORY.
        assertThat(afterMemory[1]).isGreaterThan(atMark[1] * 0.75);
        assertThat(software.unmarkedDelayNs()).as("H survives the mark on a software endpoint")
            .isGreaterThan(900_000);
        // Only a mark confirms a loss; the standing delay, far above baseRTT + T, does not [CC-035].
        final double before = software.windowBytes();
        software.onLoss(now + 2_000_000, 0, false);
        assertThat(software.windowBytes()).as("no mark for CE_MEMORY, delay is the hosts': the floor")
            .isGreaterThan(before * 0.5 + 1);
    }

    @Test
    @DisplayName("[CC-037] a software endpoint grows by FAST_AI packets per window of ACKs without a recent mark, by one with one")
    void aSoftwareEndpointGrowsFastOnlyWithoutARecentMark() {
        // 100 Gb/s: MAX_CWND (1.5 BDP at the initial 10 us baseRTT) is 45 packets, above the 32 given.
        final DelayBasedCongestionControl quiet = new DelayBasedCongestionControl(PMTU, GBPS_100, true, 32 * PMTU, 0)
            .softwareEndpoint(true);
        final DelayBasedCongestionControl marked = new DelayBasedCongestionControl(PMTU, GBPS_100, true, 32 * PMTU, 0)
            .softwareEndpoint(true);
        quiet.onAck(0, 1, 1_000_000, false, 0);
        marked.onAck(0, 1, 1_000_000, false, 0);
        // The mark closes no round trip yet (SRTT 1 ms), so it shrinks nothing; it is recent for CE_MEMORY.
        marked.onAck(1_000, 0, 0, true, 0);
        final double q0 = quiet.windowBytes();
        final double m0 = marked.windowBytes();
        // Half a window of ACKs, 16 packets of 32, no mark: no round trip closes.
        for (int i = 1; i <= 16; i++) {
            quiet.onAck(10_000L * i, 1, 0, false, 0);
            marked.onAck(10_000L * i, 1, 0, false, 0);
        }
        final double quietGain = (quiet.windowBytes() - q0) / PMTU;
        final double markedGain = (marked.windowBytes() - m0) / PMTU;
        System.out.printf("packets added over half a window of ACKs: no recent mark %.2f, recent mark %.2f%n",
            quietGain, markedGain);
        assertThat(quiet.windowBytes()).isLessThan(45 * PMTU);
        assertThat(quietGain).isCloseTo(DelayBasedCongestionControl.FAST_AI / 2, within(0.5));
        assertThat(markedGain).isCloseTo(0.5, within(0.1));
    }

    /** A QP whose unmarked delay, 100 us above a 10 us base for 20 ms, was learnt as host delay [CC-029]. */
    private static DelayBasedCongestionControl hostDelayLearnt(final long rate) {
        final DelayBasedCongestionControl cc = new DelayBasedCongestionControl(PMTU, rate, true);
        long now = 0;
        cc.onAck(now, 1, 10_000, false, 0);
        for (int i = 0; i < 200; i++) {
            now += 100_000;
            cc.onAck(now, 1, 110_000, false, 0);
        }
        assertThat(cc.unmarkedDelayNs()).isGreaterThan(cc.targetQueueingDelayNs());
        return cc;
    }

    @Test
    @DisplayName("[CC-039] before the first packet the Sender Count divides the initial window (at least one PMTU); after it, it does not")
    void senderCountSizesOnlyTheFirstWindow() {
        final DelayBasedCongestionControl cc = new DelayBasedCongestionControl(PMTU, GBPS_100, true);
        // W0 = 100 Gb/s x 10 us = 125,000 bytes; four senders share it.
        cc.onSenderCount(0, 4);
        assertThat(cc.windowBytes()).isCloseTo(125_000 / 4.0, within(1.0));
        // A later, larger count before the first packet lowers it again, never below one packet.
        cc.onSenderCount(1_000, 64);
        assertThat(cc.windowBytes()).isCloseTo(PMTU, within(0.01));
        // Counts only lower the first window: an announcement reordered behind a larger one does not raise it.
        cc.onSenderCount(2_000, 2);
        assertThat(cc.windowBytes()).isCloseTo(PMTU, within(0.01));
        final DelayBasedCongestionControl sent = new DelayBasedCongestionControl(PMTU, GBPS_100, true);
        sent.onPacketSent(0, PMTU, 0);
        sent.onSenderCount(1_000, 32);
        assertThat(sent.windowBytes()).as("after the first packet the count does not set the window")
            .isCloseTo(125_000, within(1.0));
    }

    @Test
    @DisplayName("[CC-039] a QP whose first window the count sized takes the leavers' shares when the count falls; one that started uninformed does not")
    void fallingCountHandsTheLeaversSharesToAGroup() {
        // Told 32 before its first packet: W0 / 32 = 3,906 B, raised to one PMTU.
        final DelayBasedCongestionControl group = new DelayBasedCongestionControl(PMTU, GBPS_100, true);
        group.onSenderCount(0, 32);
        group.onPacketSent(1_000, PMTU, 0);
        assertThat(group.windowBytes()).isCloseTo(PMTU, within(0.01));
        group.onSenderCount(10_000, 32);
        assertThat(group.windowBytes()).as("an unchanged count changes nothing").isCloseTo(PMTU, within(0.01));
        // 24 of the 32 have left: the 8 that stay hold 32 / 8 of what each had.
        group.onSenderCount(20_000, 8);
        assertThat(group.windowBytes()).isCloseTo(4.0 * PMTU, within(0.01));
        // A rise does not shrink it (the delay signal does that), a fall from there scales again.
        group.onSenderCount(30_000, 16);
        assertThat(group.windowBytes()).isCloseTo(4.0 * PMTU, within(0.01));
        group.onSenderCount(40_000, 4);
        assertThat(group.windowBytes()).isCloseTo(16.0 * PMTU, within(0.01));
        // Never above MAX_CWND = 1.5 x BDP [CC-016].
        group.onSenderCount(50_000, 1);
        assertThat(group.windowBytes()).isCloseTo(1.5 * 125_000, within(1.0));

        // Sent before any count: its window is not a share of a group, and a fall leaves it.
        final DelayBasedCongestionControl uninformed = new DelayBasedCongestionControl(PMTU, GBPS_100, true);
        uninformed.onPacketSent(0, PMTU, 0);
        uninformed.onSenderCount(10_000, 4);
        uninformed.onSenderCount(20_000, 2);
        assertThat(uninformed.windowBytes()).isCloseTo(125_000, within(1.0));
        // A count of 1 before the first packet is no group either.
        final DelayBasedCongestionControl alone = new DelayBasedCongestionControl(PMTU, GBPS_100, true);
        alone.onSenderCount(0, 1);
        alone.onPacketSent(1_000, PMTU, 0);
        alone.onAck(20_000, 1, 10_000, true, 0);
        final double before = alone.windowBytes();
        alone.onSenderCount(30_000, 3);
        alone.onSenderCount(40_000, 1);
        assertThat(alone.windowBytes()).isCloseTo(before, within(0.01));
    }

    @Test
    @DisplayName("[CC-039] the Sender Count n divides the fast and the fair increase: n flows add what one would")
    void senderCountDividesTheIncreases() {
        final double[] fastGrowth = new double[2];
        final double[] fairGrowth = new double[2];
        final int[] counts = {1, 4};
        for (int i = 0; i < counts.length; i++) {
            // Fast increase (no ECN, q = 0 < T): FAST_AI x PMTU x A / cwnd per ACK.
            final DelayBasedCongestionControl fast = new DelayBasedCongestionControl(PMTU, GBPS_100, false);
            fast.onPacketSent(0, PMTU, 0);
            fast.onSenderCount(0, counts[i]);
            fast.onAck(10_000, 1, 10_000, false, 0);
            final double before = fast.windowBytes();
            fast.onAck(11_000, 1, 10_000, false, 0);
            fastGrowth[i] = fast.windowBytes() - before;
            // Fair increase (ECN, q = 40 - 10 us >= T, no mark ever): AI x PMTU x A / cwnd per ACK.
            final DelayBasedCongestionControl fair = new DelayBasedCongestionControl(PMTU, GBPS_100, true)
                .baseRttMaxNs(10_000);
            fair.onPacketSent(0, PMTU, 0);
            fair.onSenderCount(0, counts[i]);
            fair.onAck(40_000, 1, 40_000, false, 0);
            final double beforeFair = fair.windowBytes();
            fair.onAck(41_000, 1, 40_000, false, 0);
            fairGrowth[i] = fair.windowBytes() - beforeFair;
        }
        assertThat(fastGrowth[0]).isPositive();
        assertThat(fastGrowth[1]).isCloseTo(fastGrowth[0] / 4, within(fastGrowth[0] * 0.01));
        assertThat(fairGrowth[0]).isPositive();
        assertThat(fairGrowth[1]).isCloseTo(fairGrowth[0] / 4, within(fairGrowth[0] * 0.01));
    }

    @Test
    void windowIsClampedAndPacedBelowOnePacket() {
        // [CC-006, CC-016] the window stays within [MIN_CWND, MAX_CWND]; [CC-002] pacing below one packet.
        final DelayBasedCongestionControl cc = new DelayBasedCongestionControl(PMTU, GBPS_100, false);
        cc.onAck(0, 1, 10_000, false, 0);
        for (int i = 0; i < 1000; i++) {
            cc.onAck(1_000 + i, 64, 10_000, false, 0);
        }
        assertThat(cc.windowBytes()).as("MAX_CWND = 1.5 BDP").isCloseTo(1.5 * 125_000, within(1.0));
        long now = 10_000_000;
        for (int i = 0; i < 40; i++) {
            cc.onAck(now += 1_000_000, 1, 200_000, false, 0);
        }
        assertThat(cc.windowBytes()).as("MIN_CWND = PMTU / 100").isCloseTo(PMTU / 100.0, within(0.01));
        assertThat(cc.windowPackets()).isEqualTo(1);
        cc.onPacketSent(now, PMTU, 0);
        assertThat(cc.nextSendTimeNs(now)).as("paced below one packet").isGreaterThan(now);
    }

    @Test
    void oneCongestedPathDoesNotCollapseTheWindow() {
        // [CC-011] the delay signal is the median over the paths with fresh samples, not the worst path.
        final DelayBasedCongestionControl cc = new DelayBasedCongestionControl(PMTU, GBPS_100, false);
        long now = 0;
        for (int p = 0; p < 4; p++) {
            cc.onAck(now += 100, 1, 10_000, false, p);
        }
        final double before = cc.windowBytes();
        // Path 3 shows 200 us of queueing; the median of the four latest samples stays low.
        cc.onAck(now += 100, 1, 210_000, false, 3);
        assertThat(cc.windowBytes()).isGreaterThan(before);
    }

    @Test
    void withEcnLowDelayMarksHoldAndHighDelayWithoutMarksIncreasesFairly() {
        final DelayBasedCongestionControl cc = new DelayBasedCongestionControl(PMTU, GBPS_100, true);
        cc.onAck(0, 1, 10_000, false, 0);
        final double w = cc.windowBytes();
        cc.onAck(1_000, 4, 10_000, true, 0);
        assertThat(cc.windowBytes()).as("hold").isEqualTo(w);
        // Two windows later the standing delay is 30 us (q = 20 us >= T), without marks.
        cc.onAck(30_000, 0, 30_000, false, 0);
        cc.onAck(60_000, 4, 30_000, false, 0);
        assertThat(cc.windowBytes()).as("fair increase").isCloseTo(w + PMTU * 4.0 * PMTU / w, within(1.0));
    }

    @Test
    @DisplayName("[CC-026] a delay spike within an RTT of a low sample is noise, a standing delay is a queue")
    void standingDelayFiltersSpikes() {
        final DelayBasedCongestionControl cc = new DelayBasedCongestionControl(PMTU, GBPS_100, false);
        long now = 0;
        cc.onAck(now, 1, 10_000, false, 0);
        final double w = cc.windowBytes();
        // Host scheduling noise: one sample 200 us late, 2 us after a clean one.
        cc.onAck(now += 2_000, 1, 210_000, false, 0);
        assertThat(cc.decreases()).isZero();
        assertThat(cc.windowBytes()).isGreaterThanOrEqualTo(w);
        // A queue: every sample for two windows is high.
        for (int i = 0; i < 40; i++) {
            cc.onAck(now += 10_000, 1, 60_000, false, 0);
        }
        assertThat(cc.decreases()).isPositive();
    }

    @Test
    @DisplayName("[CC-027] flow scaling: the target grows as the window shrinks, by up to FS_RANGE x the base")
    void flowScalingRaisesTheTargetOfSmallWindows() {
        final DelayBasedCongestionControl cc = new DelayBasedCongestionControl(PMTU, GBPS_100, false);
        final double base = cc.targetQueueingDelayNs();
        final double atBdp = cc.targetNs();
        cc.onRetransmitTimeout(0); // one packet
        final double atOne = cc.targetNs();
        assertThat(atOne).isGreaterThan(atBdp);
        for (int i = 0; i < 20; i++) {
            cc.onLoss(1_000_000L * (i + 1), 0, false);
        }
        assertThat(cc.windowBytes()).isEqualTo(PMTU / 100.0);
        assertThat(cc.targetNs()).isCloseTo(base * (1 + DelayBasedCongestionControl.FS_RANGE), within(1.0));
        assertThat(atBdp).isBetween(base, base * 1.2);
    }

    @Test
    @DisplayName("[CC-023] HOST_DELAY_ALLOWANCE adds to the target and to the BDP")
    void hostDelayAllowance() {
        final DelayBasedCongestionControl plain = new DelayBasedCongestionControl(PMTU, GBPS_100, false);
        final DelayBasedCongestionControl host = new DelayBasedCongestionControl(PMTU, GBPS_100, false, 0, 50_000);
        assertThat(host.targetNs() - plain.targetNs()).isCloseTo(50_000, within(1_000.0));
        // One BDP at baseRTT + allowance = 100 Gb/s x 60 us.
        assertThat(host.windowBytes()).isCloseTo(750_000, within(1.0));
    }

    @Test
    @DisplayName("[CC-014] [CC-013] after congestion clears the window recovers to the cap within a few RTTs")
    void recoversAfterCongestionClears() {
        final DelayBasedCongestionControl cc = new DelayBasedCongestionControl(PMTU, GBPS_100, false);
        long now = 0;
        cc.onAck(now, 1, 10_000, false, 0);
        for (int i = 0; i < 50; i++) {
            cc.onAck(now += 50_000, 1, 60_000, false, 0);
        }
        final double congested = cc.windowBytes();
        assertThat(congested).isLessThan(PMTU);
        // Congestion clears: RTT back to base; ACKs of one window each RTT.
        int rtts = 0;
        while (cc.windowBytes() < 1.5 * 125_000 - 1 && rtts < 200) {
            now += 10_000;
            cc.onAck(now, Math.max(1, cc.windowPackets()), 10_000, false, 0);
            rtts++;
        }
        System.out.println("recovered from " + (long) congested + " B to the cap in " + rtts + " RTTs");
        assertThat(cc.windowBytes()).isCloseTo(1.5 * 125_000, within(1.0));
        assertThat(rtts).isLessThan(100);
    }

    /** Two flows on one bottleneck converge to fair shares (a fluid model of a FIFO queue). */
    @Test
    void twoFlowsConvergeToFairShares() {
        final long rate = 25_000_000_000L;
        final double bytesPerNs = rate / 8e9;
        final long propagation = 10_000;
        final DelayBasedCongestionControl a = new DelayBasedCongestionControl(PMTU, rate, false);
        final DelayBasedCongestionControl b = new DelayBasedCongestionControl(PMTU, rate, false);
        // b starts later with a tiny window so the two begin far apart.
        b.onRetransmitTimeout(0);
        long now = 0;
        for (int round = 0; round < 2000; round++) {
            final double inFlight = a.windowBytes() + b.windowBytes();
            final double bdp = bytesPerNs * propagation;
            final long queueNs = (long) (Math.max(0, inFlight - bdp) / bytesPerNs);
            final long rtt = propagation + queueNs;
            now += rtt;
            final int pa = Math.max(1, (int) (a.windowBytes() / PMTU));
            final int pb = Math.max(1, (int) (b.windowBytes() / PMTU));
            a.onAck(now, pa, rtt, false, 0);
            b.onAck(now, pb, rtt, false, 0);
        }
        final double ratio = a.windowBytes() / b.windowBytes();
        System.out.printf("fair share: a=%.0f B b=%.0f B ratio=%.3f%n", a.windowBytes(), b.windowBytes(), ratio);
        assertThat(ratio).isBetween(0.8, 1.25);
    }

    @Test
    @DisplayName("[CC-029] with ECN, delay the window cannot explain and no switch marked raises MAX_CWND; marks and no-ECN do not")
    void unmarkedDelayWidensTheCapOnlyWithEcn() {
        final long rate = 10_000_000_000L; // BDP at 10 us = 12,500 B, cap 18,750 B
        final DelayBasedCongestionControl ecn = new DelayBasedCongestionControl(PMTU, rate, true);
        final DelayBasedCongestionControl plain = new DelayBasedCongestionControl(PMTU, rate, false);
        final DelayBasedCongestionControl marked = new DelayBasedCongestionControl(PMTU, rate, true);
        long now = 0;
        for (final DelayBasedCongestionControl cc : new DelayBasedCongestionControl[] {ecn, plain, marked}) {
            cc.onAck(now, 1, 10_000, false, 0);
        }
        // 100 us of delay for many round trips: far more than a 3-packet window can queue.
        for (int i = 0; i < 200; i++) {
            now += 100_000;
            ecn.onAck(now, 1, 110_000, false, 0);
            plain.onAck(now, 1, 110_000, false, 0);
            marked.onAck(now, 1, 110_000, true, 0);
        }
        assertThat(ecn.unmarkedDelayNs()).isCloseTo(100_000, within(1_000L));
        // The window grows (fair increase, no decrease) past the old cap of 1.5 x 12,500 B, up to
        // the cap that follows the RTT the hosts impose: 1.5 x 10 Gb/s x 110 us.
        assertThat(ecn.windowBytes()).isGreaterThan(4 * 18_750.0).isLessThanOrEqualTo(1.5 * 137_500 + 1);
        assertThat(ecn.decreases()).isZero();
        assertThat(plain.unmarkedDelayNs()).isZero();
        assertThat(plain.windowBytes()).isLessThan(PMTU);
        assertThat(marked.unmarkedDelayNs()).isZero();
        assertThat(marked.windowBytes()).isLessThan(PMTU);
    }

    @Test
    @DisplayName("[CC-031] unmarked delay below the target, or before CE_MEMORY of unmarked ACKs, is not host delay; a mark clears the estimate")
    void unmarkedDelayIsHostDelayOnlyWhenItPersistsAboveTheTarget() {
        final long rate = 10_000_000_000L; // BDP at 10 us = 12,500 B; T = 5 us + flow scaling
        // An incast's first round trips: the queue builds behind many small windows before RED
        // marks it, so delay below the target, unmarked, must not widen the cap.
        final DelayBasedCongestionControl early = new DelayBasedCongestionControl(PMTU, rate, true);
        long now = 0;
        early.onAck(now, 1, 10_000, false, 0);
        for (int i = 0; i < 200; i++) {
            now += 1_000;
            early.onAck(now, 1, 10_000 + (long) (0.9 * early.targetNs()), false, 0);
        }
        assertThat(early.unmarkedDelayNs()).isZero();

        // Delay far above the target: nothing is learnt during the first CE_MEMORY = 4 SRTT.
        final DelayBasedCongestionControl host = new DelayBasedCongestionControl(PMTU, rate, true);
        now = 0;
        host.onAck(now, 1, 10_000, false, 0);
        now += 20_000;
        host.onAck(now, 1, 110_000, false, 0);
        assertThat(host.unmarkedDelayNs()).as("within CE_MEMORY of the first sample").isZero();
        for (int i = 0; i < 200; i++) {
            now += 100_000;
            host.onAck(now, 1, 110_000, false, 0);
        }
        final long learnt = host.unmarkedDelayNs();
        assertThat(learnt).isGreaterThan(90_000);
        // One mark: the delay is a switch's queue after all; the estimate restarts from zero and
        // stays there for CE_MEMORY.
        now += 100_000;
        host.onAck(now, 1, 110_000, true, 0);
        assertThat(host.unmarkedDelayNs()).isZero();
        for (int i = 0; i < 3; i++) {
            now += 100_000;
            host.onAck(now, 1, 110_000, false, 0);
        }
        assertThat(host.unmarkedDelayNs()).isZero();
        for (int i = 0; i < 200; i++) {
            now += 100_000;
            host.onAck(now, 1, 110_000, false, 0);
        }
        assertThat(host.unmarkedDelayNs()).isGreaterThan(90_000);
    }

    @Test
    @DisplayName("[CC-005] an application-limited sender (nothing left to send, under half the window in flight for an SRTT) does not grow its window")
    void applicationLimitedSenderDoesNotGrow() {
        final DelayBasedCongestionControl limited = new DelayBasedCongestionControl(PMTU, GBPS_100, true);
        final DelayBasedCongestionControl busy = new DelayBasedCongestionControl(PMTU, GBPS_100, true);
        final DelayBasedCongestionControl brief = new DelayBasedCongestionControl(PMTU, GBPS_100, true);
        long now = 0;
        for (final DelayBasedCongestionControl cc : new DelayBasedCongestionControl[] {limited, busy, brief}) {
            cc.onAck(now, 1, 10_000, false, 0);
        }
        final double start = limited.windowBytes();
        // One packet in flight of a window of several, and nothing queued: application-limited.
        limited.onSendOpportunity(now, 1, false);
        // The same packet in flight, but work is waiting (window, credit or pacing holds it back).
        busy.onSendOpportunity(now, 1, true);
        double afterOneSrtt = 0;
        for (int i = 0; i < 50; i++) {
            now += 2_000;
            // q = 0: fast increase unless application-limited for an SRTT (10 us here).
            limited.onAck(now, 1, 10_000, false, 0);
            limited.onSendOpportunity(now, 1, false);
            busy.onAck(now, 1, 10_000, false, 0);
            busy.onSendOpportunity(now, 1, true);
            if (now == 10_000) {
                afterOneSrtt = limited.windowBytes();
            }
        }
        assertThat(afterOneSrtt).isLessThan(start + 2 * PMTU);
        assertThat(limited.windowBytes()).isEqualTo(afterOneSrtt);
        assertThat(busy.windowBytes()).isGreaterThan(start + 10 * PMTU);
        // Application-limited for less than an SRTT: growth goes on (a gap between messages is not a limit).
        now = 0;
        brief.onSendOpportunity(now, 0, false);
        brief.onAck(now + 5_000, 1, 10_000, false, 0);
        assertThat(brief.windowBytes()).isGreaterThan(start);
        // Half the window or more in flight is not application-limited, whatever is queued.
        final DelayBasedCongestionControl full = new DelayBasedCongestionControl(PMTU, GBPS_100, true);
        full.onAck(0, 1, 10_000, false, 0);
        final double fullStart = full.windowBytes();
        full.onSendOpportunity(0, (int) Math.ceil(fullStart / 2 / PMTU), false);
        full.onAck(50_000, 1, 10_000, false, 0);
        assertThat(full.windowBytes()).isGreaterThan(fullStart);
    }
    @Test
    void aHighPathIdGrowsThePerPathRecordAndCounts() {
        // The per-path record starts small and grows on a higher Path ID; samples there count as
        // on any path: a queue of 20 us seen on path 200 alone shrinks the window [CC-011].
        final DelayBasedCongestionControl cc = new DelayBasedCongestionControl(PMTU, GBPS_100, false);
        long now = 0;
        cc.onAck(now, 1, 10_000, false, 200);
        assertThat(cc.baseRttNs()).isEqualTo(10_000);
        cc.onAck(now += 20_000, 0, 30_000, false, 200);
        cc.onAck(now += 20_000, 0, 30_000, false, 200);
        final double high = cc.windowBytes();
        cc.onAck(now += 1_000, 1, 30_000, false, 200);
        assertThat(cc.windowBytes()).isCloseTo(high * 0.5, within(1.0));
        cc.onAck(now += 1_000, 1, 30_000, false, 255);
        assertThat(cc.decreases()).isEqualTo(1);
    }
}
