// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.connection;

import org.metaroce.core.engine.PeerDirectory;
import org.metaroce.core.verbs.QpState;
import org.metaroce.core.wire.Opcode;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The moves of a connection that more than one cause shares (an application call, a packet, a
 * timer, a queue-pair report): taking a QPN, the server's establishment, rejecting a pending
 * request, the disconnect exchange, time-wait, closing and freeing. Each move changes the state
 * through {@link Connection#moveTo}, so {@link ConnectionStateMachine} checks it, and raises the
 * events that belong to it; deciding which move a cause calls for is left to the caller.
 */
final class ConnectionLifecycle {
    private static final Logger LOG = LoggerFactory.getLogger(ConnectionLifecycle.class);
    private static final byte[] NONE = PrivateData.NONE;

    private final CmConfig config;
    private final PeerDirectory directory;
    private final CmPacketWriter writer;
    private final CmCounters counters;
    private final ConnectionTable connections;
    private final ConnectionQueuePairs queuePairs;
    private final CmContext context;

    ConnectionLifecycle(final CmConfig config, final PeerDirectory directory, final CmPacketWriter writer,
                        final CmCounters counters, final ConnectionTable connections,
                        final ConnectionQueuePairs queuePairs, final CmContext context) {
        this.config = config;
        this.directory = directory;
        this.writer = writer;
        this.counters = counters;
        this.connections = connections;
        this.queuePairs = queuePairs;
        this.context = context;
    }

    /**
     * Files the connection under its local QPN. A connection still in time-wait under that QPN
     * (the engine reused it: its quarantine counts allocations) ends now.
     */
    void registerQpn(final Connection c) {
        final Connection old = connections.byQpn(c.localQpn);
        if (old != null && old != c) {
            context.raise(CmEventType.TIMEWAIT_EXIT, old, CmReason.NORMAL, NONE);
            old.inQpnTable = false;
            close(old);
        }
        connections.putQpn(c);
    }

    /** Sends the connection's {@link Connection#out} at the next poll and until answered [CM-022]. */
    void armRetransmit(final Connection c, final long deadlineAfterSendNs) {
        c.timers.arm(config.retransmitInitialNs(), deadlineAfterSendNs);
    }

    /** [CM-013]: READY_TO_USE or the first request packet: the server's QP goes to RTS. */
    void establishServer(final Connection c) {
        if (c.qp.state() != QpState.RTR) {
            return; // in ERR: its QP event ends the connection at the next poll
        }
        try {
            c.qp.modify(QpState.RTS, connections.params(c).rtsAttributes(c.localInitialPsn, c.replyInitiatorDepth));
        } catch (final RuntimeException ex) {
            LOG.warn("cannot move the queue pair of {} to RTS: {}", c, ex.getMessage());
            context.raise(CmEventType.CONNECT_ERROR, c, CmReason.QP_ERROR, NONE);
            startDisconnect(c, CmReason.QP_ERROR, false);
            return;
        }
        c.timers.stop();
        c.timers.clearDeadline();
        c.moveTo(ConnectionState.ESTABLISHED);
        LOG.debug("established {}", c);
        context.raise(CmEventType.ESTABLISHED, c, CmReason.NORMAL, NONE);
        context.changed();
    }

    /** Answers a verified request with CONNECT_REJECT and remembers the answer for duplicates. */
    void rejectPending(final Connection c, final int reason, final byte[] data) {
        c.answerLength = writer.reject(c, reason, data, c.answer);
        c.sendAnswer = true;
        counters.increment(CmCounter.REJECTS_SENT);
        close(c);
    }

    /** [CM-031, CM-033, CM-009]: QP to ERR, DISCONNECT_REQUEST retransmitted until answered. */
    void startDisconnect(final Connection c, final int reason, final boolean raiseDisconnected) {
        queuePairs.toError(c);
        c.disconnectReason = reason;
        c.raiseDisconnected = raiseDisconnected;
        if (c.remoteQpn == 0) {
            finishDisconnect(context.nowNs(), c);
            return;
        }
        writer.headerOnly(c.out, 0, c, Opcode.DISCONNECT_REQUEST, reason);
        c.outLength = CmPacketWriter.HEADER;
        c.moveTo(ConnectionState.DISCONNECTING);
        armRetransmit(c, config.disconnectTimeoutNs());
        context.changed();
    }

    /** The disconnect exchange is over (answered, or DISCONNECT_TIMEOUT [CM-032]). */
    void finishDisconnect(final long now, final Connection c) {
        if (c.raiseDisconnected) {
            c.raiseDisconnected = false;
            context.raise(CmEventType.DISCONNECTED, c, c.disconnectReason, NONE);
        }
        enterTimewait(now, c);
    }

    /**
     * The peer ended the connection (or restarted [CM-036]): its QP goes to ERR, the event is
     * raised, and the connection waits in time-wait for the peer's duplicates [CM-034].
     */
    void endedByPeer(final long now, final Connection c, final CmEventType type, final int reason) {
        queuePairs.toError(c);
        context.raise(type, c, reason, NONE);
        enterTimewait(now, c);
    }

    /**
     * [CM-034, CM-039]: the connection is over but its identity is kept to answer the peer's
     * duplicate DISCONNECT_REQUESTs. Everything else goes now, not when time-wait ends: the queue
     * pair the manager created (with the listener slot, at the next poll or after a fatal NACK's
     * linger) and the packet buffers (time-wait answers are built from the identity), so that a
     * peer that connects and disconnects in a loop leaves behind one small record per connection
     * for QPN_QUARANTINE, not a queue pair.
     */
    void enterTimewait(final long now, final Connection c) {
        enterTimewait(now, c, 0);
    }

    /**
     * @param lingerNs how long the QP stays (in ERR) before it is destroyed: after a fatal NACK it
     *     repeats that NACK to retransmissions of the offending packet [REL-052]
     */
    void enterTimewait(final long now, final Connection c, final long lingerNs) {
        c.timers.stop();
        queuePairs.release(now, c, lingerNs);
        c.sendAnswer = false;
        c.out = null;
        c.answer = null;
        c.answerLength = 0;
        c.localPrivateData = NONE;
        c.moveTo(ConnectionState.TIMEWAIT);
        c.timers.deadline(now + config.timewaitNs());
        context.changed();
    }

    /**
     * The connection is finished without time-wait (failed handshake, rejected request, time-wait
     * over). A server's CONNECT_REJECT stays in {@link Connection#answer} while the handshake table
     * remembers the request, for its duplicates [CM-025].
     */
    void close(final Connection c) {
        c.timers.stop();
        queuePairs.release(context.nowNs(), c, 0);
        c.out = null;
        c.moveTo(ConnectionState.CLOSED);
        c.timers.clearDeadline();
        connections.removeQpn(c);
        maybeFree(c);
        context.changed();
    }

    /** Frees a closed connection the handshake table no longer holds: its peer is unpinned. */
    void maybeFree(final Connection c) {
        if (!c.freed && c.state() == ConnectionState.CLOSED && c.handshakeExpiryNs() == Long.MAX_VALUE) {
            c.freed = true;
            directory.unpin(c.remotePeer);
            context.changed();
        }
    }
}
