// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.connection;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Set;
import org.junit.jupiter.api.Test;

class ConnectionStateMachineTest {
    /** Every legal move, with the requirement that makes it; every other move is illegal. */
    private static final Set<String> LEGAL = Set.of(
        "CONNECTING -> ESTABLISHED", // CM-007 acceptable reply
        "CONNECTING -> DISCONNECTING", // CM-009 unacceptable reply
        "CONNECTING -> TIMEWAIT", // CM-031 the server gave up and disconnects
        "CONNECTING -> CLOSED", // CM-008 rejected, CM-023 unreachable
        "REQUEST_PENDING -> ACCEPTED", // CM-012 accepted
        "REQUEST_PENDING -> CLOSED", // CM-012 rejected, CM-025 forgotten undecided
        "ACCEPTED -> ESTABLISHED", // CM-013 READY_TO_USE or COMM_EST
        "ACCEPTED -> DISCONNECTING", // CM-024 no READY_TO_USE, CM-033 QP failed
        "ACCEPTED -> TIMEWAIT", // CM-031 peer disconnects, CM-036 restart, CM-039 fatal NACK
        "ACCEPTED -> CLOSED", // CM-035 QPN reused
        "ESTABLISHED -> DISCONNECTING", // CM-031, CM-033
        "ESTABLISHED -> TIMEWAIT", // CM-030 peer dead, CM-031, CM-036, CM-039
        "ESTABLISHED -> CLOSED", // CM-035 QPN reused
        "DISCONNECTING -> TIMEWAIT", // CM-032 reply or timeout
        "DISCONNECTING -> CLOSED", // CM-035 QPN reused
        "TIMEWAIT -> CLOSED"); // CM-034 TIMEWAIT_EXIT

    @Test
    void everyLegalTransitionIsAcceptedAndEveryOtherRejected() {
        int legal = 0;
        for (final ConnectionState from : ConnectionState.values()) {
            for (final ConnectionState to : ConnectionState.values()) {
                final String move = from + " -> " + to;
                final boolean expected = LEGAL.contains(move);
                assertThat(ConnectionStateMachine.isLegal(from, to)).as(move).isEqualTo(expected);
                assertThat(ConnectionStateMachine.describeIllegal(from, to) == null).as(move).isEqualTo(expected);
                if (expected) {
                    legal++;
                    assertThat(ConnectionStateMachine.transition(from, to)).isEqualTo(to);
                } else {
                    assertThatThrownBy(() -> ConnectionStateMachine.transition(from, to)).as(move)
                        .isInstanceOf(IllegalStateException.class).hasMessageContaining(move);
                }
            }
        }
        assertThat(legal).isEqualTo(LEGAL.size());
    }

    @Test
    void connectionsStartWhereTheSpecificationCreatesThem() {
        // [CM-005] a client starts with its first CONNECT_REQUEST; [CM-012] a server with a verified one.
        assertThat(ConnectionStateMachine.initial(false)).isEqualTo(ConnectionState.CONNECTING);
        assertThat(ConnectionStateMachine.initial(true)).isEqualTo(ConnectionState.REQUEST_PENDING);
        assertThat(new Connection(false, 1, 2, null).state()).isEqualTo(ConnectionState.CONNECTING);
        assertThat(new Connection(true, 1, 2, null).state()).isEqualTo(ConnectionState.REQUEST_PENDING);
    }

    @Test
    void aConnectionWalksTheHandshakeAndTeardownAndRefusesToGoBack() {
        final Connection server = new Connection(true, 1, 2, null);
        server.moveTo(ConnectionState.ACCEPTED);
        server.moveTo(ConnectionState.ESTABLISHED);
        server.moveTo(ConnectionState.DISCONNECTING);
        server.moveTo(ConnectionState.TIMEWAIT);
        assertThatThrownBy(() -> server.moveTo(ConnectionState.ESTABLISHED))
            .isInstanceOf(IllegalStateException.class)
            .hasMessage("illegal connection state transition TIMEWAIT -> ESTABLISHED: TIMEWAIT may only move to CLOSED");
        assertThat(server.state()).isEqualTo(ConnectionState.TIMEWAIT);
        server.moveTo(ConnectionState.CLOSED);
        assertThat(server.state()).isEqualTo(ConnectionState.CLOSED);
    }

    @Test
    void describesAnIllegalMoveWithTheAllowedTargets() {
        assertThat(ConnectionStateMachine.describeIllegal(ConnectionState.REQUEST_PENDING, ConnectionState.ESTABLISHED))
            .isEqualTo("illegal connection state transition REQUEST_PENDING -> ESTABLISHED: REQUEST_PENDING may only"
                + " move to ACCEPTED or CLOSED");
        assertThat(ConnectionStateMachine.describeIllegal(ConnectionState.CLOSED, ConnectionState.CLOSED))
            .isEqualTo("illegal connection state transition CLOSED -> CLOSED: CLOSED is final");
        assertThat(ConnectionStateMachine.legalTargets(ConnectionState.CONNECTING))
            .isEqualTo("ESTABLISHED, DISCONNECTING, TIMEWAIT or CLOSED");
        assertThat(ConnectionStateMachine.describeIllegal(ConnectionState.ACCEPTED, ConnectionState.ESTABLISHED))
            .isNull();
    }
}
