// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.engine;

import org.metaroce.core.multipath.PathSelector;
import org.metaroce.core.verbs.CompletionQueue;
import org.metaroce.core.verbs.ProtectionDomain;
import org.metaroce.core.verbs.QpState;

/**
 * The queue pair as its {@link Responder} sees it: the attributes the receive side checks requests
 * against, the paths and writer its answers use, and what it may ask of the queue pair (commit a
 * packet, the credit to grant, fail). Handed in instead of the queue pair itself, so the responder
 * cannot reach the rest of it and no class cycle runs through it (issue 19).
 */
interface ResponderContext {
    /** @return the QPN */
    int qpn();

    /** @return the peer's QPN (valid from RTR) */
    int destQpn();

    /** @return the peer's QPN, or 0 before RTR (what completions report) */
    int destQpnOrZero();

    /** @return the queue pair's state */
    QpState state();

    /** @return the path MTU in bytes */
    int pathMtu();

    /** @return the remote access the queue pair allows (AccessFlags) */
    int accessFlags();

    /** @return the negotiated CAPABILITIES */
    int capabilities();

    /** @return the protection domain whose keys requests name */
    ProtectionDomain pd();

    /** @return where receive completions go */
    CompletionQueue recvCq();

    /** @return whether the connection runs the go-back-N baseline */
    boolean isGoBackN();

    /** @return the minimum RNR wait, advertised in RNR NACKs */
    long minRnrTimerNs();

    /** @return the queue pair's path selector (answers choose their path with it) */
    PathSelector paths();

    /** @return the endpoint's packet writer */
    PacketWriter writer();

    /** @return the Credit to advertise, from the receive window and the endpoint's share [CC-018] */
    int creditToGrant(long nowNs, int window);

    /** @return the Sender Count for an ACK, 0 when SENDER_COUNT was not negotiated [CC-038] */
    int senderCountToAdvertise(long nowNs);

    /** Commits a packet written at {@code offset} to the peer, counted as sent. */
    void commit(TransmitSink sink, int offset, int length, int entropy);

    /** Records the first reason the queue pair fails for. */
    void recordFailure(String reason);

    /** Moves the queue pair to ERR. */
    void enterError(AsyncEventType cause);

    /** A completion queue overflowed: every queue pair using it fails [QP-021]. */
    void onCompletionQueueOverflow(CompletionQueue cq);
}
