package org.metaroce.core.connection;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class ConnectionStateMachineTest {
    // Rows: from; columns: to; order CONNECTING REQUEST_PENDING ACCEPTED ESTABLISHED DISCONNECTING
    // TIMEWAIT CLOSED. 1 = legal.
    private static final String[] EXPECTED = {
        /* CONNECTING      */ "0 0 0 1 1 1 1",
        /* REQUEST_PENDING */ "0 0 1 0 0 0 1",
        /* ACCEPTED        */ "0 0 0 1 1 1 1",
        /* ESTABLISHED     */ "0 0 0 0 1 1 1",
        /* DISCONNECTING   */ "0 0 0 0 0 1 1",
        /* TIMEWAIT        */ "0 0 0 0 0 0 1",
        /* CLOSED          */ "0 0 0 0 0 0 0",
    };

    @Test
    void everyLegalTransitionIsAcceptedAndEveryOtherRejected() {
        final ConnectionState[] states = ConnectionState.values();
        assertThat(EXPECTED).hasSize(states.length);
        int legal = 0;
        for (final ConnectionState from : states) {
            final String[] row = EXPECTED[from.ordinal()].split(" ");
            assertThat(row).hasSize(states.length);
            for (final ConnectionState to : states) {
                final boolean expected = row[to.ordinal()].equals("1");
                assertThat(ConnectionStateMachine.isLegal(from, to)).as("%s -> %s", from, to).isEqualTo(expected);
                assertThat(ConnectionStateMachine.describeIllegal(from, to) == null).as("describe %s -> %s", from, to)
                    .isEqualTo(expected);
                if (expected) {
                    legal++;
                    assertThat(ConnectionStateMachine.transition(from, to)).isEqualTo(to);
                } else {
                    assertThatThrownBy(() -> ConnectionStateMachine.transition(from, to))
                        .as("%s -> %s", from, to)
                        .isInstanceOf(IllegalStateException.class)
                        .hasMessageContaining(from + " -> " + to);
                }
            }
        }
        assertThat(legal).isEqualTo(16);
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
