// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.testwire;

import java.util.Arrays;

import org.metaroce.core.engine.DatagramEndpoint;

/**
 * How one direction of an {@link InMemoryWire} link behaves: its timing (delay, jitter,
 * serialization rate) and the faults it injects (loss, burst loss, duplication, reordering,
 * corruption, blackholes, pauses, ECN CE marking). Immutable, so one profile can be shared by many links
 * and swapped atomically mid-run to model a link going bad; build one with {@link #builder()}.
 *
 * <p>Every probability applies independently per packet. Times are virtual nanoseconds;
 * blackhole and pause windows are absolute times compared with the moment a packet is sent.
 */
public final class LinkProfile {
    /** Default one-way delay: 5 microseconds, a datacenter hop. */
    public static final long DEFAULT_DELAY_NS = 5_000;
    /** Default most extra delay of a duplicate copy. */
    public static final long DEFAULT_DUPLICATE_MAX_DELAY_NS = 10_000;
    /** Default least extra delay of a reordered packet. */
    public static final long DEFAULT_REORDER_MIN_EXTRA_NS = 10_000;
    /** Default most extra delay of a reordered packet. */
    public static final long DEFAULT_REORDER_MAX_EXTRA_NS = 50_000;

    private static final LinkProfile PERFECT = new Builder().build();

    private final long delayNs;
    private final long jitterNs;
    private final boolean jitterIsReceiverWait;
    private final long rateBitsPerSecond;
    private final double lossProbability;
    private final double burstGoodToBad;
    private final double burstBadToGood;
    private final double burstLossInBad;
    private final double duplicateProbability;
    private final long duplicateMaxDelayNs;
    private final double reorderProbability;
    private final long reorderMinExtraNs;
    private final long reorderMaxExtraNs;
    private final double corruptProbability;
    private final double ceMarkProbability;
    private final int ecn;
    private final long[] blackholes;
    private final long[] pauses;

    private LinkProfile(final Builder b) {
        delayNs = b.delayNs;
        jitterNs = b.jitterNs;
        jitterIsReceiverWait = b.jitterIsReceiverWait;
        rateBitsPerSecond = b.rateBitsPerSecond;
        lossProbability = b.lossProbability;
        burstGoodToBad = b.burstGoodToBad;
        burstBadToGood = b.burstBadToGood;
        burstLossInBad = b.burstLossInBad;
        duplicateProbability = b.duplicateProbability;
        duplicateMaxDelayNs = b.duplicateMaxDelayNs;
        reorderProbability = b.reorderProbability;
        reorderMinExtraNs = b.reorderMinExtraNs;
        reorderMaxExtraNs = b.reorderMaxExtraNs;
        corruptProbability = b.corruptProbability;
        ceMarkProbability = b.ceMarkProbability;
        ecn = b.ecn;
        blackholes = b.blackholes.clone();
        pauses = b.pauses.clone();
    }

    /** @return a link with the default 5 µs delay and no jitter, rate limit or faults */
    public static LinkProfile perfect() {
        return PERFECT;
    }

    /** @return a builder starting from {@link #perfect()} */
    public static Builder builder() {
        return new Builder();
    }

    /** @return a builder starting from this profile's settings */
    public Builder toBuilder() {
        final Builder b = new Builder();
        b.delayNs = delayNs;
        b.jitterNs = jitterNs;
        b.jitterIsReceiverWait = jitterIsReceiverWait;
        b.rateBitsPerSecond = rateBitsPerSecond;
        b.lossProbability = lossProbability;
        b.burstGoodToBad = burstGoodToBad;
        b.burstBadToGood = burstBadToGood;
        b.burstLossInBad = burstLossInBad;
        b.duplicateProbability = duplicateProbability;
        b.duplicateMaxDelayNs = duplicateMaxDelayNs;
        b.reorderProbability = reorderProbability;
        b.reorderMinExtraNs = reorderMinExtraNs;
        b.reorderMaxExtraNs = reorderMaxExtraNs;
        b.corruptProbability = corruptProbability;
        b.ceMarkProbability = ceMarkProbability;
        b.ecn = ecn;
        b.blackholes = blackholes.clone();
        b.pauses = pauses.clone();
        return b;
    }

    public long delayNs() {
        return delayNs;
    }

    public long jitterNs() {
        return jitterNs;
    }

    /**
     * @return whether the jitter is time a datagram waits in the receiving host after it arrived,
     *     and the receiver's transport reports the arrival (kernel receive timestamps) [REL-066]
     */
    public boolean jitterIsReceiverWait() {
        return jitterIsReceiverWait;
    }

    /** @return serialization rate in bits per second, 0 for infinitely fast */
    public long rateBitsPerSecond() {
        return rateBitsPerSecond;
    }

    public double lossProbability() {
        return lossProbability;
    }

    public double burstGoodToBad() {
        return burstGoodToBad;
    }

    public double burstBadToGood() {
        return burstBadToGood;
    }

    public double burstLossInBad() {
        return burstLossInBad;
    }

    public double duplicateProbability() {
        return duplicateProbability;
    }

    public long duplicateMaxDelayNs() {
        return duplicateMaxDelayNs;
    }

    public double reorderProbability() {
        return reorderProbability;
    }

    public long reorderMinExtraNs() {
        return reorderMinExtraNs;
    }

    public long reorderMaxExtraNs() {
        return reorderMaxExtraNs;
    }

    public double corruptProbability() {
        return corruptProbability;
    }

    public double ceMarkProbability() {
        return ceMarkProbability;
    }

    /** @return the ECN codepoint delivered with packets that are not CE-marked */
    public int ecn() {
        return ecn;
    }

    /** @return whether the Gilbert–Elliott burst-loss model is active */
    public boolean hasBurstLoss() {
        return burstGoodToBad > 0;
    }

    /**
     * @param nowNs a send time
     * @return whether {@code nowNs} falls inside one of the blackhole windows
     */
    public boolean blackholed(final long nowNs) {
        return windowAt(blackholes, nowNs) >= 0;
    }

    /**
     * @param nowNs a send time
     * @return the end of the pause window {@code nowNs} falls in (the packet leaves then, as from a
     *     host that was descheduled and wakes up), or {@code nowNs} outside every pause
     */
    public long pausedUntil(final long nowNs) {
        final int i = windowAt(pauses, nowNs);
        return i < 0 ? nowNs : pauses[i + 1];
    }

    /** @return the index of the window of {@code windows} ([start, end) pairs) holding {@code nowNs}, or -1 */
    private static int windowAt(final long[] windows, final long nowNs) {
        for (int i = 0; i < windows.length; i += 2) {
            if (nowNs >= windows[i] && nowNs < windows[i + 1]) {
                return i;
            }
        }
        return -1;
    }

    /** @return the blackhole windows as {@code [start0, end0, start1, end1, ...]} */
    public long[] blackholes() {
        return blackholes.clone();
    }

    @Override
    public String toString() {
        final StringBuilder sb = new StringBuilder("LinkProfile{delayNs=").append(delayNs);
        append(sb, "jitterNs", jitterNs);
        if (jitterIsReceiverWait) {
            sb.append(", jitterIsReceiverWait");
        }
        append(sb, "rateBps", rateBitsPerSecond);
        append(sb, "loss", lossProbability);
        if (hasBurstLoss()) {
            sb.append(", burst=[g2b=").append(burstGoodToBad).append(", b2g=").append(burstBadToGood)
                .append(", lossInBad=").append(burstLossInBad).append(']');
        }
        append(sb, "duplicate", duplicateProbability);
        append(sb, "reorder", reorderProbability);
        append(sb, "corrupt", corruptProbability);
        append(sb, "ceMark", ceMarkProbability);
        append(sb, "ecn", ecn);
        if (blackholes.length > 0) {
            sb.append(", blackholes=").append(Arrays.toString(blackholes));
        }
        if (pauses.length > 0) {
            sb.append(", pauses=").append(Arrays.toString(pauses));
        }
        return sb.append('}').toString();
    }

    private static void append(final StringBuilder sb, final String name, final double value) {
        if (value != 0) {
            sb.append(", ").append(name).append('=').append(value);
        }
    }

    private static void append(final StringBuilder sb, final String name, final long value) {
        if (value != 0) {
            sb.append(", ").append(name).append('=').append(value);
        }
    }

    /** Fluent, validating builder of {@link LinkProfile}; every setter returns this builder. */
    public static final class Builder {
        private long delayNs = DEFAULT_DELAY_NS;
        private long jitterNs;
        private boolean jitterIsReceiverWait;
        private long rateBitsPerSecond;
        private double lossProbability;
        private double burstGoodToBad;
        private double burstBadToGood = 1;
        private double burstLossInBad = 1;
        private double duplicateProbability;
        private long duplicateMaxDelayNs = DEFAULT_DUPLICATE_MAX_DELAY_NS;
        private double reorderProbability;
        private long reorderMinExtraNs = DEFAULT_REORDER_MIN_EXTRA_NS;
        private long reorderMaxExtraNs = DEFAULT_REORDER_MAX_EXTRA_NS;
        private double corruptProbability;
        private double ceMarkProbability;
        private int ecn = DatagramEndpoint.ECN_NOT_ECT;
        private long[] blackholes = new long[0];
        private long[] pauses = new long[0];

        private Builder() {
        }

        /** @param delayNs base one-way propagation delay, at least 0 */
        public Builder delayNs(final long delayNs) {
            this.delayNs = nonNegative("delayNs", delayNs);
            return this;
        }

        /**
         * @param jitterNs most extra delay, drawn uniformly from {@code [0, jitterNs]} per packet;
         *        jitter never reorders packets on its own (see {@link InMemoryWire})
         */
        public Builder jitterNs(final long jitterNs) {
            this.jitterNs = nonNegative("jitterNs", jitterNs);
            return this;
        }

        /**
         * @param receiverWait whether the jitter is time a datagram waits in the receiving host
         *        after it arrived (a reader busy or descheduled), with the arrival passed to
         *        {@code onDatagram(now, arrival, ...)} as a transport with kernel receive timestamps
         *        does [REL-066]; else the jitter is path delay and a datagram arrives when delivered
         */
        public Builder jitterIsReceiverWait(final boolean receiverWait) {
            this.jitterIsReceiverWait = receiverWait;
            return this;
        }

        /** @param rateBitsPerSecond serialization rate of the sender's side, 0 for infinite */
        public Builder rateBitsPerSecond(final long rateBitsPerSecond) {
            this.rateBitsPerSecond = nonNegative("rateBitsPerSecond", rateBitsPerSecond);
            return this;
        }

        /** @param probability independent (Bernoulli) loss probability per packet */
        public Builder loss(final double probability) {
            this.lossProbability = probability("loss", probability);
            return this;
        }

        /**
         * Gilbert–Elliott two-state burst loss, stepped once per packet before the loss decision.
         * The long-run fraction of packets in the bad state is {@code g2b / (g2b + b2g)}; bursts
         * last {@code 1 / b2g} packets on average.
         *
         * @param goodToBad probability of moving from the good to the bad state; 0 disables the model
         * @param badToGood probability of moving from the bad to the good state
         * @param lossInBad loss probability while in the bad state
         */
        public Builder burstLoss(final double goodToBad, final double badToGood, final double lossInBad) {
            this.burstGoodToBad = probability("goodToBad", goodToBad);
            this.burstBadToGood = probability("badToGood", badToGood);
            this.burstLossInBad = probability("lossInBad", lossInBad);
            return this;
        }

        /** @param probability chance that a second copy is delivered up to 10 µs after the first */
        public Builder duplicate(final double probability) {
            return duplicate(probability, DEFAULT_DUPLICATE_MAX_DELAY_NS);
        }

        /**
         * @param probability chance that a second copy is delivered
         * @param maxExtraDelayNs the copy arrives uniformly {@code [0, maxExtraDelayNs]} after the original
         */
        public Builder duplicate(final double probability, final long maxExtraDelayNs) {
            this.duplicateProbability = probability("duplicate", probability);
            this.duplicateMaxDelayNs = nonNegative("maxExtraDelayNs", maxExtraDelayNs);
            return this;
        }

        /** @param probability chance that a packet is held back 10..50 µs so later ones overtake it */
        public Builder reorder(final double probability) {
            return reorder(probability, DEFAULT_REORDER_MIN_EXTRA_NS, DEFAULT_REORDER_MAX_EXTRA_NS);
        }

        /**
         * @param probability chance that a packet is held back so later ones overtake it
         * @param minExtraNs least extra delay of a held-back packet
         * @param maxExtraNs most extra delay of a held-back packet
         */
        public Builder reorder(final double probability, final long minExtraNs, final long maxExtraNs) {
            if (maxExtraNs < minExtraNs) {
                throw new IllegalArgumentException("maxExtraNs < minExtraNs: " + maxExtraNs + " < " + minExtraNs);
            }
            this.reorderProbability = probability("reorder", probability);
            this.reorderMinExtraNs = nonNegative("minExtraNs", minExtraNs);
            this.reorderMaxExtraNs = maxExtraNs;
            return this;
        }

        /** @param probability chance that one random bit of the delivered copy is flipped */
        public Builder corrupt(final double probability) {
            this.corruptProbability = probability("corrupt", probability);
            return this;
        }

        /** @param probability chance that a packet is delivered with {@link DatagramEndpoint#ECN_CE} */
        public Builder ceMark(final double probability) {
            this.ceMarkProbability = probability("ceMark", probability);
            return this;
        }

        /**
         * @param codepoint ECN codepoint of packets that are not CE-marked; defaults to
         *        {@link DatagramEndpoint#ECN_NOT_ECT}, which is what the Netty driver reports
         */
        public Builder ecn(final int codepoint) {
            if (codepoint < 0 || codepoint > 3) {
                throw new IllegalArgumentException("ECN codepoint must be 0..3: " + codepoint);
            }
            this.ecn = codepoint;
            return this;
        }

        /**
         * Adds a window in which every packet sent on the link is dropped.
         *
         * @param startNs first virtual time of the window, inclusive
         * @param endNs end of the window, exclusive
         */
        public Builder blackhole(final long startNs, final long endNs) {
            blackholes = withWindow(blackholes, startNs, endNs, "blackhole");
            return this;
        }

        /**
         * Adds a window in which nothing leaves on the link: every packet sent in it departs at
         * its end, in order (a sending host descheduled, or a runtime pausing to collect garbage).
         *
         * @param startNs first virtual time of the window, inclusive
         * @param endNs end of the window, exclusive
         */
        public Builder pause(final long startNs, final long endNs) {
            pauses = withWindow(pauses, startNs, endNs, "pause");
            return this;
        }

        /** @return {@code windows} with {@code [startNs, endNs)} appended */
        private static long[] withWindow(final long[] windows, final long startNs, final long endNs,
                                         final String what) {
            if (endNs < startNs) {
                throw new IllegalArgumentException(what + " end before start: [" + startNs + ", " + endNs + ")");
            }
            final long[] more = Arrays.copyOf(windows, windows.length + 2);
            more[windows.length] = startNs;
            more[windows.length + 1] = endNs;
            return more;
        }

        /** Removes every blackhole window added so far. */
        public Builder clearBlackholes() {
            blackholes = new long[0];
            return this;
        }

        public LinkProfile build() {
            return new LinkProfile(this);
        }

        private static long nonNegative(final String name, final long value) {
            if (value < 0) {
                throw new IllegalArgumentException(name + " must be >= 0: " + value);
            }
            return value;
        }

        private static double probability(final String name, final double p) {
            if (!(p >= 0 && p <= 1)) {
                throw new IllegalArgumentException(name + " must be a probability in [0, 1]: " + p);
            }
            return p;
        }
    }
}
