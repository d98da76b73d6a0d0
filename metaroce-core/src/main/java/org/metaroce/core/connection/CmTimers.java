// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.connection;

/**
 * A connection's two timers. The retransmission timer repeats the connection's last packet
 * until it is answered, starting at CM_RETRANSMIT_INITIAL and doubling up to a maximum [CM-022].
 * The state deadline ends a state that waited too long: connecting [CM-023], waiting for
 * READY_TO_USE [CM-024], disconnecting [CM-032] and time-wait [CM-034].
 *
 * <p>The deadline of a handshake or disconnect runs from the first transmission of its packet,
 * not from the call that queued it, because the packet only leaves at the next poll: a driver
 * that polls late must not shorten the peer's time to answer. Times are the caller's
 * {@code nowNs}; the owner polls when {@link #nextNs()} is due.
 */
final class CmTimers {
    /** The packet was (re)armed and has not been sent yet. */
    private boolean sendPending;
    private boolean retransmitting;
    private long retransmitAtNs = Long.MAX_VALUE;
    private long intervalNs;
    private long deadlineNs = Long.MAX_VALUE;
    /** A deadline to start at the first send, 0 if none. */
    private long deadlineAfterSendNs;

    /**
     * Sends the packet at the next poll and retransmits it from then on [CM-022].
     *
     * @param initialIntervalNs the first retransmission interval
     * @param deadlineAfterSendNs if positive, the state deadline, counted from the first send; if
     *     0 the deadline already running is kept (a new cookie does not restart the connect timeout)
     */
    void arm(final long initialIntervalNs, final long deadlineAfterSendNs) {
        sendPending = true;
        retransmitting = true;
        intervalNs = initialIntervalNs;
        retransmitAtNs = Long.MAX_VALUE;
        if (deadlineAfterSendNs > 0) {
            this.deadlineAfterSendNs = deadlineAfterSendNs;
            deadlineNs = Long.MAX_VALUE;
        }
    }

    /** Stops retransmitting (answered, or the connection ended); the state deadline is kept. */
    void stop() {
        sendPending = false;
        retransmitting = false;
        retransmitAtNs = Long.MAX_VALUE;
        deadlineAfterSendNs = 0;
    }

    /** @return whether the armed packet has not been sent yet */
    boolean sendPending() {
        return sendPending;
    }

    /** The armed packet was sent: the retransmission timer and a pending deadline start now. */
    void sent(final long nowNs) {
        sendPending = false;
        if (retransmitting) {
            retransmitAtNs = nowNs + intervalNs;
        }
        if (deadlineAfterSendNs > 0) {
            deadlineNs = nowNs + deadlineAfterSendNs;
            deadlineAfterSendNs = 0;
        }
    }

    /** @return whether the packet is due to be sent again */
    boolean retransmitDue(final long nowNs) {
        return retransmitting && nowNs >= retransmitAtNs;
    }

    /**
     * The packet was sent again: the next interval is twice this one, at most {@code maxIntervalNs}.
     */
    void retransmitted(final long nowNs, final long maxIntervalNs) {
        intervalNs = Math.min(intervalNs * 2, maxIntervalNs);
        retransmitAtNs = nowNs + intervalNs;
    }

    /** @param atNs when the current state ends (time-wait [CM-034]) */
    void deadline(final long atNs) {
        deadlineNs = atNs;
    }

    /** Cancels the state deadline: the state it guarded is over. */
    void clearDeadline() {
        deadlineNs = Long.MAX_VALUE;
    }

    /** @return whether the state deadline has passed */
    boolean deadlineDue(final long nowNs) {
        return nowNs >= deadlineNs;
    }

    /** @return the earliest time a timer fires, {@link Long#MAX_VALUE} if none runs */
    long nextNs() {
        return Math.min(retransmitAtNs, deadlineNs);
    }
}
