// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.engine;

import org.metaroce.core.verbs.QpAttributeMask;
import org.metaroce.core.verbs.QpAttributes;
import org.metaroce.core.verbs.QpState;

/**
 * What a legal move other than to ERR or RESET sets in a queue pair's parts (verbs ibv_modify_qp):
 * the optional attributes of table 4.4 at any move that takes them; at INIT→RTR the peer, its
 * paths and the responder's expected PSN; at RTR→RTS the requester's first PSN and timeout and the
 * congestion-control choice [CC-008, CC-034], counted and raised when it falls back; at any other
 * move a new TIMEOUT. The {@link QueuePair} checks the move and owns the state; ERR and RESET
 * (flush, discard) stay with it.
 */
final class QueuePairSetup {
    private final QueuePairContext endpoint;
    private final CurrentAttributes attributes;
    private final CongestionControlChoice cc;
    private final ReceiverShare share;

    QueuePairSetup(final QueuePairContext endpoint, final CurrentAttributes attributes,
                   final CongestionControlChoice cc, final ReceiverShare share) {
        this.endpoint = endpoint;
        this.attributes = attributes;
        this.cc = cc;
        this.share = share;
    }

    /**
     * Applies the move from {@code from} to {@code target} (checked legal, attributes validated).
     *
     * @return whether the queue pair entered RTS with SENDER_COUNT negotiated: once it is in RTS,
     *     the endpoint's waiting queue pairs announce the new count [CC-038]
     */
    boolean apply(final QpState from, final QpState target, final QpAttributes attrs, final Requester requester,
                  final Responder responder) {
        // Optional attributes of table 4.4 (validateFor has rejected any the move does not take).
        attributes.applyOptional(attrs);
        if (from == QpState.INIT && target == QpState.RTR) {
            attributes.applyPeer(attrs, endpoint.hostOf(attrs.remotePeer()), endpoint.config().pathBurstPackets());
            responder.start(attrs.rqPsn());
        } else if (from == QpState.RTR && target == QpState.RTS) {
            requester.start(attrs.sqPsn(), attrs.timeoutNs());
            if (cc.start(attrs, attributes.capabilities(), attributes.pathMtu(), endpoint.config())) {
                endpoint.counters().increment(EndpointCounter.CC_FALLBACKS);
                endpoint.raise(AsyncEventType.CC_FALLBACK);
            }
            return share.senderCountNegotiated();
        } else if (attrs.isSet(QpAttributeMask.TIMEOUT)) {
            requester.timeout(attrs.timeoutNs());
        }
        return false;
    }
}
