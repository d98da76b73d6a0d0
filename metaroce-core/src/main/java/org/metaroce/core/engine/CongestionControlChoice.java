// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.engine;

import org.metaroce.core.congestion.CongestionControl;
import org.metaroce.core.congestion.CongestionControlAlgorithm;
import org.metaroce.core.congestion.CongestionControls;
import org.metaroce.core.congestion.FixedWindowCongestionControl;
import org.metaroce.core.verbs.QpAttributeMask;
import org.metaroce.core.verbs.QpAttributes;
import org.metaroce.core.wire.ConnectHeader;

/**
 * A queue pair's congestion-control algorithm: the one asked for (the CC_ALGORITHM attribute or
 * the endpoint default), the one run, why they differ [CC-008, CC-034], and the running instance.
 * Kept apart from the queue pair because the choice is made once, at RTS, and everything about it
 * is read later by the application and the requester.
 */
final class CongestionControlChoice {
    private CongestionControl instance;
    private CongestionControlAlgorithm requested;
    private CongestionControlAlgorithm algorithm = CongestionControlAlgorithm.FIXED;
    /** Why the algorithm run differs from the one requested [CC-008], [CC-034]; null when it does not. */
    private String fallbackReason;

    /** Before RTS a fixed window of the receive window's size, which nothing reads until RTS. */
    CongestionControlChoice(final int receiveWindowPackets) {
        this.instance = new FixedWindowCongestionControl(receiveWindowPackets);
    }

    /**
     * Builds the algorithm of CC_ALGORITHM for RTS: falling back to DEFAULT without its capability
     * [CC-008], and from an endpoint default of DEFAULT to FIXED where the delay signal alone cannot
     * be trusted [CC-034].
     *
     * @param capabilities the negotiated Capability Flags
     * @return whether it fell back (the queue pair counts it and raises CC_FALLBACK)
     */
    boolean start(final QpAttributes attrs, final int capabilities, final int pathMtu, final EndpointConfig config) {
        final boolean explicit = attrs.isSet(QpAttributeMask.CC_ALGORITHM);
        requested = explicit ? attrs.ccAlgorithm() : config.congestionControl();
        algorithm = CongestionControls.effective(requested, capabilities);
        fallbackReason = null;
        if (algorithm != requested) {
            fallbackReason = requested + " needs the "
                + (requested == CongestionControlAlgorithm.DCQCN ? "ECN" : "RECEIVER_CREDIT")
                + " capability, which the connection did not negotiate; running DEFAULT [CC-008]";
        } else if (!explicit && algorithm == CongestionControlAlgorithm.DEFAULT
            && (capabilities & ConnectHeader.CAP_ECN) == 0 && config.hostDelayAllowanceNs() == 0
            && config.delayOnlyFallback()) {
            // Delay-only DEFAULT on a host whose timestamps include its own scheduling delay takes
            // that delay for a queue and starves (docs/congestion-control.md, host jitter table).
            algorithm = CongestionControlAlgorithm.FIXED;
            fallbackReason = "ECN was not negotiated (both ends must offer it, and only a datagram layer that "
                + "reads the ECN field may) and HOST_DELAY_ALLOWANCE is 0, so DEFAULT would have only delay, which "
                + "this host's scheduling inflates; running FIXED. Negotiate ECN, set "
                + "EndpointConfig.hostDelayAllowanceNs, or set CC_ALGORITHM explicitly [CC-034]";
        }
        instance = CongestionControls.create(algorithm, pathMtu, config.linkRateBitsPerSecond(),
            (capabilities & ConnectHeader.CAP_ECN) != 0,
            attrs.isSet(QpAttributeMask.CONGESTION_WINDOW) ? attrs.congestionWindowPackets() : 0,
            config.receiveWindowPackets(), config.hostDelayAllowanceNs(), config.baseRttMaxNs(),
            config.softwareEndpoint());
        return fallbackReason != null;
    }

    /** Replaces the running instance (an experiment's own algorithm); the recorded choice stays. */
    void replace(final CongestionControl cc) {
        instance = cc;
    }

    /**
     * @return e.g. "congestion control DEFAULT ..., next send paced in 0.001 s", for
     *     the queue pair's describeSendSide; allocates (cold path)
     */
    String describe(final long nowNs) {
        final long paced = instance.nextSendTimeNs(nowNs) - nowNs;
        return "congestion control " + algorithm + " " + instance
            + (paced > 0 ? ", next send paced in " + String.format(java.util.Locale.ROOT, "%.3f s", paced / 1e9) : "");
    }

    /** @return the running instance */
    CongestionControl instance() {
        return instance;
    }

    /** @return the algorithm run */
    CongestionControlAlgorithm algorithm() {
        return algorithm;
    }

    /** @return the algorithm asked for at RTS, or the one run before RTS */
    CongestionControlAlgorithm requested() {
        return requested == null ? algorithm : requested;
    }

    /** @return why {@link #algorithm()} differs from {@link #requested()}, or null */
    String fallbackReason() {
        return fallbackReason;
    }
}
