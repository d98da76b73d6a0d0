// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.engine;

import java.util.List;

/**
 * The endpoint's count of the peers sending it requests, read by each queue pair's
 * {@link ReceiverShare}: the n of the receiver credit [CC-018] and the Sender Count [CC-038], and the
 * announcement of a new count to the queue pairs still waiting for their first request. It scans
 * the endpoint's live queue pairs, handed in as the endpoint's list (read, never changed here).
 */
final class SenderCensus {
    private final List<QueuePair> queuePairs;
    private long activeSendersAtNs = Long.MIN_VALUE;
    private long activeSendersWindowNs;
    private int activeSenders;

    SenderCensus(final List<QueuePair> queuePairs) {
        this.queuePairs = queuePairs;
    }

    /**
     * The n of [CC-018]: queue pairs that received a request packet in the last {@code windowNs}
     * (at least 1). Computed once per instant and window, so a burst of ACKs costs one scan.
     */
    int activeRequestSenders(final long nowNs, final long windowNs) {
        if (nowNs != activeSendersAtNs || windowNs != activeSendersWindowNs) {
            int n = 0;
            for (int i = 0, size = queuePairs.size(); i < size; i++) {
                final long last = queuePairs.get(i).lastRequestNs();
                if (last != Long.MIN_VALUE && nowNs - last <= windowNs) {
                    n++;
                }
            }
            activeSenders = Math.max(1, n);
            activeSendersAtNs = nowNs;
            activeSendersWindowNs = windowNs;
        }
        return activeSenders;
    }

    /**
     * The Sender Count of [CC-038]: the queue pairs that accepted a request packet in the last
     * {@code windowNs} (the n of [CC-018]) and those that, with SENDER_COUNT negotiated, are in RTS
     * and have neither accepted nor sent a request packet nor work posted to send, clamped to
     * [1, 255]. It scans the endpoint's queue pairs, and only QPs that negotiated SENDER_COUNT ask.
     */
    int receivingSenders(final long nowNs, final long windowNs) {
        int n = 0;
        for (int i = 0, size = queuePairs.size(); i < size; i++) {
            final QueuePair qp = queuePairs.get(i);
            final long last = qp.lastRequestNs();
            if ((last != Long.MIN_VALUE && nowNs - last <= windowNs) || qp.waitsForFirstRequest()) {
                n++;
            }
        }
        return Math.min(255, Math.max(1, n));
    }

    /** Every queue pair waiting for its first request announces the Sender Count once more [CC-038]. */
    void senderCountChanged() {
        for (int i = 0, size = queuePairs.size(); i < size; i++) {
            final QueuePair qp = queuePairs.get(i);
            if (qp.waitsForFirstRequest()) {
                qp.announceSenderCount();
            }
        }
    }
}
