// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.engine;

import org.metaroce.core.multipath.PathSelector;
import org.metaroce.core.verbs.QpAttributeMask;
import org.metaroce.core.verbs.QpAttributes;
import org.metaroce.core.wire.ConnectHeader;

/**
 * The attributes a queue pair runs with, as ibv_query_qp would report them: the defaults until a
 * modify sets them, the optional ones of table 4.4 at any move that takes them, the peer's address
 * and paths at INIT→RTR. The queue pair checks that a move is legal and its attributes complete
 * ({@link QpAttributes#validateFor}) before applying them here; this class only keeps values.
 */
final class CurrentAttributes {
    private int accessFlags;
    private int pathMtu = 1024;
    private int destQpn;
    private int remotePeer = -1;
    private int remoteHost = -1;
    private int retryCount = 7;
    /** RETRY_TIMEOUT [REL-060]: the endpoint's until the RETRY_TIMEOUT attribute sets one. */
    private long retryTimeoutNs;
    private int rnrRetry = 7;
    private long minRnrTimerNs = 10_000;
    private int maxRdAtomic = 1;
    /** Negotiated Capability Flags (the CAPABILITIES attribute, set at INIT→RTR). */
    private int capabilities;
    /** Null before RTR: the paths are the peer's, known from INIT→RTR on. */
    private PathSelector paths;

    CurrentAttributes(final long retryTimeoutNs) {
        this.retryTimeoutNs = retryTimeoutNs;
    }

    /** Applies the optional attributes of table 4.4 that {@code attrs} sets. */
    void applyOptional(final QpAttributes attrs) {
        if (attrs.isSet(QpAttributeMask.ACCESS_FLAGS)) {
            accessFlags = attrs.accessFlags();
        }
        if (attrs.isSet(QpAttributeMask.MIN_RNR_TIMER)) {
            minRnrTimerNs = attrs.minRnrTimerNs();
        }
        if (attrs.isSet(QpAttributeMask.RETRY_CNT)) {
            retryCount = attrs.retryCount();
        }
        if (attrs.isSet(QpAttributeMask.RETRY_TIMEOUT)) {
            retryTimeoutNs = attrs.retryTimeoutNs();
        }
        if (attrs.isSet(QpAttributeMask.RNR_RETRY)) {
            rnrRetry = attrs.rnrRetry();
        }
        if (attrs.isSet(QpAttributeMask.MAX_QP_RD_ATOMIC)) {
            maxRdAtomic = attrs.maxRdAtomic();
        }
    }

    /**
     * Applies INIT→RTR's attributes: the peer, the path MTU, the negotiated capabilities and the
     * paths.
     *
     * @param host the peer's host ({@code PeerDirectory.hostOf} its REMOTE_PEER), against which every
     *     packet's origin is checked
     * @param pathBurstPackets the endpoint's PATH_BURST for the path selector
     */
    void applyPeer(final QpAttributes attrs, final int host, final int pathBurstPackets) {
        pathMtu = attrs.pathMtu();
        destQpn = attrs.destQpn();
        remotePeer = attrs.remotePeer();
        remoteHost = host;
        capabilities = attrs.isSet(QpAttributeMask.CAPABILITIES) ? attrs.capabilities() : 0;
        // Go-back-N sends everything on Path ID 0, as RoCEv2 does [REL-056].
        paths = new PathSelector(isGoBackN() ? new int[] {attrs.path(0)} : attrs.paths(), pathBurstPackets);
    }

    int accessFlags() {
        return accessFlags;
    }

    int pathMtu() {
        return pathMtu;
    }

    /** @return the peer's QPN, 0 before RTR */
    int destQpn() {
        return destQpn;
    }

    int remotePeer() {
        return remotePeer;
    }

    int remoteHost() {
        return remoteHost;
    }

    int retryCount() {
        return retryCount;
    }

    long retryTimeoutNs() {
        return retryTimeoutNs;
    }

    int rnrRetry() {
        return rnrRetry;
    }

    long minRnrTimerNs() {
        return minRnrTimerNs;
    }

    int maxRdAtomic() {
        return maxRdAtomic;
    }

    int capabilities() {
        return capabilities;
    }

    /** @return whether both directions run the go-back-N baseline mode [REL-053] */
    boolean isGoBackN() {
        return (capabilities & ConnectHeader.CAP_GO_BACK_N) != 0;
    }

    PathSelector paths() {
        return paths;
    }
}
