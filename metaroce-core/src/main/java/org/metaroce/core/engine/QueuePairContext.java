// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.engine;

import org.metaroce.core.verbs.CompletionQueue;
import org.metaroce.core.verbs.OwningThread;

/**
 * The endpoint as one of its queue pairs sees it: the endpoint's configuration, counters, trace,
 * writer and clock, and the three things a queue pair reports to it (it changed, it raised an
 * asynchronous event, a completion queue overflowed). The endpoint hands each queue pair its own
 * context, bound to it, so nothing here names a queue pair: the queue pair holds no pointer back
 * to the endpoint and no class cycle runs through it (issue 19).
 */
interface QueuePairContext {
    /** @return the protocol parameters */
    EndpointConfig config();

    /** @return the endpoint's counters */
    EndpointCounters counters();

    /** @return the endpoint's packet writer */
    PacketWriter writer();

    /** @return the endpoint's trace */
    EventTrace trace();

    /** @return the thread allowed to call the queue pair */
    OwningThread owningThread();

    /** @return the latest time the endpoint was given */
    long nowNs();

    /** @return the host of a driver peer id */
    int hostOf(int peerId);

    /** @return the n of [CC-018]: queue pairs that received a request in the last {@code windowNs} (at least 1) */
    int activeRequestSenders(long nowNs, long windowNs);

    /**
     * @return the Sender Count of [CC-038]: queue pairs that accepted a request in the last
     *     {@code windowNs}, plus those waiting for their first request (at least 1, at most 255)
     */
    int receivingSenders(long nowNs, long windowNs);

    /** A queue pair with SENDER_COUNT entered RTS: every waiting one announces the new count [CC-038]. */
    void senderCountChanged();

    /** This queue pair's responder accepted a request packet at a new time (its lastRequestNs changed) [CC-018]. */
    void requestAccepted();

    /**
     * This queue pair's state changed or work was posted to it: whether it waits for its first
     * request [CC-038] may have changed.
     */
    void firstRequestWaitMayChange();

    /** This queue pair is being destroyed: the endpoint stops counting it (it may still answer). */
    void destroyed();

    /** Something happened to this queue pair: the next poll visits it and its deadline is recomputed. */
    void touched();

    /** This queue pair raised an asynchronous event. */
    void raise(AsyncEventType type);

    /** A completion queue overflowed: CQ_ERR, and every queue pair using it fails [QP-021]. */
    void onCompletionQueueOverflow(CompletionQueue cq);
}
