// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.congestion;

/**
 * What the queue-pair engine needs from a congestion-control algorithm. All calls come from the
 * endpoint's single owning thread, with the caller's notion of time; implementations must not
 * allocate in these callbacks.
 */
public interface CongestionControl {
    /** @return packets the requester may have in flight now (at least 1) */
    int windowPackets();

    /**
     * @param nowNs current time
     * @return earliest time the next packet may leave (pacing); {@code nowNs} or earlier when unpaced
     *     (a query without side effects: the engine also asks it when computing deadlines, and how
     *     often it asks must not change the algorithm's state)
     */
    long nextSendTimeNs(long nowNs);

    /**
     * A packet left.
     *
     * @param nowNs current time
     * @param bytes datagram bytes
     * @param pathId path index used
     */
    void onPacketSent(long nowNs, int bytes, int pathId);

    /**
     * Packets were newly acknowledged (cumulatively or selectively).
     *
     * @param nowNs current time
     * @param packets number of packets newly acknowledged
     * @param rttNs RTT sample carried by this acknowledgement, or 0 when none
     * @param ecnEcho whether the acknowledged packet was CE-marked
     * @param pathId path of the packet the acknowledgement echoes
     */
    void onAck(long nowNs, int packets, long rttNs, boolean ecnEcho, int pathId);

    /**
     * A packet was declared lost (not for timeouts: see {@link #onRetransmitTimeout(long)}).
     *
     * @param nowNs current time
     * @param pathId path it was sent on
     * @param trimmed whether the loss was signalled by a trimmed-packet NACK
     */
    void onLoss(long nowNs, int pathId, boolean trimmed);

    /**
     * The retransmission timer fired.
     *
     * @param nowNs current time
     */
    void onRetransmitTimeout(long nowNs);

    /**
     * The latest retransmission-timeout episode proved spurious [REL-058]: a packet sent before the
     * expiry was delivered first, so the packets were late, not lost (a descheduled host, a
     * collector's pause). The default algorithm may restore the window the expiry took [CC-036];
     * the others keep their reaction. Called at most once per episode, before the
     * {@link #onAck} of the acknowledgement that proved it.
     *
     * @param nowNs current time
     */
    default void onSpuriousTimeout(final long nowNs) {
    }

    /**
     * A CNP arrived for this QP [CC-020]. Only DCQCN reacts; every other algorithm ignores it and
     * the engine counts it as CNP_IGNORED [CC-007].
     *
     * @param nowNs current time
     * @return whether the algorithm used it
     */
    default boolean onCongestionNotification(final long nowNs) {
        return false;
    }

    /**
     * The latest non-stale ACK carried this Credit [REL-018]: the number of PSNs from its
     * Cumulative PSN that the responder accepts. The engine enforces the credit itself [REL-019];
     * the receiver-credit algorithm also sizes its window from it [CC-019].
     *
     * @param nowNs current time
     * @param creditPackets the Credit field
     */
    default void onCredit(final long nowNs, final long creditPackets) {
        // Most algorithms only see the credit as the engine's cap.
    }

    /**
     * An ACK carried the responder's Sender Count (SENDER_COUNT negotiated, field non-zero) [CC-038].
     * The default algorithm uses it for its initial window, its increases and, on a QP whose first
     * window it sized, for its window when the count falls [CC-039].
     *
     * @param nowNs current time
     * @param count the Sender Count, 1 to 255
     */
    default void onSenderCount(final long nowNs, final int count) {
        // Only the default algorithm uses the count.
    }

    /**
     * The requester has just had its chance to send (the end of each emit): how much is in flight,
     * and whether anything is left that it could not send (held back by the window, the credit or
     * pacing). An algorithm uses it to tell application-limited from network-limited [CC-005].
     *
     * @param nowNs current time
     * @param packetsInFlight packets outstanding
     * @param workLeft whether posted work or retransmissions are still waiting
     */
    default void onSendOpportunity(final long nowNs, final int packetsInFlight, final boolean workLeft) {
        // Algorithms that do not track application limits ignore it.
    }

    /**
     * The earliest time a tail probe may leave [REL-026]: a probe that is a new packet is a
     * packet like any other, and where an algorithm paces at a measured rate it must not leave
     * past that pacing ([CC-041]). Like {@link #nextSendTimeNs}, a query without side effects.
     *
     * @return the time, or {@code Long.MIN_VALUE} when probes are not paced (the default)
     */
    default long probeNotBeforeNs() {
        return Long.MIN_VALUE;
    }
}
