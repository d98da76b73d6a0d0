// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.engine;

/**
 * Counts an {@link Endpoint}'s queue pairs that send to it: those that accepted a request packet
 * in a recent window (the n of [CC-018]) and those waiting for their first request (the rest of
 * the Sender Count of [CC-038]), at a cost that grows with the queue pairs counted rather than
 * with all of them. A receiver answers every request packet of a SENDER_COUNT QP with an ACK that
 * carries the count, so a scan of every queue pair per ACK would make a host with many idle
 * connections pay for all of them on its data path.
 *
 * <p>Two intrusive lists over the queue pairs' {@link Entry}s, maintained on the events that
 * change them, keep the answers exactly those of a scan:
 * <ul>
 *   <li><em>recent</em>: every queue pair that has accepted a request packet, in descending order
 *   of {@link QueuePair#lastRequestNs()}. A request moves its queue pair to the front (to its
 *   sorted place if time ran backwards), RESET and destruction take it out. The queue pairs inside
 *   a window are then a prefix, and counting them stops at the first one outside.</li>
 *   <li><em>waiting</em>: every queue pair that may be waiting for its first request
 *   ({@link QueuePair#waitsForFirstRequest()}). A queue pair joins when it moves to RTS with
 *   SENDER_COUNT negotiated, the only way that predicate can become true (RESET, which forgets
 *   the request and transmission, and a capability change both come back through a move to RTS).
 *   The count is cached, and anything that may change a member's answer (a request, work posted,
 *   a state change, destruction) invalidates it; a recount drops the members that can no longer
 *   wait until they move to RTS again. A member with work queued but nothing sent yet could stop
 *   having work without an event, so while one exists the count is not cached.</li>
 * </ul>
 *
 * <p>Allocation-free: one entry per queue pair, made when the queue pair is (setup path). Owning
 * thread only, like the endpoint.
 */
final class SenderCensus {
    /** A queue pair's links in the two lists. */
    static final class Entry {
        final QueuePair qp;
        Entry recentPrev;
        Entry recentNext;
        boolean inRecent;
        Entry waitingPrev;
        Entry waitingNext;
        boolean inWaiting;

        Entry(final QueuePair qp) {
            this.qp = qp;
        }
    }

    private Entry recentHead;
    private Entry waitingHead;
    private boolean waitingValid = true;
    private int waiting;

    /**
     * The queue pair's responder has just accepted a request packet at a new time: it moves to its
     * place at the front of the recent list. Data path: constant time while time does not run
     * backwards.
     *
     * @param e the queue pair's entry
     */
    void requestAccepted(final Entry e) {
        if (e.inWaiting) {
            waitingValid = false;
        }
        final long last = e.qp.lastRequestNs();
        if (e.inRecent) {
            if (e == recentHead) {
                final Entry next = e.recentNext;
                if (next == null || next.qp.lastRequestNs() <= last) {
                    return;
                }
            }
            unlinkRecent(e);
        }
        // Insert before the first entry not later than this one: the head, unless time ran backwards.
        Entry prev = null;
        Entry at = recentHead;
        while (at != null && at.qp.lastRequestNs() > last) {
            prev = at;
            at = at.recentNext;
        }
        e.recentPrev = prev;
        e.recentNext = at;
        if (at != null) {
            at.recentPrev = e;
        }
        if (prev == null) {
            recentHead = e;
        } else {
            prev.recentNext = e;
        }
        e.inRecent = true;
    }

    /**
     * Something that may change whether the queue pair waits for its first request happened to it:
     * a state change (RESET also forgets its last request), or work posted. It joins the waiting
     * list when it is in RTS with SENDER_COUNT negotiated, and the waiting count is recomputed on
     * its next use.
     *
     * @param e the queue pair's entry
     */
    void changed(final Entry e) {
        if (e.inRecent && e.qp.lastRequestNs() == Long.MIN_VALUE) {
            unlinkRecent(e);
        }
        if (e.inWaiting) {
            waitingValid = false;
        } else if (e.qp.untouchedInRts()) {
            e.waitingPrev = null;
            e.waitingNext = waitingHead;
            if (waitingHead != null) {
                waitingHead.waitingPrev = e;
            }
            waitingHead = e;
            e.inWaiting = true;
            waitingValid = false;
        }
    }

    /**
     * The queue pair is destroyed (it must not be asked anything from now on): it leaves both lists.
     *
     * @param e the queue pair's entry
     */
    void remove(final Entry e) {
        if (e.inRecent) {
            unlinkRecent(e);
        }
        if (e.inWaiting) {
            unlinkWaiting(e);
            waitingValid = false;
        }
    }

    /**
     * The queue pairs that accepted a request packet in the last {@code windowNs}, that is with
     * {@code nowNs - lastRequestNs <= windowNs}, counting no further than {@code limit}.
     *
     * @param nowNs the time
     * @param windowNs the window
     * @param limit where counting may stop
     * @return the count, at most {@code limit}
     */
    int recentRequesters(final long nowNs, final long windowNs, final int limit) {
        int n = 0;
        for (Entry e = recentHead; e != null && n < limit && nowNs - e.qp.lastRequestNs() <= windowNs; e = e.recentNext) {
            n++;
        }
        return n;
    }

    /** @return the queue pairs waiting for their first request [CC-038] */
    int waitingForFirstRequest() {
        if (!waitingValid) {
            int n = 0;
            boolean stable = true;
            Entry e = waitingHead;
            while (e != null) {
                final Entry next = e.waitingNext;
                if (e.qp.waitsForFirstRequest()) {
                    n++;
                } else if (e.qp.untouchedInRts()) {
                    // Work queued and not yet sent: it waits again if the work goes without a packet.
                    stable = false;
                } else {
                    // It cannot wait again before it moves to RTS again, which brings it back.
                    unlinkWaiting(e);
                }
                e = next;
            }
            waiting = n;
            waitingValid = stable;
        }
        return waiting;
    }

    private void unlinkRecent(final Entry e) {
        if (e.recentPrev == null) {
            recentHead = e.recentNext;
        } else {
            e.recentPrev.recentNext = e.recentNext;
        }
        if (e.recentNext != null) {
            e.recentNext.recentPrev = e.recentPrev;
        }
        e.recentPrev = null;
        e.recentNext = null;
        e.inRecent = false;
    }

    private void unlinkWaiting(final Entry e) {
        if (e.waitingPrev == null) {
            waitingHead = e.waitingNext;
        } else {
            e.waitingPrev.waitingNext = e.waitingNext;
        }
        if (e.waitingNext != null) {
            e.waitingNext.waitingPrev = e.waitingPrev;
        }
        e.waitingPrev = null;
        e.waitingNext = null;
        e.inWaiting = false;
    }
}
