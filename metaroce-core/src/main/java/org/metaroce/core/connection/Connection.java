// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.connection;

import org.agrona.concurrent.UnsafeBuffer;
import org.metaroce.core.engine.QueuePair;
import org.metaroce.core.wire.WireConstants;

/**
 * One connection, on either side (rdma_cm's connected cm_id): its identity (Service ID,
 * Transaction ID, peer address and QPNs), the negotiated parameters, and its queue pair. Handles
 * are created by {@link ConnectionManager#connect} on the client and delivered with
 * {@link CmEventType#CONNECT_REQUEST} on the server.
 *
 * <p>Read-only for the application except {@link #context(Object)}; the connection manager
 * changes it on the endpoint's thread.
 */
public final class Connection {
    static final int MAX_PACKET = WireConstants.MAX_HEADER_LENGTH + WireConstants.MAX_PRIVATE_DATA;
    private static final byte[] NONE = new byte[0];

    final boolean server;
    final long serviceId;
    final long transactionId;
    final Listener listener;
    /** Changed only through {@link #moveTo}, which checks the move against the specification. */
    private ConnectionState state;

    /** Pinned peer id of the peer's endpoint address, and its host. */
    int remotePeer;
    int remoteHost;

    int localQpn;
    int remoteQpn;
    QueuePair qp;
    /** The connection manager created {@link #qp} (server; client without its own QP): it destroys it [CM-039]. */
    boolean ownsQueuePair;
    /** The connection ended and its QP waits to be destroyed, not before {@link #retireAtNs} [CM-039, REL-052]. */
    boolean retiring;
    long retireAtNs = Long.MAX_VALUE;
    int localInitialPsn;
    int remoteInitialPsn;

    /** The client's proposal (c of CM-019). */
    int proposedMtu;
    int proposedCapabilities;
    int proposedInitiatorDepth;
    int proposedResponderResources;
    int proposedPathCount;

    /** Negotiated values as carried in CONNECT_REPLY. */
    int mtu;
    int capabilities;
    int replyInitiatorDepth;
    int replyResponderResources;
    int pathCount;

    byte[] peerPrivateData = NONE;
    byte[] localPrivateData = NONE;

    /** Local parameters and the event handler are the manager's ({@link ConnectionTable#params}). */
    long connectTimeoutNs;
    Object context;

    // ---- transmission: the packet retransmitted by CM-022 and the server's reply/reject for duplicates;
    // both are dropped in time-wait, which needs only the identity [CM-034, CM-039]
    UnsafeBuffer out = new UnsafeBuffer(new byte[MAX_PACKET]);
    int outLength;
    /** Retransmission of {@link #out} and the state deadline. */
    final CmTimers timers = new CmTimers();
    UnsafeBuffer answer;
    int answerLength;
    boolean sendAnswer;

    // ---- server: while the handshake table remembers the request [CM-012, CM-025]
    /** When the handshake table forgets the request; MAX_VALUE while it does not hold it (set by the table). */
    long handshakeExpiresAtNs = Long.MAX_VALUE;
    boolean countedInListener;

    // ---- client
    boolean challenged;
    boolean staleRetried;

    // ---- teardown
    int disconnectReason;
    boolean raiseDisconnected;
    boolean inQpnTable;
    boolean freed;

    Connection(final boolean server, final long serviceId, final long transactionId, final Listener listener) {
        this.server = server;
        this.serviceId = serviceId;
        this.transactionId = transactionId;
        this.listener = listener;
        this.state = ConnectionStateMachine.initial(server);
    }

    /**
     * @param to the new state
     * @throws IllegalStateException if the specification has no path from the current state to it
     */
    void moveTo(final ConnectionState to) {
        state = ConnectionStateMachine.transition(state, to);
    }

    /** @return where the connection is in its life */
    public ConnectionState state() {
        return state;
    }

    /** @return true on the accepting side, false on the connecting side */
    public boolean isServer() {
        return server;
    }

    /** @return the Service ID */
    public long serviceId() {
        return serviceId;
    }

    /** @return the Transaction ID chosen by the client */
    public long transactionId() {
        return transactionId;
    }

    /** @return the listener of a server-side connection, null on the client */
    public Listener listener() {
        return listener;
    }

    /** @return the driver's (pinned) identifier of the peer's endpoint address */
    public int remotePeer() {
        return remotePeer;
    }

    /**
     * @return this side's queue pair; on the server null until accepted. A queue pair the
     *     connection manager created (every server's, and a client's when {@link ConnectParams}
     *     named none) is destroyed when the connection ends, on entering time-wait or closing
     *     [CM-039]: it stays readable (state ERR, {@link QueuePair#isDestroyed()}) and refuses work.
     *     A queue pair the application passed to {@code connect} stays the application's.
     */
    public QueuePair queuePair() {
        return qp;
    }

    /** @return this side's QPN, 0 before a QP exists */
    public int localQpn() {
        return localQpn;
    }

    /** @return the peer's QPN, 0 while unknown */
    public int remoteQpn() {
        return remoteQpn;
    }

    /** @return the first PSN this side sends */
    public int localInitialPsn() {
        return localInitialPsn;
    }

    /** @return the first PSN the peer sends */
    public int remoteInitialPsn() {
        return remoteInitialPsn;
    }

    /** @return the client's proposed path MTU */
    public int proposedPathMtu() {
        return proposedMtu;
    }

    /** @return the client's proposed Path Count */
    public int proposedPathCount() {
        return proposedPathCount;
    }

    /** @return the client's proposed Capability Flags */
    public int proposedCapabilities() {
        return proposedCapabilities;
    }

    /** @return the client's proposed Initiator Depth */
    public int proposedInitiatorDepth() {
        return proposedInitiatorDepth;
    }

    /** @return the client's proposed Responder Resources */
    public int proposedResponderResources() {
        return proposedResponderResources;
    }

    /** @return negotiated path MTU (valid once a CONNECT_REPLY was sent or received) */
    public int pathMtu() {
        return mtu;
    }

    /** @return negotiated Path Count */
    public int pathCount() {
        return pathCount;
    }

    /** @return negotiated Capability Flags: those both sides set [CM-019] */
    public int capabilities() {
        return capabilities;
    }

    /** @return READ/atomic requests this side may have outstanding (its MAX_QP_RD_ATOMIC) */
    public int initiatorDepth() {
        return server ? replyInitiatorDepth : replyResponderResources;
    }

    /** @return READ/atomic requests the peer may have outstanding towards this side */
    public int responderResources() {
        return server ? replyResponderResources : replyInitiatorDepth;
    }

    /** @return the private data the peer sent (request on the server, reply on the client); a copy */
    public byte[] peerPrivateData() {
        return peerPrivateData.clone();
    }

    /** @return the application object of the parameters or {@link #context(Object)} */
    public Object context() {
        return context;
    }

    /** @param context any application object to keep with the connection */
    public void context(final Object context) {
        this.context = context;
    }

    /** @return when the handshake table forgets the request; never if it does not hold it */
    long handshakeExpiryNs() {
        return handshakeExpiresAtNs;
    }

    long nextDeadlineNs() {
        return Math.min(timers.nextNs(), handshakeExpiryNs());
    }

    @Override
    public String toString() {
        return "Connection{" + (server ? "server" : "client") + ", " + state + ", service=" + serviceId
            + ", txid=" + Long.toHexString(transactionId) + ", peer=" + remotePeer + ", qpn=" + localQpn
            + ", remoteQpn=" + remoteQpn + ", mtu=" + mtu + ", paths=" + pathCount + '}';
    }
}
