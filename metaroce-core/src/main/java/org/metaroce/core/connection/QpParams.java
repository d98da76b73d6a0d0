// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.connection;

import java.util.Arrays;

import org.metaroce.core.congestion.CongestionControlAlgorithm;
import org.metaroce.core.engine.QueuePairCapabilities;
import org.metaroce.core.verbs.AccessFlags;
import org.metaroce.core.verbs.CompletionQueue;
import org.metaroce.core.verbs.ProtectionDomain;
import org.metaroce.core.verbs.QpAttributes;
import org.metaroce.core.wire.ConnectHeader;
import org.metaroce.core.wire.WireConstants;

/**
 * What one side brings to a connection: the resources of the queue pair the connection manager
 * creates for it, this side's proposal for negotiation [CM-019], and the local-only queue-pair
 * attributes the connection manager applies when it moves the QP to RTR and RTS (4.4 row 13).
 * Setters validate at once and name what they reject. Setup-time objects.
 *
 * @param <T> the concrete parameter class, so setters chain
 */
public abstract class QpParams<T extends QpParams<T>> {
    /** Default Initiator Depth proposal (MAX_QP_RD_ATOMIC, table 4.3). */
    public static final int DEFAULT_INITIATOR_DEPTH = 16;
    /** Capability flags this implementation can honour; others must not be advertised [GEN-001]. */
    public static final int KNOWN_CAPABILITIES =
        ConnectHeader.CAP_RECEIVER_CREDIT | ConnectHeader.CAP_GO_BACK_N | ConnectHeader.CAP_ECN
            | ConnectHeader.CAP_SENDER_COUNT | ConnectHeader.CAP_ATTACHED_ACK | ConnectHeader.CAP_DEFERRED_ACK;

    ProtectionDomain pd;
    CompletionQueue sendCq;
    CompletionQueue recvCq;
    QueuePairCapabilities caps = QueuePairCapabilities.defaults();
    int accessFlags;
    int pathMtu = 1024;
    int[] paths;
    /** Capability Flags offered, or -1 for the endpoint's default (see {@link #offeredCapabilities}). */
    int capabilities = -1;
    int initiatorDepth = DEFAULT_INITIATOR_DEPTH;
    int responderResources = -1;
    long timeoutNs = 1_000_000;
    int retryCount = 7;
    /** RETRY_TIMEOUT for the QP, or -1 for the endpoint's [REL-060]. */
    long retryTimeoutNs = -1;
    int rnrRetry = QpAttributes.RNR_RETRY_INFINITE;
    long minRnrTimerNs = 100_000;
    CongestionControlAlgorithm ccAlgorithm;
    int congestionWindowPackets;
    CmEventHandler handler;
    Object context;

    QpParams() {
    }

    @SuppressWarnings("unchecked")
    private T self() {
        return (T) this;
    }

    /**
     * Resources of the queue pair the connection manager creates (verbs ibv_create_qp).
     *
     * @param pd protection domain of the memory the QP uses
     * @param sendCq completion queue for sends
     * @param recvCq completion queue for receives
     * @param caps queue sizes; {@link QueuePairCapabilities#maxDestRdAtomic()} bounds the Responder
     *     Resources this side proposes
     * @return this
     */
    public T resources(final ProtectionDomain pd, final CompletionQueue sendCq, final CompletionQueue recvCq,
                       final QueuePairCapabilities caps) {
        if (pd == null || sendCq == null || recvCq == null || caps == null) {
            throw new IllegalArgumentException("pd, sendCq, recvCq and caps are all required");
        }
        this.pd = pd;
        this.sendCq = sendCq;
        this.recvCq = recvCq;
        this.caps = caps;
        return self();
    }

    /**
     * @param flags remote operations the QP serves ({@link AccessFlags}), default none
     * @return this
     */
    public T accessFlags(final int flags) {
        AccessFlags.requireKnown(flags);
        this.accessFlags = flags;
        return self();
    }

    /**
     * @param mtu the path MTU this side proposes or accepts: 256, 512, 1024, 2048, 4096 or 8192,
     *     default 1024; it must respect the link MTU [ENC-020], which is the caller's configuration
     * @return this
     */
    public T pathMtu(final int mtu) {
        if (!WireConstants.isValidPathMtu(mtu)) {
            throw new IllegalArgumentException("pathMtu must be one of 256, 512, 1024, 2048, 4096, 8192, got " + mtu);
        }
        this.pathMtu = mtu;
        return self();
    }

    /**
     * @param entropies this side's path set: distinct non-zero UDP source ports, 1..255 of them
     *     [ENC-008]; their number is the Path Count proposed, and the first (negotiated Path Count)
     *     of them become the QP's PATHS
     * @return this
     */
    public T paths(final int... entropies) {
        if (entropies == null || entropies.length < 1 || entropies.length > QpAttributes.MAX_PATHS) {
            throw new IllegalArgumentException("paths must hold 1.." + QpAttributes.MAX_PATHS + " entropy values");
        }
        for (int i = 0; i < entropies.length; i++) {
            if (entropies[i] < 1 || entropies[i] > 65535) {
                throw new IllegalArgumentException("paths[" + i + "] must be a UDP port in 1..65535, got "
                    + entropies[i]);
            }
            for (int j = 0; j < i; j++) {
                if (entropies[j] == entropies[i]) {
                    throw new IllegalArgumentException("paths must be distinct [ENC-008]: " + entropies[i]
                        + " repeats");
                }
            }
        }
        this.paths = entropies.clone();
        return self();
    }

    /**
     * @param flags Capability Flags this side supports (0x0001 RECEIVER_CREDIT, 0x0002 GO_BACK_N,
     *     0x0004 ECN, 0x0008 SENDER_COUNT, 0x0010 ATTACHED_ACK); the connection uses the intersection
     *     [CM-019], which the connection manager sets as the QP's CAPABILITIES attribute at RTR.
     *     Default: ECN when the endpoint's datagram layer reads the IP ECN field of received datagrams
     *     ({@code EndpointConfig.datagramEcn()}, which the driver sets [ENC-016], [CC-034]), and
     *     ATTACHED_ACK unless {@code EndpointConfig.attachedAck(false)} [REL-071]. Offer ECN only when
     *     it does.
     * @return this
     */
    public T capabilities(final int flags) {
        if ((flags & ~KNOWN_CAPABILITIES) != 0) {
            throw new IllegalArgumentException(String.format("unknown capability flags 0x%04x", flags));
        }
        this.capabilities = flags;
        return self();
    }

    /**
     * @param depth Initiator Depth: READ/atomic requests this side wants outstanding at most,
     *     0..255, default 16
     * @return this
     */
    public T initiatorDepth(final int depth) {
        this.initiatorDepth = range("initiatorDepth", depth, 0, 255);
        return self();
    }

    /**
     * @param resources Responder Resources: READ/atomic requests this side accepts outstanding,
     *     0..255, at most the QP's {@code maxDestRdAtomic}; defaults to that capacity
     * @return this
     */
    public T responderResources(final int resources) {
        this.responderResources = range("responderResources", resources, 0, 255);
        return self();
    }

    /**
     * @param ns TIMEOUT applied at RTS (initial retransmission timeout), default 1 ms
     * @return this
     */
    public T timeoutNs(final long ns) {
        if (ns <= 0) {
            throw new IllegalArgumentException("timeoutNs must be > 0, got " + ns);
        }
        this.timeoutNs = ns;
        return self();
    }

    /**
     * @param count RETRY_CNT applied at RTS, 0..7, default 7
     * @return this
     */
    public T retryCount(final int count) {
        this.retryCount = range("retryCount", count, 0, 7);
        return self();
    }

    /**
     * @param ns RETRY_TIMEOUT applied at RTS: how long the QP retries without progress, and waits
     *     for a silent peer, before it ends with RETRY_EXC_ERR [REL-060]; 0 = RETRY_CNT alone decides
     *     (verbs behaviour: about a second of silence ends the connection). Default: the endpoint's
     *     {@code EndpointConfig.retryTimeoutNs}, 15 s unless configured
     * @return this
     */
    public T retryTimeoutNs(final long ns) {
        if (ns < 0) {
            throw new IllegalArgumentException("retryTimeoutNs must be >= 0 (0 = no time budget), got " + ns);
        }
        this.retryTimeoutNs = ns;
        return self();
    }

    /**
     * @param count RNR_RETRY applied at RTS, 0..7 (7 = unlimited), default 7
     * @return this
     */
    public T rnrRetry(final int count) {
        this.rnrRetry = range("rnrRetry", count, 0, 7);
        return self();
    }

    /**
     * @param ns MIN_RNR_TIMER applied at RTR, default 100 µs
     * @return this
     */
    public T minRnrTimerNs(final long ns) {
        if (ns <= 0) {
            throw new IllegalArgumentException("minRnrTimerNs must be > 0, got " + ns);
        }
        this.minRnrTimerNs = ns;
        return self();
    }

    /**
     * @param algorithm CC_ALGORITHM applied at RTS (section 8); null (the default) leaves the
     *     endpoint's {@code EndpointConfig.congestionControl()}. RECEIVER_CREDIT and DCQCN need the
     *     RECEIVER_CREDIT and ECN capabilities: without them the QP runs DEFAULT and raises
     *     CC_FALLBACK [CC-008]
     * @return this
     */
    public T congestionControl(final CongestionControlAlgorithm algorithm) {
        this.ccAlgorithm = algorithm;
        return self();
    }

    /**
     * @param packets CONGESTION_WINDOW applied at RTS: the initial window (the constant one for
     *     FIXED), 1..{@link QpAttributes#MAX_CONGESTION_WINDOW}; 0 (the default) leaves section 8's
     * @return this
     */
    public T congestionWindowPackets(final int packets) {
        this.congestionWindowPackets = range("congestionWindowPackets", packets, 0, QpAttributes.MAX_CONGESTION_WINDOW);
        return self();
    }

    /** Adds the congestion-control and retry-budget attributes these parameters set to an RTR→RTS modify. */
    /**
     * @param c a connection whose peer QPN, initial PSN and negotiated path MTU, Path Count and
     *     capabilities are known
     * @param maxDestRdAtomic READ/atomic requests the peer may have outstanding towards this side
     * @return the attributes that move the connection's queue pair to RTR [CM-019]: the negotiated
     *     values, this side's first Path Count entropy values and RNR timer
     */
    QpAttributes rtrAttributes(final Connection c, final int maxDestRdAtomic) {
        return new QpAttributes().pathMtu(c.mtu).destQpn(c.remoteQpn).rqPsn(c.remoteInitialPsn)
            .maxDestRdAtomic(Math.max(1, maxDestRdAtomic)).minRnrTimerNs(minRnrTimerNs)
            .paths(Arrays.copyOf(paths, c.pathCount)).remotePeer(c.remotePeer).capabilities(c.capabilities);
    }

    /**
     * @param sqPsn the first PSN this side sends
     * @param maxRdAtomic READ/atomic requests this side may have outstanding, as negotiated
     * @return the attributes that move a connection's queue pair to RTS: these retry parameters
     *     and this congestion control
     */
    QpAttributes rtsAttributes(final int sqPsn, final int maxRdAtomic) {
        return congestionAttributes(new QpAttributes().sqPsn(sqPsn).timeoutNs(timeoutNs).retryCount(retryCount)
            .rnrRetry(rnrRetry).maxRdAtomic(Math.max(1, maxRdAtomic)));
    }

    QpAttributes congestionAttributes(final QpAttributes rts) {
        if (ccAlgorithm != null) {
            rts.ccAlgorithm(ccAlgorithm);
        }
        if (congestionWindowPackets > 0) {
            rts.congestionWindowPackets(congestionWindowPackets);
        }
        if (retryTimeoutNs >= 0) {
            rts.retryTimeoutNs(retryTimeoutNs);
        }
        return rts;
    }

    /**
     * @param handler receives the events of connections made with these parameters; null (the
     *     default) leaves them to the manager's handler or its event queue
     * @return this
     */
    public T handler(final CmEventHandler handler) {
        this.handler = handler;
        return self();
    }

    /**
     * @param context any application object, available from {@link Connection#context()}
     * @return this
     */
    public T context(final Object context) {
        this.context = context;
        return self();
    }

    /** Copies every field of this class into {@code c} (the arrays too). */
    /**
     * @param endpoint the endpoint's configuration
     * @return the Capability Flags to offer: those set, else ECN when the endpoint's datagram layer
     *     reads the ECN field [CC-034], else none
     */
    int offeredCapabilities(final org.metaroce.core.engine.EndpointConfig endpoint) {
        if (capabilities >= 0) {
            return capabilities;
        }
        return (endpoint.datagramEcn() ? ConnectHeader.CAP_ECN : 0)
            | (endpoint.attachedAck() ? ConnectHeader.CAP_ATTACHED_ACK : 0)
            | (endpoint.deferredAck() ? ConnectHeader.CAP_DEFERRED_ACK : 0);
    }

    void copyTo(final QpParams<?> c) {
        c.pd = pd;
        c.sendCq = sendCq;
        c.recvCq = recvCq;
        c.caps = caps;
        c.accessFlags = accessFlags;
        c.pathMtu = pathMtu;
        c.paths = paths == null ? null : paths.clone();
        c.capabilities = capabilities;
        c.initiatorDepth = initiatorDepth;
        c.responderResources = responderResources;
        c.timeoutNs = timeoutNs;
        c.retryCount = retryCount;
        c.retryTimeoutNs = retryTimeoutNs;
        c.rnrRetry = rnrRetry;
        c.minRnrTimerNs = minRnrTimerNs;
        c.ccAlgorithm = ccAlgorithm;
        c.congestionWindowPackets = congestionWindowPackets;
        c.handler = handler;
        c.context = context;
    }

    /** @return the proposed Responder Resources, resolving the default */
    int effectiveResponderResources() {
        return responderResources >= 0 ? responderResources : caps.maxDestRdAtomic();
    }

    void validate(final boolean needResources) {
        if (needResources && pd == null) {
            throw new IllegalArgumentException("resources(pd, sendCq, recvCq, caps) must be set");
        }
        if (paths == null) {
            throw new IllegalArgumentException("paths (this side's entropy values) must be set");
        }
        if (effectiveResponderResources() > caps.maxDestRdAtomic()) {
            throw new IllegalArgumentException("responderResources (" + responderResources
                + ") exceeds the QP's maxDestRdAtomic (" + caps.maxDestRdAtomic() + ")");
        }
    }

    static int range(final String name, final int v, final int min, final int max) {
        if (v < min || v > max) {
            throw new IllegalArgumentException(name + " must be in " + min + ".." + max + ", got " + v);
        }
        return v;
    }

    static byte[] checkPrivateData(final byte[] data) {
        if (data == null) {
            return new byte[0];
        }
        if (data.length > WireConstants.MAX_PRIVATE_DATA) {
            throw new IllegalArgumentException("private data must not exceed " + WireConstants.MAX_PRIVATE_DATA
                + " bytes [CM-021], got " + data.length);
        }
        return data.clone();
    }
}
