// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.connection;

/**
 * The connection state transition rules of specification section 9, as a static table in the
 * shape of {@link org.metaroce.core.verbs.QpStateMachine}, so that every change of a
 * {@link Connection}'s state is checked against one definition and a move the specification has
 * no path for fails loudly instead of leaving a connection in a state nothing expects.
 *
 * <p>The specification draws no CM state diagram; the table is read from its requirements:
 *
 * <pre>
 *  client: (connect) CONNECTING                    server: (verified request) REQUEST_PENDING
 *
 *  CONNECTING      -> ESTABLISHED    acceptable CONNECT_REPLY, QP to RTS          [CM-007]
 *                  -> DISCONNECTING  unacceptable reply or QP setup failed        [CM-009]
 *                  -> TIMEWAIT       the server's DISCONNECT_REQUEST              [CM-031, CM-034]
 *                  -> CLOSED         rejected, unreachable, QP failed, given up   [CM-008, CM-023, CM-039]
 *  REQUEST_PENDING -> ACCEPTED       the application accepts                      [CM-012]
 *                  -> CLOSED         rejected (application, NO_RESOURCES), expired [CM-012, CM-025]
 *  ACCEPTED        -> ESTABLISHED    READY_TO_USE or COMM_EST                     [CM-013]
 *                  -> DISCONNECTING  no READY_TO_USE, QP failed, disconnect       [CM-024, CM-031, CM-033]
 *                  -> TIMEWAIT       peer's DISCONNECT_REQUEST, restart, fatal NACK [CM-031, CM-036, CM-039]
 *  ESTABLISHED     -> DISCONNECTING  disconnect, QP failed or destroyed           [CM-031, CM-033]
 *                  -> TIMEWAIT       peer's DISCONNECT_REQUEST, peer dead or restarted, fatal NACK
 *                                                                                 [CM-030, CM-031, CM-036, CM-039]
 *  DISCONNECTING   -> TIMEWAIT       DISCONNECT_REPLY, peer's DISCONNECT_REQUEST, DISCONNECT_TIMEOUT
 *                                                                                 [CM-031, CM-032]
 *  TIMEWAIT        -> CLOSED         QPN_QUARANTINE over (TIMEWAIT_EXIT)          [CM-034]
 * </pre>
 *
 * <p>Every state but CLOSED may also move to CLOSED when the engine hands the connection's QPN
 * to a new connection: its QP was destroyed and the QPN left quarantine [CM-035] (at once if
 * QPN_QUARANTINE is configured 0), so the old record can no longer be addressed. CLOSED is final;
 * no state moves to itself, and nothing moves back to CONNECTING or REQUEST_PENDING, which are
 * only initial states.
 */
public final class ConnectionStateMachine {
    private static final ConnectionState[] STATES = ConnectionState.values();
    private static final boolean[][] LEGAL = new boolean[STATES.length][STATES.length];

    static {
        allow(ConnectionState.CONNECTING, ConnectionState.ESTABLISHED, ConnectionState.DISCONNECTING,
            ConnectionState.TIMEWAIT);
        allow(ConnectionState.REQUEST_PENDING, ConnectionState.ACCEPTED);
        allow(ConnectionState.ACCEPTED, ConnectionState.ESTABLISHED, ConnectionState.DISCONNECTING,
            ConnectionState.TIMEWAIT);
        allow(ConnectionState.ESTABLISHED, ConnectionState.DISCONNECTING, ConnectionState.TIMEWAIT);
        allow(ConnectionState.DISCONNECTING, ConnectionState.TIMEWAIT);
        for (final ConnectionState from : STATES) {
            if (from != ConnectionState.CLOSED) {
                allow(from, ConnectionState.CLOSED);
            }
        }
    }

    private ConnectionStateMachine() {
    }

    private static void allow(final ConnectionState from, final ConnectionState... targets) {
        for (final ConnectionState to : targets) {
            LEGAL[from.ordinal()][to.ordinal()] = true;
        }
    }

    /**
     * @param server true for the accepting side
     * @return the state a connection is created in: a client's with its first CONNECT_REQUEST
     *     [CM-005], a server's with a verified request delivered to the application [CM-012]
     */
    public static ConnectionState initial(final boolean server) {
        return server ? ConnectionState.REQUEST_PENDING : ConnectionState.CONNECTING;
    }

    /**
     * @param from current state
     * @param to requested state
     * @return whether the specification has a path from one to the other
     */
    public static boolean isLegal(final ConnectionState from, final ConnectionState to) {
        return LEGAL[from.ordinal()][to.ordinal()];
    }

    /**
     * Checks a move; the connection manager's code calls this for every change of state.
     *
     * @param from current state
     * @param to requested state
     * @return {@code to}
     * @throws IllegalStateException naming both states and the legal targets if the move is illegal
     */
    public static ConnectionState transition(final ConnectionState from, final ConnectionState to) {
        if (!isLegal(from, to)) {
            throw new IllegalStateException(describeIllegal(from, to));
        }
        return to;
    }

    /**
     * @param from current state
     * @param to requested state
     * @return e.g. "illegal connection state transition TIMEWAIT -> ESTABLISHED: TIMEWAIT may only
     *     move to CLOSED", or null if the move is legal
     */
    public static String describeIllegal(final ConnectionState from, final ConnectionState to) {
        if (isLegal(from, to)) {
            return null;
        }
        final String targets = legalTargets(from);
        return "illegal connection state transition " + from + " -> " + to + ": " + from
            + (targets.isEmpty() ? " is final" : " may only move to " + targets);
    }

    /**
     * @param from current state
     * @return the legal targets in declaration order, e.g. "DISCONNECTING, TIMEWAIT or CLOSED";
     *     empty for CLOSED
     */
    public static String legalTargets(final ConnectionState from) {
        final StringBuilder sb = new StringBuilder(48);
        int left = 0;
        for (final ConnectionState to : STATES) {
            if (isLegal(from, to)) {
                left++;
            }
        }
        for (final ConnectionState to : STATES) {
            if (isLegal(from, to)) {
                sb.append(to);
                left--;
                sb.append(left > 1 ? ", " : left == 1 ? " or " : "");
            }
        }
        return sb.toString();
    }
}
