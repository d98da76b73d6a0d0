// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.verbs;

/**
 * Queue-pair states with the libibverbs {@code IBV_QPS_*} names; legal moves between them are
 * in {@link QpStateMachine}.
 */
public enum QpState {
    /** Freshly created or reset: no work requests accepted, all queues empty. */
    RESET,
    /** Initialised: receives may be posted (and are kept), nothing is processed yet. */
    INIT,
    /** Ready to receive: the responder runs; sends may not be posted yet. */
    RTR,
    /** Ready to send: fully operational. */
    RTS,
    /** Send queue drained: new send requests are queued but not started. */
    SQD,
    /** Send queue error: a send request failed locally; receives still work. */
    SQE,
    /** Error: all outstanding and new work requests complete with WR_FLUSH_ERR. */
    ERR;

    private static final QpState[] VALUES = values();

    /**
     * @param ordinal an ordinal of this enum
     * @return the constant, without allocating
     */
    public static QpState fromOrdinal(final int ordinal) {
        return VALUES[ordinal];
    }
}
