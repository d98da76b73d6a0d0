// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.engine;

import org.metaroce.core.congestion.DelayBasedCongestionControl;
import org.metaroce.core.reliability.RttEstimator;
import org.metaroce.core.wire.ConnectHeader;

/**
 * What a queue pair's responder tells its requester about the endpoint's other senders: the Credit,
 * with RECEIVER_CREDIT its share of one receive BDP among the queue pairs receiving requests
 * [CC-018, REL-013], and with SENDER_COUNT the number of those senders [CC-038]. Both count over
 * two base RTTs, the queue pair's minRTT once its requester has a sample, else BASE_RTT_INIT.
 * The census is the endpoint's ({@link QueuePairContext}); the negotiated capabilities and PMTU are
 * read at each call, since a modify to RTR sets them.
 */
final class ReceiverShare {
    /** The requester's round-trip estimator, read at each call: the requester makes it at RTS. */
    @FunctionalInterface
    interface RoundTrips {
        /** @return the estimator, or null before RTS */
        RttEstimator rtt();
    }

    private final QueuePairContext endpoint;
    private final CurrentAttributes attributes;
    private final RoundTrips roundTrips;

    ReceiverShare(final QueuePairContext endpoint, final CurrentAttributes attributes, final RoundTrips roundTrips) {
        this.endpoint = endpoint;
        this.attributes = attributes;
        this.roundTrips = roundTrips;
    }

    /**
     * @param window the receive window in packets
     * @return the Credit to grant: the whole window, or with RECEIVER_CREDIT negotiated this queue
     *     pair's share of one receive BDP, at least 1 [CC-018], [REL-013]
     */
    int creditToGrant(final long nowNs, final int window) {
        if ((attributes.capabilities() & ConnectHeader.CAP_RECEIVER_CREDIT) == 0) {
            return window;
        }
        final long baseRtt = baseRttNs();
        final int senders = endpoint.activeRequestSenders(nowNs, 2 * baseRtt);
        final double bdpPackets = endpoint.config().linkRateBitsPerSecond() / 8e9 * baseRtt / attributes.pathMtu();
        return (int) Math.min(window, Math.max(1, (long) (bdpPackets / senders)));
    }

    /** @return whether SENDER_COUNT was negotiated [CC-038] */
    boolean senderCountNegotiated() {
        return (attributes.capabilities() & ConnectHeader.CAP_SENDER_COUNT) != 0;
    }

    /** @return the Sender Count this queue pair's ACKs carry: 0 without SENDER_COUNT [CC-038] */
    int senderCountToAdvertise(final long nowNs) {
        return senderCountNegotiated() ? endpoint.receivingSenders(nowNs, 2 * baseRttNs()) : 0;
    }

    /** baseRTT for the credit: this QP's minRTT if its requester has a sample, else BASE_RTT_INIT [CC-018]. */
    private long baseRttNs() {
        final RttEstimator rtt = roundTrips.rtt();
        return rtt != null && rtt.hasSample() ? Math.max(1, rtt.minRttNs())
            : DelayBasedCongestionControl.BASE_RTT_INIT_NS;
    }
}
