// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.metaroce.core.congestion.CongestionControlAlgorithm;
import org.metaroce.core.congestion.DcqcnCongestionControl;
import org.metaroce.core.congestion.DelayBasedCongestionControl;
import org.metaroce.core.congestion.FixedWindowCongestionControl;
import org.metaroce.core.congestion.ReceiverCreditCongestionControl;
import org.metaroce.core.testwire.LinkProfile;
import org.metaroce.core.verbs.QpAttributeMask;
import org.metaroce.core.verbs.QpAttributes;
import org.metaroce.core.verbs.QpState;
import org.metaroce.core.wire.ConnectHeader;

/** The CAPABILITIES and CC_ALGORITHM attributes of table 4.3 and the selection rules of 8.4. */
class CongestionControlSelectionTest {
    private static final int ALL_CAPS =
        ConnectHeader.CAP_ECN | ConnectHeader.CAP_GO_BACK_N | ConnectHeader.CAP_RECEIVER_CREDIT;

    @Test
    @DisplayName("[QP-003] CAPABILITIES takes a subset of 0x003F (v1.0.10: SENDER_COUNT, v1.0.15: ATTACHED_ACK, "
        + "v1.0.16: DEFERRED_ACK); CC_ALGORITHM must be named")
    void attributeValuesAreValidated() {
        assertThatThrownBy(() -> new QpAttributes().capabilities(0x40)).hasMessageContaining("0x003f")
            .hasMessageContaining("0x0040");
        assertThat(new QpAttributes().capabilities(ConnectHeader.CAP_ATTACHED_ACK).capabilities()).isEqualTo(0x10);
        assertThat(new QpAttributes().capabilities(ConnectHeader.CAP_DEFERRED_ACK).capabilities()).isEqualTo(0x20);
        assertThatThrownBy(() -> new QpAttributes().ccAlgorithm(null)).hasMessageContaining("ccAlgorithm");
        final QpAttributes a = new QpAttributes().capabilities(ALL_CAPS).ccAlgorithm(CongestionControlAlgorithm.DCQCN);
        assertThat(a.capabilities()).isEqualTo(7);
        assertThat(a.toString()).contains("capabilities=0x7", "ccAlgorithm=DCQCN");
        assertThat(QpAttributeMask.toString(QpAttributeMask.CAPABILITIES | QpAttributeMask.CC_ALGORITHM))
            .isEqualTo("CAPABILITIES, CC_ALGORITHM");
    }

    @Test
    @DisplayName("[QP-005] CAPABILITIES belongs to INIT->RTR and CC_ALGORITHM to RTR->RTS only (table 4.4)")
    void attributesBelongToTheirTransitions() {
        final QpAttributes caps = new QpAttributes().capabilities(1);
        final QpAttributes cc = new QpAttributes().ccAlgorithm(CongestionControlAlgorithm.FIXED);
        assertThat(caps.validateFor(QpState.RTS, QpState.RTS)).contains("does not take attributes: CAPABILITIES");
        assertThat(cc.validateFor(QpState.INIT, QpState.INIT)).contains("does not take attributes: CC_ALGORITHM");
        assertThat(cc.validateFor(QpState.RTS, QpState.RTS)).contains("CC_ALGORITHM");
        final TwoNodeFixture f = new TwoNodeFixture(71);
        f.a.qp.modify(QpState.INIT, new QpAttributes().port(1).accessFlags(0));
        assertThatThrownBy(() -> f.a.qp.modify(QpState.INIT, caps)).hasMessageContaining("CAPABILITIES");
        assertThat(f.a.qp.state()).isEqualTo(QpState.INIT);
    }

    @Test
    @DisplayName("[CC-008] each CC_ALGORITHM runs its algorithm when its capability is negotiated")
    void eachAlgorithmIsSelectable() {
        for (final CongestionControlAlgorithm cc : CongestionControlAlgorithm.values()) {
            final TwoNodeFixture f = new TwoNodeFixture(72).connect(1024, ALL_CAPS, cc);
            assertThat(f.a.qp.congestionControlAlgorithm()).isEqualTo(cc);
            assertThat(f.a.qp.congestionControl()).isInstanceOf(switch (cc) {
                case DEFAULT -> DelayBasedCongestionControl.class;
                case RECEIVER_CREDIT -> ReceiverCreditCongestionControl.class;
                case DCQCN -> DcqcnCongestionControl.class;
                case FIXED -> FixedWindowCongestionControl.class;
            });
            assertThat(f.a.endpoint.counters().get(EndpointCounter.CC_FALLBACKS)).isZero();
        }
    }

    @Test
    @DisplayName("[CC-008] DCQCN without ECN and RECEIVER_CREDIT without its capability run DEFAULT and say so")
    void missingCapabilityFallsBackToDefault() {
        for (final CongestionControlAlgorithm cc
            : new CongestionControlAlgorithm[] {CongestionControlAlgorithm.DCQCN, CongestionControlAlgorithm.RECEIVER_CREDIT}) {
            final TwoNodeFixture f = new TwoNodeFixture(73).connect(1024, ConnectHeader.CAP_GO_BACK_N, cc);
            assertThat(f.a.qp.requestedCongestionControlAlgorithm()).isEqualTo(cc);
            assertThat(f.a.qp.congestionControlAlgorithm()).isEqualTo(CongestionControlAlgorithm.DEFAULT);
            assertThat(f.a.qp.congestionControl()).isInstanceOf(DelayBasedCongestionControl.class);
            assertThat(f.a.endpoint.counters().get(EndpointCounter.CC_FALLBACKS)).isEqualTo(1);
            assertThat(f.a.endpoint.asyncEvents().peekType()).isEqualTo(AsyncEventType.CC_FALLBACK);
        }
    }

    @Test
    @DisplayName("[CC-008] without CC_ALGORITHM the endpoint's configured algorithm runs")
    void endpointDefaultApplies() {
        final TwoNodeFixture fixed = new TwoNodeFixture(74, LinkProfile.perfect(),
            new EndpointConfig().congestionControl(CongestionControlAlgorithm.FIXED),
            QueuePairCapabilities.defaults(), 4096).connect(1024, 0, null);
        assertThat(fixed.a.qp.congestionControlAlgorithm()).isEqualTo(CongestionControlAlgorithm.FIXED);
        assertThat(fixed.a.qp.congestionControl().windowPackets()).isEqualTo(1024);
        assertThat(fixed.a.qp.ccFallbackReason()).isNull();
        assertThat(fixed.a.endpoint.counters().get(EndpointCounter.CC_FALLBACKS)).isZero();
        final TwoNodeFixture delay = new TwoNodeFixture(75).connect(1024, ConnectHeader.CAP_ECN, null);
        assertThat(new EndpointConfig().congestionControl()).isEqualTo(CongestionControlAlgorithm.DEFAULT);
        assertThat(delay.a.qp.congestionControlAlgorithm()).isEqualTo(CongestionControlAlgorithm.DEFAULT);
        assertThat(delay.a.qp.congestionControl()).isInstanceOf(DelayBasedCongestionControl.class);
        assertThat(delay.a.endpoint.counters().get(EndpointCounter.CC_FALLBACKS)).isZero();
    }

    @Test
    @DisplayName("[CC-034] the endpoint default DEFAULT runs FIXED, and says why, where it would have only delay")
    void defaultWithoutEcnOrAllowanceFallsBackToFixed() {
        final TwoNodeFixture f = new TwoNodeFixture(77).connect(1024, ConnectHeader.CAP_GO_BACK_N, null);
        assertThat(f.a.qp.requestedCongestionControlAlgorithm()).isEqualTo(CongestionControlAlgorithm.DEFAULT);
        assertThat(f.a.qp.congestionControlAlgorithm()).isEqualTo(CongestionControlAlgorithm.FIXED);
        assertThat(f.a.qp.congestionControl()).isInstanceOf(FixedWindowCongestionControl.class);
        assertThat(f.a.qp.ccFallbackReason()).contains("ECN was not negotiated", "HOST_DELAY_ALLOWANCE", "[CC-034]");
        assertThat(f.a.endpoint.counters().get(EndpointCounter.CC_FALLBACKS)).isEqualTo(1);
        assertThat(f.a.endpoint.asyncEvents().peekType()).isEqualTo(AsyncEventType.CC_FALLBACK);
        assertThat(f.a.endpoint.asyncEvents().peekQpn()).isEqualTo(f.a.qp.qpn());

        // Each way out of the fall-back: a host-delay allowance, no fall-back configured, an explicit CC_ALGORITHM.
        for (final TwoNodeFixture g : new TwoNodeFixture[] {
            new TwoNodeFixture(78, LinkProfile.perfect(), new EndpointConfig().hostDelayAllowanceNs(50_000),
                QueuePairCapabilities.defaults(), 4096).connect(1024, 0, null),
            new TwoNodeFixture(79, LinkProfile.perfect(), new EndpointConfig().delayOnlyFallback(false),
                QueuePairCapabilities.defaults(), 4096).connect(1024, 0, null),
            new TwoNodeFixture(80).connect(1024, 0, CongestionControlAlgorithm.DEFAULT)}) {
            assertThat(g.a.qp.congestionControlAlgorithm()).isEqualTo(CongestionControlAlgorithm.DEFAULT);
            assertThat(g.a.qp.ccFallbackReason()).isNull();
            assertThat(g.a.endpoint.counters().get(EndpointCounter.CC_FALLBACKS)).isZero();
            assertThat(g.a.endpoint.asyncEvents().isEmpty()).isTrue();
        }
    }

    @Test
    @DisplayName("[CC-008] the reason of a capability fall-back names the missing capability")
    void capabilityFallbackNamesTheCapability() {
        final TwoNodeFixture f = new TwoNodeFixture(81).connect(1024, 0, CongestionControlAlgorithm.DCQCN);
        assertThat(f.a.qp.ccFallbackReason()).contains("DCQCN", "ECN capability", "[CC-008]");
    }

    @Test
    @DisplayName("[CC-007] a requester not running DCQCN ignores CNPs and counts them")
    void cnpsAreIgnoredByOtherAlgorithms() {
        // ECN negotiated and every A->B packet CE-marked: B sends CNPs; A runs FIXED and ignores them.
        final TwoNodeFixture f = new TwoNodeFixture(76).connect(1024, ConnectHeader.CAP_ECN,
            CongestionControlAlgorithm.FIXED);
        f.wire.link(f.a.node, f.b.node, LinkProfile.builder().ceMark(1.0).build());
        f.a.qp.postSend(new org.metaroce.core.verbs.SendRequest(1).wrId(1)
            .opcode(org.metaroce.core.verbs.WrOpcode.RDMA_WRITE).addSge(f.a.address(0), 8192, f.a.mr.lkey())
            .remoteAddr(f.b.address(0)).rkey(f.b.mr.rkey()));
        assertThat(f.runUntilQuiet()).isTrue();
        assertThat(f.b.endpoint.counters().get(EndpointCounter.CNPS_OUT)).isEqualTo(1);
        assertThat(f.a.endpoint.counters().get(EndpointCounter.CNP_IGNORED)).isEqualTo(1);
        assertThat(f.a.endpoint.counters().get(EndpointCounter.CNPS_IN)).isZero();
        // All 8 packets (8192 bytes, PMTU 1024) arrived marked, and A heard of the marks [REL-018].
        assertThat(f.b.endpoint.counters().get(EndpointCounter.CE_MARKED_IN)).isEqualTo(8);
        assertThat(f.a.endpoint.counters().get(EndpointCounter.ECN_ECHOES_IN)).isPositive();
    }

    /** Records the CE signal of every onAck; otherwise a fixed window of 64. */
    private static final class RecordingCc implements org.metaroce.core.congestion.CongestionControl {
        final java.util.List<Boolean> ce = new java.util.ArrayList<>();

        @Override
        public int windowPackets() {
            return 64;
        }

        @Override
        public long nextSendTimeNs(final long nowNs) {
            return nowNs;
        }

        @Override
        public void onPacketSent(final long nowNs, final int bytes, final int pathId) {
        }

        @Override
        public void onAck(final long nowNs, final int packets, final long rttNs, final boolean ecnEcho,
                          final int pathId) {
            ce.add(ecnEcho);
        }

        @Override
        public void onLoss(final long nowNs, final int pathId, final boolean trimmed) {
        }

        @Override
        public void onRetransmitTimeout(final long nowNs) {
        }
    }

    @Test
    @DisplayName("[CC-012] [REL-018] a CE mark on a packet that did not trigger the coalesced ACK reaches CC through CE Count")
    void ceCountIncreaseIsACongestionSignal() {
        final TwoNodeFixture f = new TwoNodeFixture(77).connectWithPsns(1024, 1000, 5000);
        final RecordingCc cc = new RecordingCc();
        f.a.qp.congestionControl(cc);
        // Only the second of four packets is marked; the fourth (LAST) triggers the one ACK.
        f.wire.ceMark(org.metaroce.core.testwire.PacketMatcher.opcodePsn(
            org.metaroce.core.wire.Opcode.WRITE.value(), 1001));
        f.a.qp.postSend(new org.metaroce.core.verbs.SendRequest(1).wrId(1)
            .opcode(org.metaroce.core.verbs.WrOpcode.RDMA_WRITE).addSge(f.a.address(0), 4096, f.a.mr.lkey())
            .remoteAddr(f.b.address(0)).rkey(f.b.mr.rkey()));
        assertThat(f.runUntilQuiet()).isTrue();
        assertThat(f.wire.stats().ceMarked()).isEqualTo(1);
        assertThat(f.a.endpoint.counters().get(EndpointCounter.ACKS_IN)).isEqualTo(1);
        assertThat(cc.ce).containsExactly(true);
    }
}
