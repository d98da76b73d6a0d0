// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.engine;

import org.metaroce.core.reliability.Psn;
import org.metaroce.core.verbs.WcOpcode;
import org.metaroce.core.verbs.WcStatus;
import org.metaroce.core.verbs.WorkCompletion;

/**
 * Completes a responder's posted receives on the receive CQ, oldest first: each once the
 * cumulative PSN has passed its message's last packet, since placement is out of order but
 * completion must not be [OPS-030]; and all of them when the queue pair enters ERR, each with the
 * status it has earned. The responder decides when to call; this class only turns the
 * {@link ReceiveQueue}'s entries into work completions.
 */
final class ReceiveCompletions {
    private final ReceiveQueue receives;
    private final ResponderContext qp;
    private final EndpointCounters counters;

    ReceiveCompletions(final ReceiveQueue receives, final ResponderContext qp, final EndpointCounters counters) {
        this.receives = receives;
        this.qp = qp;
        this.counters = counters;
    }

    /**
     * Completes the oldest receives whose messages lie wholly before {@code expectedPsn}, stopping
     * at the first that does not, or when the CQ overflows (the queue pair then fails [QP-021]).
     */
    void completeInOrder(final int expectedPsn) {
        RecvWqe recv;
        while ((recv = receives.head()) != null) {
            if (!recv.isComplete() || !Psn.before(recv.lastPsn, expectedPsn)) {
                return;
            }
            final boolean pushed = push(recv, WcStatus.SUCCESS);
            receives.retireHead();
            if (!pushed) {
                qp.onCompletionQueueOverflow(qp.recvCq());
                return;
            }
        }
    }

    /** Completes every posted receive in order: finished ones succeed, a too-small one fails, the rest flush. */
    void flush(final int expectedPsn) {
        RecvWqe recv;
        while ((recv = receives.head()) != null) {
            final WcStatus status = recv.tooSmall ? WcStatus.LOC_LEN_ERR
                : recv.protectionError ? WcStatus.LOC_PROT_ERR
                : recv.isComplete() && Psn.before(recv.lastPsn, expectedPsn) ? WcStatus.SUCCESS
                : WcStatus.WR_FLUSH_ERR;
            if (status == WcStatus.WR_FLUSH_ERR) {
                recv.opcode = WcOpcode.RECV;
                recv.messageLength = 0;
                recv.hasImm = false;
            }
            push(recv, status);
            receives.retireHead();
        }
    }

    private boolean push(final RecvWqe recv, final WcStatus status) {
        final boolean ok = qp.recvCq().push(recv.wrId, status, recv.opcode, (int) recv.messageLength,
            recv.immData, (recv.hasImm ? WorkCompletion.WC_WITH_IMM : 0)
                | (recv.solicited ? WorkCompletion.WC_SOLICITED : 0), qp.qpn(), qp.destQpnOrZero());
        if (!ok) {
            counters.increment(EndpointCounter.CQ_OVERFLOWS);
        }
        return ok;
    }
}
