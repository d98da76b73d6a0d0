// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.engine;

/**
 * The requester's per-PSN record (specification 6.1): a ring of one slot per PSN from the oldest
 * unresolved one up to the next PSN, with the work request and packet index it belongs to, its
 * kind (request packet, reserved READ_RESPONSE slot [OPS-007], atomic), its state, its
 * transmissions (all, RNR-caused [REL-039], trimmed [REL-059]), the time of its first and latest
 * transmission [REL-030], the transmit sequence and path of the latest [REL-023], whether that one
 * shares a KEEPALIVE's PSN and timestamp [REL-017], the cause of its latest loss, and whether a
 * NACK PSN_WINDOW holds it [REL-061]. It alone owns these arrays and the counts derived from them
 * (in flight, lost, waiting RNR, held by PSN_WINDOW, retransmitted and outstanding); the
 * {@link Requester} decides when a transition happens, this class only keeps the record
 * consistent.
 *
 * <p>States and the transitions between them, each one method:
 * <ul>
 *   <li>{@link #FREE} → {@link #FREE}: {@link #assign} gives the slot to a new PSN;</li>
 *   <li>{@link #FREE} or {@link #LOST} → {@link #IN_FLIGHT}: {@link #sent} (its own transmission)
 *       or {@link #sentWith} (covered by the transmission of its READ_REQUEST); a packet counts
 *       as in flight from its transmission [REL-034];</li>
 *   <li>{@link #IN_FLIGHT} or {@link #RNR_WAIT} → {@link #LOST}: {@link #lost}, by RACK
 *       [REL-023, REL-045], tail probe [REL-026], RTO [REL-028], trim [REL-036, REL-037],
 *       go-back-N [REL-054, REL-055], an admitted PSN_WINDOW NACK [REL-061] or the end of an RNR
 *       delay [REL-039]; a lost packet no longer counts as in flight [REL-034];</li>
 *   <li>{@link #IN_FLIGHT} or {@link #LOST} → {@link #RNR_WAIT}: {@link #heldForRnr}, on NACK RNR:
 *       not a loss, the packet waits out the RNR delay [REL-039];</li>
 *   <li>{@link #IN_FLIGHT}, {@link #LOST} or {@link #RNR_WAIT} → {@link #DELIVERED}:
 *       {@link #delivered}, by the Cumulative PSN, a SACK bit or a proven trigger [REL-017], or a
 *       response [REL-022];</li>
 *   <li>{@link #DELIVERED} → {@link #FREE}: {@link #free}, when the oldest unresolved PSN moves
 *       past it. The slot keeps its record (kind, transmissions, times) until the PSN one window
 *       later reuses it, so a late duplicate or second answer can still be judged [REL-025,
 *       REL-064];</li>
 *   <li>anything → {@link #FREE}: {@link #clear}, when the QP flushes or resets [REL-051].</li>
 * </ul>
 * Any other move is a bug in the requester and throws {@link IllegalStateException} naming the
 * PSN, the current state and the attempted one. The counts change only in these methods, so at
 * every call boundary {@link #inFlight()}, {@link #lostCount()} and {@link #rnrWaitCount()} equal the
 * number of slots in {@link #IN_FLIGHT}, {@link #LOST} and {@link #RNR_WAIT}.
 *
 * <p>Struct-of-arrays of primitives so that nothing is allocated per packet; only an illegal
 * transition builds a message.
 */
final class Scoreboard {
    /** Not outstanding: never used, or resolved (its record kept for late answers). */
    static final byte FREE = 0;
    /** Transmitted, neither delivered nor declared lost. */
    static final byte IN_FLIGHT = 1;
    /** Received by the responder (or answered), not yet passed by the oldest unresolved PSN. */
    static final byte DELIVERED = 2;
    /** Declared lost, awaiting retransmission. */
    static final byte LOST = 3;
    /** Answered by NACK RNR, waiting out the RNR delay. */
    static final byte RNR_WAIT = 4;
    private static final String[] STATE_NAMES = {"FREE", "IN_FLIGHT", "DELIVERED", "LOST", "RNR_WAIT"};

    /** A request packet of a SEND or WRITE. */
    static final byte KIND_DATA = 0;
    /** A READ_RESPONSE slot reserved by a READ_REQUEST [OPS-007]; its first slot is the request's PSN. */
    static final byte KIND_READ = 1;
    /** An atomic request, answered by an ATOMIC_RESPONSE. */
    static final byte KIND_ATOMIC = 2;

    // The states each transition may start from, as bit sets (1 << state).
    private static final int FROM_SENT = bit(FREE) | bit(LOST);
    private static final int FROM_LOST = bit(IN_FLIGHT) | bit(RNR_WAIT);
    private static final int FROM_RNR_WAIT = bit(IN_FLIGHT) | bit(LOST);
    private static final int FROM_DELIVERED = bit(IN_FLIGHT) | bit(LOST) | bit(RNR_WAIT);
    private static final int FROM_FREE = bit(DELIVERED);
    private static final int FROM_ASSIGN = bit(FREE);
    private static final int FROM_WINDOW_NACK = bit(IN_FLIGHT);

    private final int mask;
    private final long[] wqe;
    private final int[] index;
    private final byte[] kind;
    private final byte[] state;
    private final long[] sentNs;
    /** The transmission limit waits for RETRY_TIMEOUT from the first transmission [REL-030]. */
    private final long[] firstSentNs;
    private final long[] txSeq;
    private final short[] path;
    private final int[] transmissions;
    /** Retransmissions caused by RNR, which are not losses and do not count towards the limit [REL-039]. */
    private final int[] rnrRetransmissions;
    /**
     * Transmissions answered by NACK TRIMMED (or trimmed READ responses), which do not count
     * towards the limit either: a trim proves that the path and the peer are alive [REL-059].
     */
    private final int[] trimmedTransmissions;
    /**
     * Whether the latest transmission carries the PSN and Transmit Timestamp of a KEEPALIVE sent in
     * the same clock tick: an ACK answering that KEEPALIVE has the same trigger and echo, so
     * neither proves the packet arrived [REL-017].
     */
    private final boolean[] probeTwin;
    /**
     * Whether the PSN was first sent as a tail probe past the window [REL-026]: it left because
     * the answers had stopped, so its round trip measures that silence, not the path [REL-020].
     */
    private final boolean[] sentAsProbe;
    private final EndpointCounter[] lossCause;
    /**
     * Whether the responder answered the latest transmission with NACK PSN_WINDOW, and the
     * Cumulative PSN it had then: such a packet stays in flight and is sent again only when a later
     * ACK moves the Cumulative PSN past that point, or by the timers [REL-061].
     */
    private final boolean[] windowNack;
    private final int[] windowNackCumulative;
    /**
     * When the requester took the PSN as received (an ACK, or a READ or atomic response, resolved
     * it): an ACK generated after that instant that still lacks the PSN contradicts it [REL-068].
     */
    private final long[] resolvedNs;

    private int inFlight;
    private int lostCount;
    private int rnrWaitCount;
    /** Slots with {@link #windowNack} set; while 0 the requester skips its scan on ACKs. */
    private int windowNacked;
    /** Outstanding slots sent more than once; while 0, transmit order is PSN order. */
    private int retransmittedOutstanding;

    /** @param capacity slots, a power of two (the receive window, EndpointConfig checks it) */
    Scoreboard(final int capacity) {
        if (capacity <= 0 || Integer.bitCount(capacity) != 1) {
            throw new IllegalArgumentException("scoreboard capacity must be a power of two, got " + capacity);
        }
        mask = capacity - 1;
        wqe = new long[capacity];
        index = new int[capacity];
        kind = new byte[capacity];
        state = new byte[capacity];
        sentNs = new long[capacity];
        firstSentNs = new long[capacity];
        txSeq = new long[capacity];
        path = new short[capacity];
        transmissions = new int[capacity];
        rnrRetransmissions = new int[capacity];
        trimmedTransmissions = new int[capacity];
        probeTwin = new boolean[capacity];
        sentAsProbe = new boolean[capacity];
        lossCause = new EndpointCounter[capacity];
        windowNack = new boolean[capacity];
        windowNackCumulative = new int[capacity];
        resolvedNs = new long[capacity];
    }

    private static int bit(final byte s) {
        return 1 << s;
    }

    /** @return e.g. "IN_FLIGHT" */
    static String stateName(final byte s) {
        return s >= 0 && s < STATE_NAMES.length ? STATE_NAMES[s] : "state " + s;
    }

    /** @return the slots, the most PSNs the requester may keep outstanding */
    int capacity() {
        return mask + 1;
    }

    // ------------------------------------------------------------------ transitions

    /**
     * Gives the free slot of {@code psn} to packet {@code packetIndex} of work request
     * {@code wqeSeq}, with no transmission yet. The other fields are left for {@link #sent}: the
     * requester may fail to send (no room in the sink) and assign the slot again.
     */
    void assign(final int psn, final long wqeSeq, final int packetIndex, final byte slotKind) {
        final int s = check(psn, FREE, FROM_ASSIGN, "assign");
        wqe[s] = wqeSeq;
        index[s] = packetIndex;
        kind[s] = slotKind;
        transmissions[s] = 0;
        rnrRetransmissions[s] = 0;
        trimmedTransmissions[s] = 0;
        sentAsProbe[s] = false;
    }

    /**
     * Records a transmission of {@code psn}: its first (from {@link #FREE}) or a retransmission
     * (from {@link #LOST}).
     */
    void sent(final int psn, final long nowNs, final long seq, final int pathId, final boolean keepaliveTwin) {
        final int s = check(psn, IN_FLIGHT, FROM_SENT, "sent");
        leave(s);
        state[s] = IN_FLIGHT;
        inFlight++;
        sentNs[s] = nowNs;
        probeTwin[s] = keepaliveTwin;
        if (transmissions[s] == 0) {
            firstSentNs[s] = nowNs;
        }
        txSeq[s] = seq;
        path[s] = (short) pathId;
        countTransmission(s);
    }

    /**
     * Records that the READ_REQUEST transmission of {@code requestPsn}, just recorded by
     * {@link #sent}, also (re-)requests the response slot {@code psn}: a slot is outstanding from the
     * moment its request leaves [REL-034], with that request's time, sequence and path.
     */
    void sentWith(final int psn, final int requestPsn) {
        final int s = check(psn, IN_FLIGHT, FROM_SENT, "sentWith");
        final int r = requestPsn & mask;
        leave(s);
        state[s] = IN_FLIGHT;
        inFlight++;
        sentNs[s] = sentNs[r];
        if (transmissions[s] == 0) {
            firstSentNs[s] = sentNs[r];
        }
        txSeq[s] = txSeq[r];
        path[s] = path[r];
        countTransmission(s);
    }

    /**
     * Declares {@code psn} lost for {@code cause}, the {@code RETRANSMITS_*} counter its
     * retransmission is counted under.
     */
    void lost(final int psn, final EndpointCounter cause) {
        final int s = check(psn, LOST, FROM_LOST, "lost");
        clearWindowNack(s);
        leave(s);
        state[s] = LOST;
        lostCount++;
        lossCause[s] = cause;
    }

    /**
     * Declares {@code psn} lost, as {@link #lost}; for a READ, with it every later response slot
     * before {@code end} that the same request transmission covers and that is still in flight, so
     * that the request goes out again whole (one re-request, [REL-046]) rather than one segment per
     * timer expiry, while the responder holds everything behind the rest of the range.
     *
     * @param end the first PSN not sent yet
     */
    void lostWithRequest(final int psn, final EndpointCounter cause, final int end) {
        lost(psn, cause);
        if (kind(psn) != KIND_READ) {
            return;
        }
        for (int p = psn + 1; p != end; p++) {
            if (kind(p) != KIND_READ || wqe(p) != wqe(psn) || txSeq(p) != txSeq(psn) || state(p) != IN_FLIGHT) {
                break;
            }
            lost(p, cause);
        }
    }

    /** Holds {@code psn} for the RNR delay: not a loss, nor in flight [REL-039]. */
    void heldForRnr(final int psn) {
        final int s = check(psn, RNR_WAIT, FROM_RNR_WAIT, "heldForRnr");
        leave(s);
        state[s] = RNR_WAIT;
        rnrWaitCount++;
    }

    /** Records that {@code psn} reached the responder (or was answered), at {@code nowNs}. */
    void delivered(final int psn, final long nowNs) {
        final int s = check(psn, DELIVERED, FROM_DELIVERED, "delivered");
        clearWindowNack(s);
        leave(s);
        state[s] = DELIVERED;
        resolvedNs[s] = nowNs;
        if (transmissions[s] > 1) {
            retransmittedOutstanding--;
        }
    }

    /** Frees the delivered slot of {@code psn} once the oldest unresolved PSN has passed it; its record stays. */
    void free(final int psn) {
        final int s = check(psn, FREE, FROM_FREE, "free");
        state[s] = FREE;
    }

    /** Frees every slot: the QP flushed or was reset, nothing is outstanding any more. */
    void clear() {
        java.util.Arrays.fill(state, FREE);
        java.util.Arrays.fill(windowNack, false);
        inFlight = 0;
        lostCount = 0;
        rnrWaitCount = 0;
        windowNacked = 0;
        retransmittedOutstanding = 0;
    }

    /** Counts a transmission of {@code psn} that was answered by a trim [REL-059]. */
    void trimmed(final int psn) {
        trimmedTransmissions[psn & mask]++;
    }

    /** Counts a retransmission of {@code psn} caused by RNR [REL-039]. */
    void rnrRetransmitted(final int psn) {
        rnrRetransmissions[psn & mask]++;
    }

    /**
     * Records NACK PSN_WINDOW for the in-flight {@code psn}, answered while the responder's
     * Cumulative PSN was {@code cumulative}; the packet stays in flight. Further PSN_WINDOW NACKs
     * for it change nothing until it is delivered or declared lost [REL-061].
     */
    void windowNacked(final int psn, final int cumulative) {
        final int s = check(psn, IN_FLIGHT, FROM_WINDOW_NACK, "windowNacked");
        if (!windowNack[s]) {
            windowNack[s] = true;
            windowNackCumulative[s] = cumulative;
            windowNacked++;
        }
    }

    /** @return the slot of {@code psn}, after checking that {@code name} may move it to {@code to} */
    private int check(final int psn, final byte to, final int legalFrom, final String name) {
        final int s = psn & mask;
        final byte from = state[s];
        if ((legalFrom & bit(from)) == 0) {
            throw new IllegalStateException(describeIllegal(psn, from, to, legalFrom, name));
        }
        return s;
    }

    /**
     * @return e.g. "illegal scoreboard transition at PSN 7: DELIVERED -> LOST (lost); lost needs
     *     IN_FLIGHT or RNR_WAIT"
     */
    private static String describeIllegal(final int psn, final byte from, final byte to, final int legalFrom,
                                          final String name) {
        final StringBuilder sb = new StringBuilder(120).append("illegal scoreboard transition at PSN ")
            .append(Integer.toUnsignedString(psn)).append(": ").append(stateName(from)).append(" -> ")
            .append(stateName(to)).append(" (").append(name).append("); ").append(name).append(" needs ");
        int left = Integer.bitCount(legalFrom);
        for (byte st = 0; st < STATE_NAMES.length; st++) {
            if ((legalFrom & bit(st)) != 0) {
                sb.append(stateName(st));
                left--;
                sb.append(left == 0 ? "" : left == 1 ? " or " : ", ");
            }
        }
        return sb.toString();
    }

    /** Takes slot {@code s} out of the count of its current state: the one place counts go down. */
    private void leave(final int s) {
        switch (state[s]) {
            case IN_FLIGHT -> inFlight--;
            case LOST -> lostCount--;
            case RNR_WAIT -> rnrWaitCount--;
            default -> {
                // FREE and DELIVERED are not counted.
            }
        }
    }

    private void countTransmission(final int s) {
        if (++transmissions[s] == 2) {
            retransmittedOutstanding++;
        }
    }

    private void clearWindowNack(final int s) {
        if (windowNack[s]) {
            windowNack[s] = false;
            windowNacked--;
        }
    }

    // ------------------------------------------------------------------ counts

    /** @return slots in {@link #IN_FLIGHT} */
    int inFlight() {
        return inFlight;
    }

    /** @return slots in {@link #LOST} */
    int lostCount() {
        return lostCount;
    }

    /** @return slots in {@link #RNR_WAIT} */
    int rnrWaitCount() {
        return rnrWaitCount;
    }

    /** @return slots a PSN_WINDOW NACK holds [REL-061] */
    int windowNacked() {
        return windowNacked;
    }

    /** @return slots not yet delivered that were sent more than once */
    int retransmittedOutstanding() {
        return retransmittedOutstanding;
    }

    // ------------------------------------------------------------------ per-PSN record

    byte state(final int psn) {
        return state[psn & mask];
    }

    /**
     * @return when {@code psn} was last resolved ({@link #delivered}); meaningful while its slot
     *     holds its record (within one window of the next PSN) and it has been resolved
     */
    long resolvedNs(final int psn) {
        return resolvedNs[psn & mask];
    }

    /** @return whether {@code psn} is in flight, lost or waiting RNR */
    boolean isOutstanding(final int psn) {
        final byte s = state[psn & mask];
        return s == IN_FLIGHT || s == LOST || s == RNR_WAIT;
    }

    /** @return the send-queue sequence number of the work request the slot belongs to */
    long wqe(final int psn) {
        return wqe[psn & mask];
    }

    /** @return the packet's index within its work request */
    int index(final int psn) {
        return index[psn & mask];
    }

    byte kind(final int psn) {
        return kind[psn & mask];
    }

    /** @return the time of the latest transmission (its low 32 bits are its Transmit Timestamp) */
    long sentNs(final int psn) {
        return sentNs[psn & mask];
    }

    long firstSentNs(final int psn) {
        return firstSentNs[psn & mask];
    }

    /** @return the transmit sequence of the latest transmission */
    long txSeq(final int psn) {
        return txSeq[psn & mask];
    }

    /** @return the path of the latest transmission */
    short path(final int psn) {
        return path[psn & mask];
    }

    int transmissions(final int psn) {
        return transmissions[psn & mask];
    }

    int rnrRetransmissions(final int psn) {
        return rnrRetransmissions[psn & mask];
    }

    int trimmedTransmissions(final int psn) {
        return trimmedTransmissions[psn & mask];
    }

    boolean isProbeTwin(final int psn) {
        return probeTwin[psn & mask];
    }

    /** Records that {@code psn}, just sent for the first time, was a tail probe [REL-026]. */
    void sentAsProbe(final int psn) {
        sentAsProbe[psn & mask] = true;
    }

    /** @return whether {@code psn} was first sent as a tail probe: its ACK gives no RTT sample [REL-020] */
    boolean isSentAsProbe(final int psn) {
        return sentAsProbe[psn & mask];
    }

    EndpointCounter lossCause(final int psn) {
        return lossCause[psn & mask];
    }

    boolean isWindowNacked(final int psn) {
        return windowNack[psn & mask];
    }

    int windowNackCumulative(final int psn) {
        return windowNackCumulative[psn & mask];
    }
}
