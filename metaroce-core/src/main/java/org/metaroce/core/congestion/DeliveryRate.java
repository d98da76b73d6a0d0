// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.congestion;

/**
 * The delivery rate of the default algorithm's marks-only form [CC-041]: the bytes newly
 * acknowledged over the last two sample intervals, divided by their length.
 *
 * <p>An interval opens at an acknowledgement and closes at the first later one that comes at
 * least one SRTT and MIN_ACKS acknowledgements after it; its bytes are those of the
 * acknowledgements after the opening one. One SRTT at least, so that a window sent as a burst
 * and acknowledged as one counts as a window per round trip; several acknowledgements, because
 * behind a policer a sender's share can be a tenth of a packet per round trip, and one gap between
 * two acknowledgements is mostly the hosts' scheduling. A sum of bytes over a sum of time, not a
 * maximum or a mean of per-interval rates: those lean towards the short intervals, where the
 * hosts' waits squeezed acknowledgements together, and a sender paced at its own measured rate
 * then ratchets upwards. Intervals during which the sender was application-limited are dropped:
 * they measure the application, not the network.
 *
 * <p>Allocation-free; owning thread only.
 */
final class DeliveryRate {
    /** Acknowledgements an interval spans at least, the opening one excluded. */
    static final int MIN_ACKS = 4;

    private long openNs = Long.MIN_VALUE;
    private long bytes;
    private int acks;
    private boolean appLimited;
    private long lastBytes;
    private long lastNs;
    private long previousBytes;
    private long previousNs;

    /**
     * Counts one acknowledgement.
     *
     * @param nowNs current time
     * @param ackedBytes bytes it newly acknowledged (0 for an ACK that only carries a CE signal)
     * @param roundTripNs the current SRTT
     * @param applicationLimited whether the sender is application-limited now ([CC-005])
     */
    void onAck(final long nowNs, final long ackedBytes, final long roundTripNs, final boolean applicationLimited) {
        if (ackedBytes <= 0) {
            return;
        }
        if (openNs == Long.MIN_VALUE) {
            open(nowNs, applicationLimited);
            return;
        }
        bytes += ackedBytes;
        acks++;
        appLimited |= applicationLimited;
        final long elapsed = nowNs - openNs;
        if (acks < MIN_ACKS || elapsed < Math.max(1, roundTripNs)) {
            return;
        }
        if (!appLimited) {
            previousBytes = lastBytes;
            previousNs = lastNs;
            lastBytes = bytes;
            lastNs = elapsed;
        }
        open(nowNs, applicationLimited);
    }

    private void open(final long nowNs, final boolean applicationLimited) {
        openNs = nowNs;
        bytes = 0;
        acks = 0;
        appLimited = applicationLimited;
    }

    /** @return the delivery rate of the last two intervals in bytes per ns, 0 before two closed */
    double rateBytesPerNs() {
        return previousNs == 0 ? 0 : (double) (lastBytes + previousBytes) / (lastNs + previousNs);
    }
}
