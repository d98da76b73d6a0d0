// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.verbs;

import java.util.Arrays;

import org.metaroce.core.congestion.CongestionControlAlgorithm;
import org.metaroce.core.wire.ConnectHeader;

/**
 * A bag of queue-pair attributes plus a mask of which ones are set, in the role of ibv_qp_attr
 * with its attribute mask. Each setter validates at once and names the attribute and its
 * allowed range, so a bad value fails where it was written rather than deep inside the engine.
 * Reading an attribute that was not set throws, so an engine bug cannot silently use a zero.
 *
 * <p>Setup-time object: it may throw and allocate. Reusable through {@link #clear()}.
 */
public final class QpAttributes {
    /** Largest send or receive queue depth. */
    public static final int MAX_QUEUE_DEPTH = 1 << 16;
    /** Largest number of scatter/gather entries per work request. */
    public static final int MAX_SGE = 64;
    /** Largest QP number (24 bits, [WIRE-010]); 0 is the connection manager. */
    public static final int MAX_QPN = (1 << 24) - 1;
    /** Largest number of paths (entropy values) per QP. */
    public static final int MAX_PATHS = 255;
    /** {@link #rnrRetry(int)} value that retries forever, as in verbs. */
    public static final int RNR_RETRY_INFINITE = 7;
    /** Largest initial congestion window in packets. */
    public static final int MAX_CONGESTION_WINDOW = 1 << 20;

    private static final int[] NO_PATHS = new int[0];

    private int mask;
    private int port;
    private int accessFlags;
    private int pathMtu;
    private int destQpn;
    private int rqPsn;
    private int sqPsn;
    private int retryCount;
    private long retryTimeoutNs;
    private int rnrRetry;
    private long timeoutNs;
    private long minRnrTimerNs;
    private int maxRdAtomic;
    private int maxDestRdAtomic;
    private int[] paths = NO_PATHS;
    private int sendQueueDepth;
    private int recvQueueDepth;
    private int maxSendSge;
    private int maxRecvSge;
    private int congestionWindowPackets;
    private int remotePeer;
    private int capabilities;
    private CongestionControlAlgorithm ccAlgorithm;

    /**
     * @return {@link QpAttributeMask} bits of the attributes that are set
     */
    public int mask() {
        return mask;
    }

    /**
     * @param attributeBits one or more {@link QpAttributeMask} bits
     * @return whether all of them are set
     */
    public boolean isSet(final int attributeBits) {
        return (mask & attributeBits) == attributeBits;
    }

    /**
     * Forgets every attribute.
     *
     * @return this
     */
    public QpAttributes clear() {
        mask = 0;
        port = 0;
        accessFlags = 0;
        pathMtu = 0;
        destQpn = 0;
        rqPsn = 0;
        sqPsn = 0;
        retryCount = 0;
        retryTimeoutNs = 0;
        rnrRetry = 0;
        timeoutNs = 0;
        minRnrTimerNs = 0;
        maxRdAtomic = 0;
        maxDestRdAtomic = 0;
        paths = NO_PATHS;
        sendQueueDepth = 0;
        recvQueueDepth = 0;
        maxSendSge = 0;
        maxRecvSge = 0;
        congestionWindowPackets = 0;
        remotePeer = 0;
        capabilities = 0;
        ccAlgorithm = null;
        return this;
    }

    /**
     * Checks that the attributes needed for a state transition are present.
     *
     * @param from current state
     * @param to requested state
     * @return null if the move is legal and every required attribute is set; otherwise a
     *     message naming the illegal move or the missing attributes
     */
    public String validateFor(final QpState from, final QpState to) {
        final String illegal = QpStateMachine.describeIllegal(from, to);
        if (illegal != null) {
            return illegal;
        }
        final int required = QpStateMachine.requiredAttributes(from, to);
        final int missing = required & ~mask;
        if (missing != 0) {
            return "QP state transition " + from + " -> " + to + " is missing required attributes: "
                + QpAttributeMask.toString(missing);
        }
        final int allowed = required | QpStateMachine.optionalAttributes(from, to);
        final int extra = mask & ~allowed;
        if (extra != 0) {
            // [QP-005]: an attribute the move does not take is an error, not silently ignored.
            return "QP state transition " + from + " -> " + to + " does not take attributes: "
                + QpAttributeMask.toString(extra) + " (it takes "
                + (allowed == 0 ? "none" : QpAttributeMask.toString(allowed)) + ")";
        }
        return null;
    }

    /**
     * @param port device port the QP is bound to, 1..255 (as ibv port_num; 1 for an endpoint
     *     with a single socket)
     * @return this
     */
    public QpAttributes port(final int port) {
        this.port = checkRange("port", port, 1, 255);
        mask |= QpAttributeMask.PORT;
        return this;
    }

    /**
     * @return device port
     */
    public int port() {
        require(QpAttributeMask.PORT);
        return port;
    }

    /**
     * @param accessFlags remote operations this QP serves: any combination of
     *     {@link AccessFlags} bits (REMOTE_WRITE, REMOTE_READ, REMOTE_ATOMIC; LOCAL_WRITE is
     *     accepted and has no effect on a QP)
     * @return this
     */
    public QpAttributes accessFlags(final int accessFlags) {
        try {
            AccessFlags.requireKnown(accessFlags);
        } catch (final IllegalArgumentException ex) {
            throw new IllegalArgumentException("accessFlags: " + ex.getMessage(), ex);
        }
        this.accessFlags = accessFlags;
        mask |= QpAttributeMask.ACCESS_FLAGS;
        return this;
    }

    /**
     * @return remote operations served
     */
    public int accessFlags() {
        require(QpAttributeMask.ACCESS_FLAGS);
        return accessFlags;
    }

    /**
     * @param pathMtu largest payload per packet in bytes: 256, 512, 1024, 2048, 4096 or 8192
     * @return this
     */
    public QpAttributes pathMtu(final int pathMtu) {
        if (pathMtu < 256 || pathMtu > 8192 || Integer.bitCount(pathMtu) != 1) {
            throw new IllegalArgumentException(
                "pathMtu must be one of 256, 512, 1024, 2048, 4096, 8192, was " + pathMtu);
        }
        this.pathMtu = pathMtu;
        mask |= QpAttributeMask.PATH_MTU;
        return this;
    }

    /**
     * @return path MTU in bytes
     */
    public int pathMtu() {
        require(QpAttributeMask.PATH_MTU);
        return pathMtu;
    }

    /**
     * @param remotePeer the driver's identifier of the peer's address (a Netty driver maps it to a
     *     socket address, the simulator to a host); any non-negative value
     * @return this
     */
    public QpAttributes remotePeer(final int remotePeer) {
        this.remotePeer = checkRange("remotePeer", remotePeer, 0, Integer.MAX_VALUE);
        mask |= QpAttributeMask.REMOTE_PEER;
        return this;
    }

    /**
     * @return the driver's identifier of the peer's address
     */
    public int remotePeer() {
        require(QpAttributeMask.REMOTE_PEER);
        return remotePeer;
    }

    /**
     * @param destQpn the peer's QP number, 1..2^24-1
     * @return this
     */
    public QpAttributes destQpn(final int destQpn) {
        this.destQpn = checkRange("destQpn", destQpn, 1, MAX_QPN);
        mask |= QpAttributeMask.DEST_QPN;
        return this;
    }

    /**
     * @return the peer's QP number
     */
    public int destQpn() {
        require(QpAttributeMask.DEST_QPN);
        return destQpn;
    }

    /**
     * @param rqPsn first PSN the responder expects; any 32-bit value (PSNs are modulo 2^32)
     * @return this
     */
    public QpAttributes rqPsn(final int rqPsn) {
        this.rqPsn = rqPsn;
        mask |= QpAttributeMask.RQ_PSN;
        return this;
    }

    /**
     * @return first expected PSN
     */
    public int rqPsn() {
        require(QpAttributeMask.RQ_PSN);
        return rqPsn;
    }

    /**
     * @param sqPsn first PSN the requester sends; any 32-bit value (PSNs are modulo 2^32)
     * @return this
     */
    public QpAttributes sqPsn(final int sqPsn) {
        this.sqPsn = sqPsn;
        mask |= QpAttributeMask.SQ_PSN;
        return this;
    }

    /**
     * @return first sent PSN
     */
    public int sqPsn() {
        require(QpAttributeMask.SQ_PSN);
        return sqPsn;
    }

    /**
     * @param retryCount retransmissions of an unacknowledged packet before RETRY_EXC_ERR, 0..7
     * @return this
     */
    public QpAttributes retryCount(final int retryCount) {
        this.retryCount = checkRange("retryCount", retryCount, 0, 7);
        mask |= QpAttributeMask.RETRY_CNT;
        return this;
    }

    /**
     * @return transport retry count
     */
    public int retryCount() {
        require(QpAttributeMask.RETRY_CNT);
        return retryCount;
    }

    /**
     * @param ns RETRY_TIMEOUT: how long retransmissions go on without progress before the
     *     connection ends with RETRY_EXC_ERR, however many RETRY_CNT allows [REL-060]; 0 = RETRY_CNT
     *     and the transmission limit alone decide, as in verbs. Values of a few seconds or more let
     *     a queue pair ride out a descheduled peer (a JVM pause, a busy host)
     * @return this
     */
    public QpAttributes retryTimeoutNs(final long ns) {
        if (ns < 0) {
            throw new IllegalArgumentException("retryTimeoutNs must be >= 0 (0 = no time budget), got " + ns);
        }
        this.retryTimeoutNs = ns;
        mask |= QpAttributeMask.RETRY_TIMEOUT;
        return this;
    }

    /**
     * @return RETRY_TIMEOUT in nanoseconds (0 = none)
     */
    public long retryTimeoutNs() {
        require(QpAttributeMask.RETRY_TIMEOUT);
        return retryTimeoutNs;
    }

    /**
     * @param rnrRetry retries after receiver-not-ready before RNR_RETRY_EXC_ERR, 0..7, where
     *     {@link #RNR_RETRY_INFINITE} (7) retries forever as in verbs
     * @return this
     */
    public QpAttributes rnrRetry(final int rnrRetry) {
        this.rnrRetry = checkRange("rnrRetry", rnrRetry, 0, RNR_RETRY_INFINITE);
        mask |= QpAttributeMask.RNR_RETRY;
        return this;
    }

    /**
     * @return RNR retry count (7 = infinite)
     */
    public int rnrRetry() {
        require(QpAttributeMask.RNR_RETRY);
        return rnrRetry;
    }

    /**
     * @param timeoutNs retransmission timeout in nanoseconds, greater than 0 (verbs encodes
     *     this as 4.096 µs × 2^timeout; we take the time directly)
     * @return this
     */
    public QpAttributes timeoutNs(final long timeoutNs) {
        this.timeoutNs = checkPositive("timeoutNs", timeoutNs);
        mask |= QpAttributeMask.TIMEOUT;
        return this;
    }

    /**
     * @return retransmission timeout in nanoseconds
     */
    public long timeoutNs() {
        require(QpAttributeMask.TIMEOUT);
        return timeoutNs;
    }

    /**
     * @param minRnrTimerNs delay the responder asks a requester to wait after an RNR NAK, in
     *     nanoseconds, greater than 0
     * @return this
     */
    public QpAttributes minRnrTimerNs(final long minRnrTimerNs) {
        this.minRnrTimerNs = checkPositive("minRnrTimerNs", minRnrTimerNs);
        mask |= QpAttributeMask.MIN_RNR_TIMER;
        return this;
    }

    /**
     * @return RNR NAK delay in nanoseconds
     */
    public long minRnrTimerNs() {
        require(QpAttributeMask.MIN_RNR_TIMER);
        return minRnrTimerNs;
    }

    /**
     * @param maxRdAtomic READ/atomic requests this QP may have outstanding as requester, 1..255
     * @return this
     */
    public QpAttributes maxRdAtomic(final int maxRdAtomic) {
        this.maxRdAtomic = checkRange("maxRdAtomic", maxRdAtomic, 1, 255);
        mask |= QpAttributeMask.MAX_QP_RD_ATOMIC;
        return this;
    }

    /**
     * @return outstanding READ/atomic limit as requester
     */
    public int maxRdAtomic() {
        require(QpAttributeMask.MAX_QP_RD_ATOMIC);
        return maxRdAtomic;
    }

    /**
     * @param maxDestRdAtomic READ/atomic requests this QP serves concurrently as responder, 1..255
     * @return this
     */
    public QpAttributes maxDestRdAtomic(final int maxDestRdAtomic) {
        this.maxDestRdAtomic = checkRange("maxDestRdAtomic", maxDestRdAtomic, 1, 255);
        mask |= QpAttributeMask.MAX_DEST_RD_ATOMIC;
        return this;
    }

    /**
     * @return READ/atomic limit as responder
     */
    public int maxDestRdAtomic() {
        require(QpAttributeMask.MAX_DEST_RD_ATOMIC);
        return maxDestRdAtomic;
    }

    /**
     * Sets the paths packets are sprayed over; index {@code i} of this array is the Path ID
     * carried on the wire.
     *
     * @param entropies UDP source ports 1..65535, 1..{@link #MAX_PATHS} of them; copied
     * @return this
     */
    public QpAttributes paths(final int[] entropies) {
        if (entropies == null || entropies.length < 1 || entropies.length > MAX_PATHS) {
            throw new IllegalArgumentException("paths must hold 1.." + MAX_PATHS
                + " entropy values, was " + (entropies == null ? "null" : entropies.length));
        }
        for (int i = 0; i < entropies.length; i++) {
            if (entropies[i] < 1 || entropies[i] > 65535) {
                throw new IllegalArgumentException("paths[" + i
                    + "] must be a UDP source port in 1..65535, was " + entropies[i]);
            }
        }
        this.paths = entropies.clone();
        mask |= QpAttributeMask.PATHS;
        return this;
    }

    /**
     * @return a copy of the entropy values
     */
    public int[] paths() {
        require(QpAttributeMask.PATHS);
        return paths.clone();
    }

    /**
     * @return number of paths
     */
    public int pathCount() {
        require(QpAttributeMask.PATHS);
        return paths.length;
    }

    /**
     * @param pathId index of a path
     * @return its entropy value (UDP source port)
     */
    public int path(final int pathId) {
        require(QpAttributeMask.PATHS);
        return paths[pathId];
    }

    /**
     * @param sendQueueDepth send work requests the QP holds, 1..{@link #MAX_QUEUE_DEPTH}
     *     (ibv_qp_cap.max_send_wr)
     * @return this
     */
    public QpAttributes sendQueueDepth(final int sendQueueDepth) {
        this.sendQueueDepth = checkRange("sendQueueDepth", sendQueueDepth, 1, MAX_QUEUE_DEPTH);
        mask |= QpAttributeMask.SEND_QUEUE_DEPTH;
        return this;
    }

    /**
     * @return send queue depth
     */
    public int sendQueueDepth() {
        require(QpAttributeMask.SEND_QUEUE_DEPTH);
        return sendQueueDepth;
    }

    /**
     * @param recvQueueDepth receive work requests the QP holds, 1..{@link #MAX_QUEUE_DEPTH}
     *     (ibv_qp_cap.max_recv_wr)
     * @return this
     */
    public QpAttributes recvQueueDepth(final int recvQueueDepth) {
        this.recvQueueDepth = checkRange("recvQueueDepth", recvQueueDepth, 1, MAX_QUEUE_DEPTH);
        mask |= QpAttributeMask.RECV_QUEUE_DEPTH;
        return this;
    }

    /**
     * @return receive queue depth
     */
    public int recvQueueDepth() {
        require(QpAttributeMask.RECV_QUEUE_DEPTH);
        return recvQueueDepth;
    }

    /**
     * @param maxSendSge scatter/gather entries per send request, 1..{@link #MAX_SGE}
     * @return this
     */
    public QpAttributes maxSendSge(final int maxSendSge) {
        this.maxSendSge = checkRange("maxSendSge", maxSendSge, 1, MAX_SGE);
        mask |= QpAttributeMask.MAX_SEND_SGE;
        return this;
    }

    /**
     * @return SGE limit for sends
     */
    public int maxSendSge() {
        require(QpAttributeMask.MAX_SEND_SGE);
        return maxSendSge;
    }

    /**
     * @param maxRecvSge scatter/gather entries per receive request, 1..{@link #MAX_SGE}
     * @return this
     */
    public QpAttributes maxRecvSge(final int maxRecvSge) {
        this.maxRecvSge = checkRange("maxRecvSge", maxRecvSge, 1, MAX_SGE);
        mask |= QpAttributeMask.MAX_RECV_SGE;
        return this;
    }

    /**
     * @return SGE limit for receives
     */
    public int maxRecvSge() {
        require(QpAttributeMask.MAX_RECV_SGE);
        return maxRecvSge;
    }

    /**
     * @param congestionWindowPackets initial congestion window, 1..{@link #MAX_CONGESTION_WINDOW}
     *     packets
     * @return this
     */
    public QpAttributes congestionWindowPackets(final int congestionWindowPackets) {
        this.congestionWindowPackets =
            checkRange("congestionWindowPackets", congestionWindowPackets, 1, MAX_CONGESTION_WINDOW);
        mask |= QpAttributeMask.CONGESTION_WINDOW;
        return this;
    }

    /**
     * @return initial congestion window in packets
     */
    public int congestionWindowPackets() {
        require(QpAttributeMask.CONGESTION_WINDOW);
        return congestionWindowPackets;
    }

    /**
     * @param flags negotiated Capability Flags (section 9): any subset of
     *     {@link ConnectHeader#CAP_RECEIVER_CREDIT}, {@link ConnectHeader#CAP_GO_BACK_N},
     *     {@link ConnectHeader#CAP_ECN}, {@link ConnectHeader#CAP_SENDER_COUNT},
     *     {@link ConnectHeader#CAP_ATTACHED_ACK} and {@link ConnectHeader#CAP_DEFERRED_ACK} (0x003f) [QP-003]
     * @return this
     */
    public QpAttributes capabilities(final int flags) {
        final int known = ConnectHeader.CAP_RECEIVER_CREDIT | ConnectHeader.CAP_GO_BACK_N | ConnectHeader.CAP_ECN
            | ConnectHeader.CAP_SENDER_COUNT | ConnectHeader.CAP_ATTACHED_ACK | ConnectHeader.CAP_DEFERRED_ACK;
        if ((flags & ~known) != 0) {
            throw new IllegalArgumentException(String.format(
                "capabilities must be a subset of 0x%04x (RECEIVER_CREDIT, GO_BACK_N, ECN, SENDER_COUNT, ATTACHED_ACK, "
                    + "DEFERRED_ACK), was 0x%04x",
                known, flags));
        }
        this.capabilities = flags;
        mask |= QpAttributeMask.CAPABILITIES;
        return this;
    }

    /**
     * @return negotiated Capability Flags
     */
    public int capabilities() {
        require(QpAttributeMask.CAPABILITIES);
        return capabilities;
    }

    /**
     * @param algorithm congestion-control algorithm the requester runs (section 8)
     * @return this
     */
    public QpAttributes ccAlgorithm(final CongestionControlAlgorithm algorithm) {
        if (algorithm == null) {
            throw new IllegalArgumentException("ccAlgorithm must be one of DEFAULT, RECEIVER_CREDIT, DCQCN, FIXED, was null");
        }
        this.ccAlgorithm = algorithm;
        mask |= QpAttributeMask.CC_ALGORITHM;
        return this;
    }

    /**
     * @return congestion-control algorithm
     */
    public CongestionControlAlgorithm ccAlgorithm() {
        require(QpAttributeMask.CC_ALGORITHM);
        return ccAlgorithm;
    }

    private void require(final int bit) {
        if ((mask & bit) == 0) {
            throw new IllegalStateException("QP attribute " + QpAttributeMask.toString(bit) + " is not set");
        }
    }

    private static int checkRange(final String name, final int value, final int min, final int max) {
        if (value < min || value > max) {
            throw new IllegalArgumentException(name + " must be in " + min + ".." + max + ", was " + value);
        }
        return value;
    }

    private static long checkPositive(final String name, final long value) {
        if (value <= 0) {
            throw new IllegalArgumentException(name + " must be greater than 0, was " + value);
        }
        return value;
    }

    @Override
    public String toString() {
        final StringBuilder sb = new StringBuilder(256).append("QpAttributes{");
        appendIfSet(sb, QpAttributeMask.PORT, "port", port);
        if ((mask & QpAttributeMask.ACCESS_FLAGS) != 0) {
            sep(sb).append("accessFlags=").append(AccessFlags.toString(accessFlags));
        }
        appendIfSet(sb, QpAttributeMask.PATH_MTU, "pathMtu", pathMtu);
        appendIfSet(sb, QpAttributeMask.DEST_QPN, "destQpn", destQpn);
        appendIfSet(sb, QpAttributeMask.RQ_PSN, "rqPsn", Integer.toUnsignedLong(rqPsn));
        appendIfSet(sb, QpAttributeMask.SQ_PSN, "sqPsn", Integer.toUnsignedLong(sqPsn));
        appendIfSet(sb, QpAttributeMask.RETRY_CNT, "retryCount", retryCount);
        appendIfSet(sb, QpAttributeMask.RETRY_TIMEOUT, "retryTimeoutNs", retryTimeoutNs);
        appendIfSet(sb, QpAttributeMask.RNR_RETRY, "rnrRetry", rnrRetry);
        appendIfSet(sb, QpAttributeMask.TIMEOUT, "timeoutNs", timeoutNs);
        appendIfSet(sb, QpAttributeMask.MIN_RNR_TIMER, "minRnrTimerNs", minRnrTimerNs);
        appendIfSet(sb, QpAttributeMask.MAX_QP_RD_ATOMIC, "maxRdAtomic", maxRdAtomic);
        appendIfSet(sb, QpAttributeMask.MAX_DEST_RD_ATOMIC, "maxDestRdAtomic", maxDestRdAtomic);
        if ((mask & QpAttributeMask.PATHS) != 0) {
            sep(sb).append("paths=").append(Arrays.toString(paths));
        }
        appendIfSet(sb, QpAttributeMask.SEND_QUEUE_DEPTH, "sendQueueDepth", sendQueueDepth);
        appendIfSet(sb, QpAttributeMask.RECV_QUEUE_DEPTH, "recvQueueDepth", recvQueueDepth);
        appendIfSet(sb, QpAttributeMask.MAX_SEND_SGE, "maxSendSge", maxSendSge);
        appendIfSet(sb, QpAttributeMask.MAX_RECV_SGE, "maxRecvSge", maxRecvSge);
        appendIfSet(sb, QpAttributeMask.CONGESTION_WINDOW, "congestionWindowPackets", congestionWindowPackets);
        if ((mask & QpAttributeMask.CAPABILITIES) != 0) {
            sep(sb).append("capabilities=0x").append(Integer.toHexString(capabilities));
        }
        if ((mask & QpAttributeMask.CC_ALGORITHM) != 0) {
            sep(sb).append("ccAlgorithm=").append(ccAlgorithm);
        }
        return sb.append('}').toString();
    }

    private void appendIfSet(final StringBuilder sb, final int bit, final String name, final long value) {
        if ((mask & bit) != 0) {
            sep(sb).append(name).append('=').append(value);
        }
    }

    private static StringBuilder sep(final StringBuilder sb) {
        if (sb.charAt(sb.length() - 1) != '{') {
            sb.append(", ");
        }
        return sb;
    }
}
