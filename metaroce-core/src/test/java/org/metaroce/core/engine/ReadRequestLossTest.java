// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.engine;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.metaroce.core.testwire.PacketFilter;
import org.metaroce.core.testwire.PacketMatcher;
import org.metaroce.core.verbs.SendFlags;
import org.metaroce.core.verbs.SendRequest;
import org.metaroce.core.verbs.WcStatus;
import org.metaroce.core.verbs.WrOpcode;
import org.metaroce.core.wire.Opcode;

/**
 * A lost READ_REQUEST holds every later READ at the responder (answers go in PSN order,
 * [OPS-024]), so nothing arrives that could reveal the loss: the tail-loss probe must request the
 * oldest READ again, whole, instead of probing with the newest (held too) and leaving the rest to
 * the retransmission timer, which re-requested one segment per expiry [REL-026], [REL-028],
 * [REL-046]. At 20% loss both ways that made read_bw crawl at a few READs per second (issue 14).
 */
class ReadRequestLossTest {
    private static final int READS = 4;
    private static final int LENGTH = 16 * 1024;

    @Test
    void aLostReadRequestIsRequestedAgainWholeByTheProbeWithoutATimeout() {
        final TwoNodeFixture f = new TwoNodeFixture(8201).connect(1024);
        f.wire.filter(PacketFilter.dropNth(1, PacketMatcher.opcode(Opcode.READ_REQUEST.value())));
        for (int i = 0; i < READS * LENGTH; i++) {
            f.b.mr.buffer().putByte(i, (byte) (i * 11 + 1));
        }
        for (int i = 0; i < READS; i++) {
            f.a.qp.postSend(new SendRequest(1).wrId(i).opcode(WrOpcode.RDMA_READ).sendFlags(SendFlags.SIGNALED)
                .addSge(f.a.address((long) i * LENGTH), LENGTH, f.a.mr.lkey())
                .remoteAddr(f.b.address((long) i * LENGTH)).rkey(f.b.mr.rkey()));
        }
        assertThat(f.runUntilQuiet()).isTrue();
        final String story = "A " + f.a.endpoint.counters() + " B " + f.b.endpoint.counters();
        assertThat(f.a.sendCompletions).as(story).extracting(wc -> wc.status()).containsOnly(WcStatus.SUCCESS)
            .hasSize(READS);
        assertThat(f.a.endpoint.counters().get(EndpointCounter.TIMEOUTS)).as(story).isZero();
        assertThat(f.a.endpoint.counters().get(EndpointCounter.RETRANSMITS_TAIL_PROBE)).as(story).isOne();
        assertThat(f.a.endpoint.counters().retransmits()).as(story).isOne();
        // Every response went out once: the re-request covered exactly what had not been answered.
        assertThat(f.b.endpoint.counters().get(EndpointCounter.READ_RESPONSES_OUT)).as(story)
            .isEqualTo(READS * LENGTH / 1024);
        for (int i = 0; i < READS * LENGTH; i++) {
            if (f.a.mr.buffer().getByte(i) != f.b.mr.buffer().getByte(i)) {
                throw new AssertionError("byte " + i + " differs; " + story);
            }
        }
    }

    /**
     * The probe's re-request is lost too: a second probe, PTO × 2 later, requests the READ again,
     * long before the retransmission timer (its floor here is perftest's 67 ms) [REL-026].
     */
    @Test
    void aLostProbeIsFollowedByASecondProbeBeforeTheTimer() {
        final TwoNodeFixture f = new TwoNodeFixture(8202, org.metaroce.core.testwire.LinkProfile.perfect(),
            new EndpointConfig().minRtoNs(67_108_864L), QueuePairCapabilities.defaults(), 4096)
            .connect(1024);
        // An RTT sample first (probes need one), then the READ whose request and first probe are lost.
        f.a.qp.postSend(new SendRequest(1).wrId(99).opcode(WrOpcode.RDMA_WRITE).sendFlags(SendFlags.SIGNALED)
            .addSge(f.a.address(0), 64, f.a.mr.lkey()).remoteAddr(f.b.address(0)).rkey(f.b.mr.rkey()));
        assertThat(f.runUntilQuiet()).isTrue();
        f.wire.filter(PacketFilter.dropFirst(2, PacketMatcher.opcode(Opcode.READ_REQUEST.value())));
        final long start = f.wire.now();
        f.a.qp.postSend(new SendRequest(1).wrId(1).opcode(WrOpcode.RDMA_READ).sendFlags(SendFlags.SIGNALED)
            .addSge(f.a.address(LENGTH), LENGTH, f.a.mr.lkey()).remoteAddr(f.b.address(0)).rkey(f.b.mr.rkey()));
        assertThat(f.runUntilQuiet()).isTrue();
        final String story = "A " + f.a.endpoint.counters() + " B " + f.b.endpoint.counters();
        assertThat(f.a.sendCompletions).as(story).extracting(wc -> wc.status()).containsOnly(WcStatus.SUCCESS);
        assertThat(f.a.endpoint.counters().get(EndpointCounter.TIMEOUTS)).as(story).isZero();
        assertThat(f.a.endpoint.counters().get(EndpointCounter.RETRANSMITS_TAIL_PROBE)).as(story).isEqualTo(2);
        assertThat(f.wire.now() - start).as(story).isLessThan(1_000_000L);
    }
}
