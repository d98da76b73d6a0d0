// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.connection;

import java.util.ArrayList;
import java.util.List;

import org.metaroce.core.engine.Endpoint;
import org.metaroce.core.engine.QueuePair;
import org.metaroce.core.verbs.QpAttributes;
import org.metaroce.core.verbs.QpState;

/**
 * The end of a connection's queue pair [CM-039]: moved to ERR when the connection fails or ends,
 * and, if the manager created it, destroyed once it has nothing left to say. Also gives back the
 * listener slot the connection held, which is bound to the queue pair's life so that the listener
 * limit bounds the queue pairs a listener's connections hold, lingering ones included.
 */
final class ConnectionQueuePairs {
    private static final QpAttributes NO_ATTRIBUTES = new QpAttributes();

    private final Endpoint endpoint;
    private final CmContext context;
    /**
     * Ended connections whose queue pair (in ERR, created by this manager) is still to be destroyed
     * [CM-039]: once it has emitted its last ACK or NACK, and, after a fatal NACK, once it may no
     * longer have to repeat it [REL-052]. Usually only those of the last poll or two.
     */
    private final List<Connection> retiring = new ArrayList<>();
    /** Earliest {@link Connection#retireAtNs} among {@link #retiring}, as of the last poll. */
    private long retireDeadlineNs = Long.MAX_VALUE;

    /**
     * @param endpoint where the queue pairs live (looked up by QPN, destroyed)
     * @param context the manager's step
     */
    ConnectionQueuePairs(final Endpoint endpoint, final CmContext context) {
        this.endpoint = endpoint;
        this.context = context;
    }

    /**
     * Moves the connection's queue pair to ERR, so that outstanding work requests complete with
     * WR_FLUSH_ERR [QP-022]; nothing if it is gone or in ERR already.
     */
    void toError(final Connection c) {
        final QueuePair qp = c.qp;
        if (qp != null && endpoint.queuePair(c.localQpn) == qp && qp.state() != QpState.ERR) {
            qp.modify(QpState.ERR, NO_ATTRIBUTES);
        }
    }

    /**
     * The connection has ended: the queue pair the manager created goes to ERR and is destroyed at
     * a coming poll [CM-039]; its listener slot goes with it. A QP the application destroyed
     * itself, or passed to {@code connect}, is left alone and the slot is given back now.
     *
     * @param lingerNs how long the QP stays (in ERR) before it is destroyed: after a fatal NACK it
     *     repeats that NACK to retransmissions of the offending packet [REL-052]
     */
    void release(final long now, final Connection c, final long lingerNs) {
        final QueuePair qp = c.qp;
        if (c.retiring) {
            c.retireAtNs = Math.min(c.retireAtNs, now + lingerNs); // closing ends a linger
        } else if (c.ownsQueuePair && qp != null && endpoint.queuePair(c.localQpn) == qp) {
            toError(c);
            c.retiring = true;
            c.retireAtNs = now + lingerNs;
            retiring.add(c);
            context.changed();
        } else {
            releaseListenerSlot(c);
        }
        c.ownsQueuePair = false;
    }

    /**
     * Destroys the retiring queue pairs that have nothing left to send and no reason to linger.
     * Runs at the start of a poll, before the endpoint polls its queue pairs, so a QP that failed
     * with a NACK to send emits it in this poll and is destroyed in the next.
     */
    void destroyRetired(final long now) {
        long next = Long.MAX_VALUE;
        for (int i = retiring.size() - 1; i >= 0; i--) {
            final Connection c = retiring.get(i);
            final QueuePair qp = c.qp;
            final boolean live = endpoint.queuePair(c.localQpn) == qp;
            if (live && qp.hasAcknowledgementsToSend()) {
                next = now; // sent by the endpoint in this poll: destroy it at the next
                continue;
            }
            if (live && now < c.retireAtNs) {
                next = Math.min(next, c.retireAtNs);
                continue;
            }
            final int last = retiring.size() - 1;
            retiring.set(i, retiring.get(last));
            retiring.remove(last);
            c.retiring = false;
            if (live) {
                endpoint.destroyQueuePair(qp);
            }
            releaseListenerSlot(c);
        }
        retireDeadlineNs = next;
    }

    /** @return when a retiring queue pair is next due to be destroyed, as of the last poll */
    long deadlineNs() {
        return retireDeadlineNs;
    }

    private static void releaseListenerSlot(final Connection c) {
        if (c.countedInListener) {
            c.countedInListener = false;
            c.listener.connections--;
        }
    }
}
