// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.connection;

import org.metaroce.core.engine.AsyncEventType;
import org.metaroce.core.engine.QueuePair;
import org.metaroce.core.verbs.QpState;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What a connection's queue pair reports, and what the connection does about it [CM-013, CM-030,
 * CM-033]. The engine reports from inside a packet or its own poll, so a report is only queued
 * ({@link #report}); the manager's next poll acts on the queue ({@link #process}), and the
 * manager never scans its connections to find out what their queue pairs did.
 */
final class QpEventActions {
    private static final Logger LOG = LoggerFactory.getLogger(QpEventActions.class);
    private static final byte[] NONE = PrivateData.NONE;

    /** Reports not yet acted on (at the next poll). */
    private final QpEventQueue queue = new QpEventQueue();
    private final CmConfig config;
    private final CmCounters counters;
    private final ConnectionTable connections;
    private final ConnectionLifecycle lifecycle;
    private final CmContext context;

    QpEventActions(final CmConfig config, final CmCounters counters, final ConnectionTable connections,
                   final ConnectionLifecycle lifecycle, final CmContext context) {
        this.config = config;
        this.counters = counters;
        this.connections = connections;
        this.lifecycle = lifecycle;
        this.context = context;
    }

    /**
     * Queues a report about a queue pair for the next poll.
     *
     * @param type COMM_EST, QP_FATAL, QP_REQ_ERR or QP_ACCESS_ERR; null when the QP was destroyed
     */
    void report(final QueuePair qp, final AsyncEventType type) {
        final Connection c = connections.byQpn(qp.qpn());
        if (c == null || c.qp != qp || c.state() == ConnectionState.TIMEWAIT || c.state() == ConnectionState.CLOSED) {
            // A QP the application wired by hand, or of a connection that has ended (whose QP
            // this manager may be destroying right now): nothing left to act on.
            return;
        }
        queue.add(qp, type);
        context.changed();
    }

    /** @return whether reports wait for {@link #process} */
    boolean hasPending() {
        return !queue.isEmpty();
    }

    /** Acts on the queued reports, oldest first. */
    void process(final long now) {
        while (!queue.isEmpty()) {
            final QueuePair qp = queue.headQueuePair();
            final AsyncEventType type = queue.headType();
            queue.removeHead();
            final Connection c = connections.byQpn(qp.qpn());
            if (c == null || c.qp != qp) {
                continue;
            }
            if (type == null) {
                onQueuePairDestroyed(c);
            } else if (type == AsyncEventType.COMM_EST) {
                onCommunicationEstablished(c);
            } else {
                onQueuePairError(now, c, type);
            }
        }
    }

    /** [CM-013]: the first request packet reached the server's QP in RTR before READY_TO_USE. */
    private void onCommunicationEstablished(final Connection c) {
        if (c.server && c.state() == ConnectionState.ACCEPTED && c.qp.state() == QpState.RTR) {
            counters.increment(CmCounter.COMM_EST);
            lifecycle.establishServer(c);
        }
        // Otherwise READY_TO_USE came first (or the connection is being torn down): nothing to do.
    }

    /**
     * A connection's QP entered ERR by itself. A peer declared dead by keepalive ends the
     * connection at once, without a disconnect exchange nobody would answer [CM-030]. After a fatal
     * NACK this side sent (QP_REQ_ERR, QP_ACCESS_ERR), the peer learns from the NACK, so the
     * connection ends without DISCONNECT_REQUEST too; it waits in time-wait to answer the peer's
     * [CM-033, CM-034]. Any other failure is announced with DISCONNECT_REQUEST QP_ERROR [CM-033].
     * Before ESTABLISHED the failure is a CONNECT_ERROR.
     */
    private void onQueuePairError(final long now, final Connection c, final AsyncEventType cause) {
        final boolean peerDead = c.qp.isPeerDead();
        final boolean sentFatalNack = cause == AsyncEventType.QP_REQ_ERR || cause == AsyncEventType.QP_ACCESS_ERR;
        switch (c.state()) {
            case CONNECTING -> {
                LOG.debug("queue pair failed ({}) while connecting: {}", cause, c);
                context.raise(CmEventType.CONNECT_ERROR, c, CmReason.QP_ERROR, NONE);
                lifecycle.close(c);
            }
            case ACCEPTED -> {
                LOG.debug("queue pair failed ({}) before READY_TO_USE: {}", cause, c);
                context.raise(CmEventType.CONNECT_ERROR, c, CmReason.QP_ERROR, NONE);
                if (sentFatalNack) {
                    lifecycle.enterTimewait(now, c, config.disconnectTimeoutNs());
                } else {
                    lifecycle.startDisconnect(c, CmReason.QP_ERROR, false);
                }
            }
            case ESTABLISHED -> {
                if (peerDead || sentFatalNack) {
                    LOG.debug("{}: {}", peerDead ? "peer dead" : "fatal NACK sent", c);
                    if (peerDead) {
                        counters.increment(CmCounter.PEERS_DEAD);
                    }
                    context.raise(CmEventType.DISCONNECTED, c, CmReason.QP_ERROR, NONE);
                    lifecycle.enterTimewait(now, c, sentFatalNack ? config.disconnectTimeoutNs() : 0);
                } else {
                    LOG.debug("queue pair failed ({}): {}", cause, c);
                    lifecycle.startDisconnect(c, CmReason.QP_ERROR, true);
                }
            }
            default -> {
                // Already tearing down: the CM put the QP in ERR itself.
            }
        }
    }

    /** The application destroyed a connection's QP: the connection ends as by {@code disconnect}. */
    private void onQueuePairDestroyed(final Connection c) {
        switch (c.state()) {
            case CONNECTING -> {
                context.raise(CmEventType.CONNECT_ERROR, c, CmReason.QP_ERROR, NONE);
                lifecycle.close(c);
            }
            case ACCEPTED, ESTABLISHED -> lifecycle.startDisconnect(c, CmReason.NORMAL, true);
            default -> {
                // Tearing down already; time-wait answers from the kept identity [CM-034].
            }
        }
    }
}
