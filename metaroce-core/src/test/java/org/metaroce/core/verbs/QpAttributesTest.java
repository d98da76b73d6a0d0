// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.verbs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Set;

import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import org.junit.jupiter.api.Test;

class QpAttributesTest {
    private final QpAttributes attrs = new QpAttributes();

    @Test
    void freshAttributesHaveEmptyMaskAndRefuseReads() {
        assertThat(attrs.mask()).isZero();
        assertThatThrownBy(attrs::pathMtu)
            .isInstanceOf(IllegalStateException.class)
            .hasMessage("QP attribute PATH_MTU is not set");
        assertThatThrownBy(attrs::port).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(attrs::accessFlags).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(attrs::destQpn).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(attrs::rqPsn).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(attrs::sqPsn).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(attrs::retryCount).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(attrs::retryTimeoutNs).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(attrs::rnrRetry).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(attrs::timeoutNs).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(attrs::minRnrTimerNs).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(attrs::maxRdAtomic).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(attrs::maxDestRdAtomic).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(attrs::paths).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(attrs::pathCount).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> attrs.path(0)).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(attrs::sendQueueDepth).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(attrs::recvQueueDepth).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(attrs::maxSendSge).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(attrs::maxRecvSge).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(attrs::congestionWindowPackets).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(attrs::remotePeer).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(attrs::capabilities).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(attrs::ccAlgorithm).isInstanceOf(IllegalStateException.class);
        assertThat(attrs.toString()).isEqualTo("QpAttributes{}");
    }

    @Test
    void settersStoreValuesAndSetMaskBits() {
        fillAll(attrs);
        assertThat(attrs.mask()).isEqualTo(QpAttributeMask.ALL);
        assertThat(attrs.port()).isEqualTo(1);
        assertThat(attrs.remotePeer()).isEqualTo(42);
        assertThat(attrs.capabilities()).isEqualTo(0x7);
        assertThat(attrs.ccAlgorithm()).isEqualTo(org.metaroce.core.congestion.CongestionControlAlgorithm.DCQCN);
        assertThat(attrs.accessFlags()).isEqualTo(AccessFlags.REMOTE_WRITE | AccessFlags.REMOTE_READ);
        assertThat(attrs.pathMtu()).isEqualTo(4096);
        assertThat(attrs.destQpn()).isEqualTo(0xFFFFFF);
        assertThat(attrs.rqPsn()).isEqualTo(-1);
        assertThat(attrs.sqPsn()).isEqualTo(Integer.MIN_VALUE);
        assertThat(attrs.retryCount()).isEqualTo(7);
        assertThat(attrs.rnrRetry()).isEqualTo(QpAttributes.RNR_RETRY_INFINITE);
        assertThat(attrs.timeoutNs()).isEqualTo(100_000L);
        assertThat(attrs.minRnrTimerNs()).isEqualTo(10_000L);
        assertThat(attrs.maxRdAtomic()).isEqualTo(16);
        assertThat(attrs.maxDestRdAtomic()).isEqualTo(255);
        assertThat(attrs.paths()).containsExactly(49152, 49153);
        assertThat(attrs.pathCount()).isEqualTo(2);
        assertThat(attrs.path(1)).isEqualTo(49153);
        assertThat(attrs.sendQueueDepth()).isEqualTo(128);
        assertThat(attrs.recvQueueDepth()).isEqualTo(QpAttributes.MAX_QUEUE_DEPTH);
        assertThat(attrs.maxSendSge()).isEqualTo(4);
        assertThat(attrs.maxRecvSge()).isEqualTo(QpAttributes.MAX_SGE);
        assertThat(attrs.congestionWindowPackets()).isEqualTo(64);
        assertThat(attrs.isSet(QpAttributeMask.PATH_MTU | QpAttributeMask.PATHS)).isTrue();
        assertThat(attrs.toString()).contains("pathMtu=4096").contains("paths=[49152, 49153]")
            .contains("accessFlags=REMOTE_WRITE|REMOTE_READ").contains("rqPsn=4294967295");
    }

    @Test
    void isSetNeedsEveryBit() {
        attrs.pathMtu(1024);
        assertThat(attrs.isSet(QpAttributeMask.PATH_MTU)).isTrue();
        assertThat(attrs.isSet(QpAttributeMask.PATH_MTU | QpAttributeMask.DEST_QPN)).isFalse();
        assertThat(attrs.toString()).isEqualTo("QpAttributes{pathMtu=1024}");
    }

    @Test
    void clearForgetsEverything() {
        fillAll(attrs);
        attrs.clear();
        assertThat(attrs.mask()).isZero();
        assertThatThrownBy(attrs::paths).isInstanceOf(IllegalStateException.class);
    }

    @Test
    void pathsAreCopiedInAndOut() {
        final int[] ports = {1000, 2000};
        attrs.paths(ports);
        ports[0] = 9;
        assertThat(attrs.path(0)).isEqualTo(1000);
        attrs.paths()[1] = 9;
        assertThat(attrs.path(1)).isEqualTo(2000);
    }

    @Test
    void everySetterNamesTheAttributeAndRangeOnBadValues() {
        expectRejected(() -> attrs.port(0), "port must be in 1..255, was 0");
        expectRejected(() -> attrs.port(256), "port must be in 1..255, was 256");
        expectRejected(() -> attrs.accessFlags(0x10), "accessFlags: unknown access flag bits 0x10");
        expectRejected(() -> attrs.pathMtu(1500), "pathMtu must be one of 256, 512, 1024, 2048, 4096, 8192, was 1500");
        expectRejected(() -> attrs.pathMtu(128), "pathMtu must be one of");
        expectRejected(() -> attrs.pathMtu(16384), "pathMtu must be one of");
        expectRejected(() -> attrs.destQpn(0), "destQpn must be in 1..16777215, was 0");
        expectRejected(() -> attrs.destQpn(1 << 24), "destQpn must be in 1..16777215, was 16777216");
        expectRejected(() -> attrs.retryCount(-1), "retryCount must be in 0..7, was -1");
        expectRejected(() -> attrs.retryCount(8), "retryCount must be in 0..7, was 8");
        expectRejected(() -> attrs.rnrRetry(8), "rnrRetry must be in 0..7, was 8");
        expectRejected(() -> attrs.rnrRetry(-1), "rnrRetry must be in 0..7");
        expectRejected(() -> attrs.timeoutNs(0), "timeoutNs must be greater than 0, was 0");
        expectRejected(() -> attrs.minRnrTimerNs(-5), "minRnrTimerNs must be greater than 0, was -5");
        expectRejected(() -> attrs.maxRdAtomic(0), "maxRdAtomic must be in 1..255, was 0");
        expectRejected(() -> attrs.maxRdAtomic(256), "maxRdAtomic must be in 1..255, was 256");
        expectRejected(() -> attrs.maxDestRdAtomic(0), "maxDestRdAtomic must be in 1..255, was 0");
        expectRejected(() -> attrs.maxDestRdAtomic(256), "maxDestRdAtomic must be in 1..255");
        expectRejected(() -> attrs.paths(new int[0]), "paths must hold 1..255 entropy values, was 0");
        expectRejected(() -> attrs.paths(null), "paths must hold 1..255 entropy values, was null");
        expectRejected(() -> attrs.paths(new int[256]), "was 256");
        expectRejected(() -> attrs.paths(new int[] {5, 0}), "paths[1] must be a UDP source port in 1..65535, was 0");
        expectRejected(() -> attrs.paths(new int[] {65536}), "paths[0] must be a UDP source port in 1..65535, was 65536");
        expectRejected(() -> attrs.sendQueueDepth(0), "sendQueueDepth must be in 1..65536, was 0");
        expectRejected(() -> attrs.sendQueueDepth(65537), "sendQueueDepth must be in 1..65536");
        expectRejected(() -> attrs.recvQueueDepth(0), "recvQueueDepth must be in 1..65536, was 0");
        expectRejected(() -> attrs.recvQueueDepth(65537), "recvQueueDepth must be in 1..65536");
        expectRejected(() -> attrs.maxSendSge(0), "maxSendSge must be in 1..64, was 0");
        expectRejected(() -> attrs.maxSendSge(65), "maxSendSge must be in 1..64, was 65");
        expectRejected(() -> attrs.retryTimeoutNs(-1), "retryTimeoutNs must be >= 0 (0 = no time budget), got -1");
        expectRejected(() -> attrs.maxRecvSge(0), "maxRecvSge must be in 1..64, was 0");
        expectRejected(() -> attrs.maxRecvSge(65), "maxRecvSge must be in 1..64");
        expectRejected(() -> attrs.congestionWindowPackets(0), "congestionWindowPackets must be in 1..1048576, was 0");
        expectRejected(() -> attrs.congestionWindowPackets((1 << 20) + 1), "congestionWindowPackets must be in 1..1048576");
        assertThat(attrs.mask()).as("rejected values must not mark attributes as set").isZero();
    }

    @Test
    void boundaryValuesAreAccepted() {
        attrs.port(255).destQpn(1).retryCount(0).retryTimeoutNs(0).rnrRetry(0).timeoutNs(1).minRnrTimerNs(1)
            .maxRdAtomic(1).maxDestRdAtomic(1).paths(new int[] {1}).sendQueueDepth(1).recvQueueDepth(1)
            .maxSendSge(1).maxRecvSge(1).congestionWindowPackets(1).accessFlags(0).pathMtu(256).rqPsn(0).sqPsn(0)
            .remotePeer(0).capabilities(0).ccAlgorithm(org.metaroce.core.congestion.CongestionControlAlgorithm.FIXED);
        final int[] maxPaths = new int[QpAttributes.MAX_PATHS];
        java.util.Arrays.fill(maxPaths, 65535);
        assertThat(attrs.paths(maxPaths).pathCount()).isEqualTo(255);
        assertThat(attrs.mask()).isEqualTo(QpAttributeMask.ALL);
    }

    @Test
    void validateForNamesMissingAttributes() {
        assertThat(attrs.validateFor(QpState.RESET, QpState.INIT))
            .isEqualTo("QP state transition RESET -> INIT is missing required attributes: PORT, ACCESS_FLAGS");
        attrs.port(1).accessFlags(AccessFlags.REMOTE_WRITE);
        assertThat(attrs.validateFor(QpState.RESET, QpState.INIT)).isNull();
        final QpAttributes rtr = new QpAttributes().pathMtu(4096).destQpn(5).rqPsn(0);
        assertThat(rtr.validateFor(QpState.INIT, QpState.RTR))
            .isEqualTo("QP state transition INIT -> RTR is missing required attributes: MIN_RNR_TIMER, MAX_DEST_RD_ATOMIC, PATHS, REMOTE_PEER");
        rtr.minRnrTimerNs(1000).maxDestRdAtomic(4).paths(new int[] {50000}).remotePeer(7);
        assertThat(rtr.validateFor(QpState.INIT, QpState.RTR)).isNull();
        final QpAttributes rts = new QpAttributes();
        assertThat(rts.validateFor(QpState.RTR, QpState.RTS)).contains("SQ_PSN, RETRY_CNT, RNR_RETRY, TIMEOUT, MAX_QP_RD_ATOMIC");
        rts.sqPsn(1).retryCount(3).rnrRetry(7).timeoutNs(1_000_000).maxRdAtomic(4);
        assertThat(rts.validateFor(QpState.RTR, QpState.RTS)).isNull();
        assertThat(new QpAttributes().validateFor(QpState.RTS, QpState.ERR)).isNull();
        assertThat(new QpAttributes().validateFor(QpState.SQD, QpState.RTS)).isNull();
        assertThat(QpStateMachine.legalTargets(QpState.INIT)).isEqualTo("INIT, RTR, RESET or ERR");
        assertThat(QpStateMachine.legalTargets(QpState.SQD)).isEqualTo("RTS, SQD, RESET or ERR");
        assertThat(QpStateMachine.legalTargets(QpState.SQE)).isEqualTo("RTS, RESET or ERR");
    }

    /** [QP-005] an attribute the move neither requires nor allows is rejected, by name. */
    @Test
    void validateForRejectsAttributesTheMoveDoesNotTake() {
        final QpAttributes init = new QpAttributes().port(1).accessFlags(0).pathMtu(1024);
        assertThat(init.validateFor(QpState.RESET, QpState.INIT))
            .isEqualTo("QP state transition RESET -> INIT does not take attributes: PATH_MTU (it takes PORT, ACCESS_FLAGS)");
        assertThat(new QpAttributes().sqPsn(1).validateFor(QpState.RTS, QpState.ERR))
            .isEqualTo("QP state transition RTS -> ERR does not take attributes: SQ_PSN (it takes none)");
        // Optional attributes of table 4.4 are accepted.
        assertThat(new QpAttributes().timeoutNs(5).retryCount(1).validateFor(QpState.RTS, QpState.RTS)).isNull();
        assertThat(new QpAttributes().sqPsn(1).retryCount(3).rnrRetry(7).timeoutNs(1_000_000).maxRdAtomic(4)
            .congestionWindowPackets(8).validateFor(QpState.RTR, QpState.RTS)).isNull();
        assertThat(new QpAttributes().maxRdAtomic(2).validateFor(QpState.RTS, QpState.RTS)).contains("MAX_QP_RD_ATOMIC");
    }

    @Test
    void validateForRejectsIllegalTransitions() {
        fillAll(attrs);
        assertThat(attrs.validateFor(QpState.RTR, QpState.SQD))
            .isEqualTo("illegal QP state transition RTR -> SQD: RTR may only move to RTS, RESET or ERR");
    }

    @Property
    void pathMtuAcceptsExactlyTheSixSizes(@ForAll final int mtu) {
        final boolean valid = Set.of(256, 512, 1024, 2048, 4096, 8192).contains(mtu);
        boolean accepted;
        try {
            new QpAttributes().pathMtu(mtu);
            accepted = true;
        } catch (final IllegalArgumentException ex) {
            accepted = false;
        }
        assertThat(accepted).isEqualTo(valid);
    }

    @Test
    void pathMtuAcceptsEverySize() {
        for (final int mtu : new int[] {256, 512, 1024, 2048, 4096, 8192}) {
            assertThat(new QpAttributes().pathMtu(mtu).pathMtu()).isEqualTo(mtu);
        }
    }

    private static void expectRejected(final Runnable setter, final String message) {
        assertThatThrownBy(setter::run).isInstanceOf(IllegalArgumentException.class).hasMessageContaining(message);
    }

    private static void fillAll(final QpAttributes attrs) {
        attrs.port(1)
            .remotePeer(42)
            .accessFlags(AccessFlags.REMOTE_WRITE | AccessFlags.REMOTE_READ)
            .pathMtu(4096)
            .destQpn(0xFFFFFF)
            .rqPsn(-1)
            .sqPsn(Integer.MIN_VALUE)
            .retryCount(7)
            .retryTimeoutNs(15_000_000_000L)
            .rnrRetry(QpAttributes.RNR_RETRY_INFINITE)
            .timeoutNs(100_000L)
            .minRnrTimerNs(10_000L)
            .maxRdAtomic(16)
            .maxDestRdAtomic(255)
            .paths(new int[] {49152, 49153})
            .sendQueueDepth(128)
            .recvQueueDepth(QpAttributes.MAX_QUEUE_DEPTH)
            .maxSendSge(4)
            .maxRecvSge(QpAttributes.MAX_SGE)
            .congestionWindowPackets(64)
            .capabilities(0x7)
            .ccAlgorithm(org.metaroce.core.congestion.CongestionControlAlgorithm.DCQCN);
    }
}
