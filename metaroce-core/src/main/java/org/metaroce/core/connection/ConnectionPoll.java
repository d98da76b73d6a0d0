// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.connection;

import org.agrona.DirectBuffer;
import org.metaroce.core.engine.TransmitSink;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What a poll does for one connection: send the packet it owes or is due to retransmit [CM-022],
 * repeat the server's answer to a duplicate request [CM-025], act on the end of a state that
 * waited too long [CM-023, CM-024, CM-032, CM-034], and forget the request when the handshake
 * table's hold on it expires. When the sink has no room the rest waits for the next poll.
 */
final class ConnectionPoll {
    private static final Logger LOG = LoggerFactory.getLogger(ConnectionPoll.class);
    private static final byte[] NONE = PrivateData.NONE;

    private final CmConfig config;
    private final CmCounters counters;
    private final CmPacketOut out;
    private final HandshakeTable handshakes;
    private final ConnectionQueuePairs queuePairs;
    private final ConnectionLifecycle lifecycle;
    private final CmContext context;

    ConnectionPoll(final CmConfig config, final CmCounters counters, final CmPacketOut out,
                   final HandshakeTable handshakes, final ConnectionQueuePairs queuePairs,
                   final ConnectionLifecycle lifecycle, final CmContext context) {
        this.config = config;
        this.counters = counters;
        this.out = out;
        this.handshakes = handshakes;
        this.queuePairs = queuePairs;
        this.lifecycle = lifecycle;
        this.context = context;
    }

    /** Emits what the connection owes and runs its timers; returns packets emitted. */
    int service(final long now, final Connection c, final TransmitSink sink) {
        int emitted = 0;
        final CmTimers timers = c.timers;
        if (timers.sendPending()) {
            if (!emit(now, sink, c.out, c.outLength, c.remotePeer)) {
                return emitted;
            }
            emitted++;
            timers.sent(now);
        } else if (timers.retransmitDue(now)) {
            if (!emit(now, sink, c.out, c.outLength, c.remotePeer)) {
                return emitted;
            }
            emitted++;
            counters.increment(CmCounter.RETRANSMITS);
            timers.retransmitted(now, config.retransmitMaxNs());
        }
        if (c.sendAnswer) {
            if (!emit(now, sink, c.answer, c.answerLength, c.remotePeer)) {
                return emitted;
            }
            emitted++;
            c.sendAnswer = false;
        }
        if (timers.deadlineDue(now)) {
            onDeadline(now, c);
        }
        if (now >= c.handshakeExpiryNs()) {
            handshakes.remove(c);
            if (c.state() == ConnectionState.REQUEST_PENDING) {
                LOG.debug("application did not decide on {} in time", c);
                lifecycle.close(c);
            }
            lifecycle.maybeFree(c);
        }
        return emitted;
    }

    private void onDeadline(final long now, final Connection c) {
        c.timers.clearDeadline();
        switch (c.state()) {
            case CONNECTING -> { // [CM-023]
                LOG.debug("unreachable: {}", c);
                queuePairs.toError(c);
                context.raise(CmEventType.UNREACHABLE, c, CmReason.NORMAL, NONE);
                lifecycle.close(c);
            }
            case ACCEPTED -> { // [CM-024]
                LOG.debug("no READY_TO_USE for {}", c);
                context.raise(CmEventType.CONNECT_ERROR, c, CmReason.QP_ERROR, NONE);
                lifecycle.startDisconnect(c, CmReason.QP_ERROR, false);
            }
            case DISCONNECTING -> lifecycle.finishDisconnect(now, c); // [CM-032]
            case TIMEWAIT -> { // [CM-034]
                context.raise(CmEventType.TIMEWAIT_EXIT, c, CmReason.NORMAL, NONE);
                lifecycle.close(c);
            }
            default -> {
                // No timer in other states.
            }
        }
    }

    /** Sends a connection's packet; when the sink has no room, the next poll visits the connections again. */
    private boolean emit(final long now, final TransmitSink sink, final DirectBuffer src, final int length,
                         final int peerId) {
        if (out.send(now, sink, src, 0, length, peerId)) {
            return true;
        }
        context.changed();
        return false;
    }
}
