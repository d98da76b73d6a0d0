// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.engine;

/**
 * When a queue pair probes a silent peer with KEEPALIVE [CM-027] and when it declares the peer
 * dead [CM-030]: the decision only. Sending a probe and failing the queue pair are
 * {@link QueuePairTraffic}'s; it tells this timer what it heard ({@link #heard}), what it sent
 * ({@link #probed}) and that it acted on a death ({@link #declaredDead}).
 *
 * <p>Probe k (from 0) is due KEEPALIVE_IDLE + k × KEEPALIVE_INTERVAL after the peer was last
 * heard, and never sooner than an interval after the previous probe. The peer is dead only once
 * KEEPALIVE_PROBES probes really left, the last one had an interval to be answered, and the peer
 * has been silent for KEEPALIVE_IDLE + KEEPALIVE_PROBES × KEEPALIVE_INTERVAL, or RETRY_TIMEOUT if
 * longer [CM-030, REL-060]: a driver that was not polled for seconds (a stalled thread, a loaded
 * machine) probes before it gives up on a peer that may be alive, and a peer paused for less than
 * RETRY_TIMEOUT is probed, not buried. The parameters are read from the endpoint's configuration
 * at each call.
 */
final class KeepaliveTimer {
    /** What is due at a poll. */
    enum Due {
        /** Nothing: the peer was heard recently, or the last probe still has time to be answered. */
        NOTHING,
        /** Send the next probe, then call {@link #probed}. */
        PROBE,
        /** The probes went unanswered: the peer is dead [CM-030]. */
        PEER_DEAD
    }

    /** Time of the last packet from the peer that passed the origin check; MIN_VALUE until the first poll in RTS. */
    private long lastHeardNs = Long.MIN_VALUE;
    /** Probes sent since the peer was last heard. */
    private int probesSent;
    /** When the last probe left: each probe gets a full interval to be answered. */
    private long lastProbeNs;
    /** Whether the queue pair declared the peer dead: kept for the application to ask [CM-030]. */
    private boolean peerDead;

    /** A valid packet from the peer: the idle time starts again and no probe is outstanding [CM-028]. */
    void heard(final long nowNs) {
        lastHeardNs = nowNs;
        probesSent = 0;
    }

    /** The queue pair went back to RESET: the idle time starts at the next poll in RTS, and the peer is not dead. */
    void restart() {
        lastHeardNs = Long.MIN_VALUE;
        probesSent = 0;
        peerDead = false;
    }

    /** The queue pair acted on {@link Due#PEER_DEAD}: it failed, and says why through {@link #isPeerDead()}. */
    void declaredDead() {
        peerDead = true;
    }

    /** @return whether the peer was declared dead since the last {@link #restart()} [CM-030] */
    boolean isPeerDead() {
        return peerDead;
    }

    /**
     * @param retryTimeoutNs the queue pair's RETRY_TIMEOUT, 0 if none
     * @return what is due now; the first call after {@link #restart()} starts the idle time and
     *     answers {@link Due#NOTHING}
     */
    Due due(final long nowNs, final EndpointConfig config, final long retryTimeoutNs) {
        if (config.keepaliveIdleNs() == 0) {
            return Due.NOTHING;
        }
        if (lastHeardNs == Long.MIN_VALUE) {
            lastHeardNs = nowNs;
            return Due.NOTHING;
        }
        final long silentFor = nowNs - lastHeardNs;
        final boolean probesDone = probesSent >= config.keepaliveProbes();
        final long deadAfter = Math.max(config.keepaliveIdleNs() + config.keepaliveProbes() * config.keepaliveIntervalNs(),
            retryTimeoutNs);
        if (probesDone && silentFor >= deadAfter && nowNs - lastProbeNs >= config.keepaliveIntervalNs()) {
            return Due.PEER_DEAD;
        }
        if (silentFor < nextProbeDelay(config)
            || (probesSent > 0 && nowNs - lastProbeNs < config.keepaliveIntervalNs())) {
            return Due.NOTHING;
        }
        return Due.PROBE;
    }

    /** A probe left now. */
    void probed(final long nowNs) {
        probesSent++;
        lastProbeNs = nowNs;
    }

    /** @return probes sent since the peer was last heard (the next probe's number, from 0) */
    int probesSent() {
        return probesSent;
    }

    /** @return how long the peer has been silent at {@code nowNs} */
    long silentForNs(final long nowNs) {
        return nowNs - lastHeardNs;
    }

    /**
     * @return when {@link #due} next has something to do (keepalive enabled): at once before the
     *     idle time started, else the next probe's turn, which also checks for death first [CM-030]
     */
    long deadlineNs(final EndpointConfig config) {
        if (lastHeardNs == Long.MIN_VALUE) {
            return Long.MIN_VALUE;
        }
        final long spacing = probesSent > 0 ? lastProbeNs + config.keepaliveIntervalNs() : Long.MIN_VALUE;
        return Math.max(lastHeardNs + nextProbeDelay(config), spacing);
    }

    private long nextProbeDelay(final EndpointConfig config) {
        return config.keepaliveIdleNs() + probesSent * config.keepaliveIntervalNs();
    }
}
