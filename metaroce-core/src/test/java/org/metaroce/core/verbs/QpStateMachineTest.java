// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.verbs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class QpStateMachineTest {
    // Rows: from; columns: to; order RESET INIT RTR RTS SQD SQE ERR. 1 = legal.
    private static final String[] EXPECTED = {
        /* RESET */ "1 1 0 0 0 0 1",
        /* INIT  */ "1 1 1 0 0 0 1",
        /* RTR   */ "1 0 0 1 0 0 1",
        /* RTS   */ "1 0 0 1 1 0 1",
        /* SQD   */ "1 0 0 1 1 0 1",
        /* SQE   */ "1 0 0 1 0 0 1",
        /* ERR   */ "1 0 0 0 0 0 1",
    };

    @Test
    void legalityMatchesTheExpectedMatrixExhaustively() {
        // [QP-004] exactly the moves of table 4.4 are legal.
        final QpState[] states = QpState.values();
        assertThat(EXPECTED).hasSize(states.length);
        for (final QpState from : states) {
            final String[] row = EXPECTED[from.ordinal()].split(" ");
            for (final QpState to : states) {
                final boolean expected = row[to.ordinal()].equals("1");
                assertThat(QpStateMachine.isLegal(from, to)).as("%s -> %s", from, to).isEqualTo(expected);
                assertThat(QpStateMachine.describeIllegal(from, to) == null).as("describe %s -> %s", from, to)
                    .isEqualTo(expected);
            }
        }
    }

    @Test
    void describesAnIllegalMoveWithTheAllowedTargets() {
        // [QP-004] the error text names both states and the legal targets.
        assertThat(QpStateMachine.describeIllegal(QpState.RTR, QpState.SQD))
            .isEqualTo("illegal QP state transition RTR -> SQD: RTR may only move to RTS, RESET or ERR");
        assertThat(QpStateMachine.describeIllegal(QpState.RESET, QpState.RTS))
            .isEqualTo("illegal QP state transition RESET -> RTS: RESET may only move to INIT, RESET or ERR");
        assertThat(QpStateMachine.describeIllegal(QpState.ERR, QpState.RTS))
            .isEqualTo("illegal QP state transition ERR -> RTS: ERR may only move to RESET or ERR");
        assertThat(QpStateMachine.describeIllegal(QpState.RTS, QpState.INIT))
            .isEqualTo("illegal QP state transition RTS -> INIT: RTS may only move to RTS, SQD, RESET or ERR");
        assertThat(QpStateMachine.describeIllegal(QpState.INIT, QpState.RTR)).isNull();
    }

    @Test
    void legalTargetsListsForwardMovesThenResetAndErr() {
        assertThat(QpStateMachine.legalTargets(QpState.INIT)).isEqualTo("INIT, RTR, RESET or ERR");
        assertThat(QpStateMachine.legalTargets(QpState.SQD)).isEqualTo("RTS, SQD, RESET or ERR");
        assertThat(QpStateMachine.legalTargets(QpState.SQE)).isEqualTo("RTS, RESET or ERR");
    }

    @Test
    void requiredAttributesForTheSetupTransitions() {
        assertThat(QpStateMachine.requiredAttributes(QpState.RESET, QpState.INIT))
            .isEqualTo(QpAttributeMask.PORT | QpAttributeMask.ACCESS_FLAGS);
        assertThat(QpStateMachine.requiredAttributes(QpState.INIT, QpState.RTR)).isEqualTo(
            QpAttributeMask.PATH_MTU | QpAttributeMask.DEST_QPN | QpAttributeMask.RQ_PSN
                | QpAttributeMask.MAX_DEST_RD_ATOMIC | QpAttributeMask.MIN_RNR_TIMER | QpAttributeMask.PATHS
                | QpAttributeMask.REMOTE_PEER);
        assertThat(QpStateMachine.requiredAttributes(QpState.RTR, QpState.RTS)).isEqualTo(
            QpAttributeMask.SQ_PSN | QpAttributeMask.TIMEOUT | QpAttributeMask.RETRY_CNT
                | QpAttributeMask.RNR_RETRY | QpAttributeMask.MAX_QP_RD_ATOMIC);
    }

    @Test
    void otherLegalTransitionsNeedNothing() {
        for (final QpState from : QpState.values()) {
            for (final QpState to : QpState.values()) {
                final boolean setup = (from == QpState.RESET && to == QpState.INIT)
                    || (from == QpState.INIT && to == QpState.RTR)
                    || (from == QpState.RTR && to == QpState.RTS);
                if (QpStateMachine.isLegal(from, to) && !setup) {
                    assertThat(QpStateMachine.requiredAttributes(from, to)).as("%s -> %s", from, to).isZero();
                }
            }
        }
    }

    @Test
    void requiredAttributesOfAnIllegalMoveThrowsWithTheExplanation() {
        assertThatThrownBy(() -> QpStateMachine.requiredAttributes(QpState.RESET, QpState.RTR))
            .isInstanceOf(IllegalArgumentException.class)
            .hasMessage("illegal QP state transition RESET -> RTR: RESET may only move to INIT, RESET or ERR");
    }

    @Test
    void attributeMaskRendersNames() {
        assertThat(QpAttributeMask.toString(0)).isEqualTo("NONE");
        assertThat(QpAttributeMask.toString(QpAttributeMask.PATH_MTU | QpAttributeMask.DEST_QPN))
            .isEqualTo("PATH_MTU, DEST_QPN");
        assertThat(QpAttributeMask.toString(QpAttributeMask.CONGESTION_WINDOW | 1 << 30))
            .isEqualTo("CONGESTION_WINDOW, 0x40000000");
        assertThat(QpAttributeMask.toString(1 << 31)).isEqualTo("0x80000000");
        assertThat(QpAttributeMask.toString(QpAttributeMask.ALL).split(", ")).hasSize(22);
        assertThat(QpAttributeMask.toString(QpAttributeMask.RETRY_TIMEOUT)).isEqualTo("RETRY_TIMEOUT");
    }
}
