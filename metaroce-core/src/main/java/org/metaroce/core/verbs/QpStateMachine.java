// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.verbs;

/**
 * The queue-pair state transition rules of libibverbs and the InfiniBand specification, as
 * static tables so that the engine, the API and the compliance suite share one definition.
 *
 * <p>Legal moves: RESET to INIT or RESET; INIT to INIT or RTR; RTR to RTS; RTS to RTS or SQD;
 * SQD to SQD or RTS; SQE to RTS; and any state to RESET or ERR. Everything else is illegal
 * (ibv_modify_qp fails with EINVAL).
 */
public final class QpStateMachine {
    private static final int STATES = QpState.values().length;
    private static final boolean[][] LEGAL = new boolean[STATES][STATES];
    private static final int[][] REQUIRED = new int[STATES][STATES];
    private static final int[][] OPTIONAL = new int[STATES][STATES];
    private static final int UPDATABLE = QpAttributeMask.ACCESS_FLAGS | QpAttributeMask.MIN_RNR_TIMER
        | QpAttributeMask.TIMEOUT | QpAttributeMask.RETRY_CNT | QpAttributeMask.RNR_RETRY
        | QpAttributeMask.RETRY_TIMEOUT;

    static {
        // Rows 1-11 of specification table 4.4: required and optional attributes per move.
        allow(QpState.RESET, QpState.INIT, QpAttributeMask.PORT | QpAttributeMask.ACCESS_FLAGS, 0);
        allow(QpState.INIT, QpState.INIT, 0, QpAttributeMask.PORT | QpAttributeMask.ACCESS_FLAGS);
        allow(QpState.INIT, QpState.RTR,
            QpAttributeMask.PATH_MTU | QpAttributeMask.DEST_QPN | QpAttributeMask.RQ_PSN
                | QpAttributeMask.MAX_DEST_RD_ATOMIC | QpAttributeMask.MIN_RNR_TIMER | QpAttributeMask.PATHS
                | QpAttributeMask.REMOTE_PEER,
            QpAttributeMask.ACCESS_FLAGS | QpAttributeMask.CAPABILITIES);
        allow(QpState.RTR, QpState.RTS,
            QpAttributeMask.SQ_PSN | QpAttributeMask.TIMEOUT | QpAttributeMask.RETRY_CNT
                | QpAttributeMask.RNR_RETRY | QpAttributeMask.MAX_QP_RD_ATOMIC,
            QpAttributeMask.ACCESS_FLAGS | QpAttributeMask.MIN_RNR_TIMER | QpAttributeMask.CONGESTION_WINDOW
                | QpAttributeMask.CC_ALGORITHM | QpAttributeMask.RETRY_TIMEOUT);
        allow(QpState.RTS, QpState.RTS, 0, UPDATABLE);
        allow(QpState.RTS, QpState.SQD, 0, 0);
        allow(QpState.SQD, QpState.SQD, 0, UPDATABLE | QpAttributeMask.MAX_QP_RD_ATOMIC);
        allow(QpState.SQD, QpState.RTS, 0, UPDATABLE);
        allow(QpState.SQE, QpState.RTS, 0, QpAttributeMask.ACCESS_FLAGS | QpAttributeMask.MIN_RNR_TIMER);
        for (final QpState from : QpState.values()) {
            allow(from, QpState.RESET, 0, 0);
            allow(from, QpState.ERR, 0, 0);
        }
    }

    private QpStateMachine() {
    }

    private static void allow(final QpState from, final QpState to, final int required, final int optional) {
        LEGAL[from.ordinal()][to.ordinal()] = true;
        REQUIRED[from.ordinal()][to.ordinal()] = required;
        OPTIONAL[from.ordinal()][to.ordinal()] = optional;
    }

    /**
     * @param from current state
     * @param to requested state
     * @return the attributes the move may carry besides the required ones (table 4.4)
     * @throws IllegalArgumentException if the move is illegal
     */
    public static int optionalAttributes(final QpState from, final QpState to) {
        if (!isLegal(from, to)) {
            throw new IllegalArgumentException(describeIllegal(from, to));
        }
        return OPTIONAL[from.ordinal()][to.ordinal()];
    }

    /**
     * @param from current state
     * @param to requested state
     * @return whether ibv_modify_qp would accept the move
     */
    public static boolean isLegal(final QpState from, final QpState to) {
        return LEGAL[from.ordinal()][to.ordinal()];
    }

    /**
     * Explains an illegal move so the user sees what would have been allowed.
     *
     * @param from current state
     * @param to requested state
     * @return e.g. "illegal QP state transition RTR -> SQD: RTR may only move to RTS, RESET or
     *     ERR", or null if the move is legal
     */
    public static String describeIllegal(final QpState from, final QpState to) {
        if (isLegal(from, to)) {
            return null;
        }
        return "illegal QP state transition " + from + " -> " + to + ": " + from
            + " may only move to " + legalTargets(from);
    }

    /**
     * @param from current state
     * @return the legal targets, other states first, then RESET and ERR, e.g. "RTS, RESET or ERR"
     */
    public static String legalTargets(final QpState from) {
        final StringBuilder sb = new StringBuilder(40);
        for (final QpState to : QpState.values()) {
            if (to != QpState.RESET && to != QpState.ERR && isLegal(from, to)) {
                sb.append(to).append(", ");
            }
        }
        return sb.append(QpState.RESET).append(" or ").append(QpState.ERR).toString();
    }

    /**
     * @param from current state
     * @param to requested state
     * @return {@link QpAttributeMask} bits that must be supplied for the move (0 if none)
     * @throws IllegalArgumentException if the move is illegal
     */
    public static int requiredAttributes(final QpState from, final QpState to) {
        if (!isLegal(from, to)) {
            throw new IllegalArgumentException(describeIllegal(from, to));
        }
        return REQUIRED[from.ordinal()][to.ordinal()];
    }
}
