// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.congestion;

/**
 * Builds the algorithm a queue pair runs from its CC_ALGORITHM attribute and negotiated
 * capabilities (specification 8.4). Setup path: allocates.
 */
public final class CongestionControls {
    private CongestionControls() {
    }

    /**
     * The algorithm actually run for {@code requested} given the negotiated capabilities: an
     * algorithm that needs a capability the peer did not agree to falls back to DEFAULT [CC-008].
     *
     * @param requested the CC_ALGORITHM attribute
     * @param capabilities negotiated Capability Flags
     * @return the algorithm to run
     */
    public static CongestionControlAlgorithm effective(final CongestionControlAlgorithm requested,
                                                       final int capabilities) {
        final int needed = requested.requiredCapability();
        return (capabilities & needed) == needed ? requested : CongestionControlAlgorithm.DEFAULT;
    }

    /**
     * @param algorithm the algorithm to build (already {@link #effective resolved})
     * @param pmtu the QP's path MTU in bytes
     * @param linkRateBitsPerSecond LINK_RATE
     * @param ecn whether ECN was negotiated
     * @param initialWindowPackets the CONGESTION_WINDOW attribute, or 0 when not set
     * @param fixedWindowPackets FIXED's window when CONGESTION_WINDOW is not set
     * @param hostDelayAllowanceNs the default algorithm's HOST_DELAY_ALLOWANCE
     * @param baseRttMaxNs the default algorithm's BASE_RTT_MAX, 0 for none
     * @param softwareEndpoint whether the endpoint's timestamps include its own host's delay, which
     *     with ECN has the default algorithm run on marks alone [CC-034], [CC-037]
     * @return a new instance
     */
    public static CongestionControl create(final CongestionControlAlgorithm algorithm, final int pmtu,
                                           final long linkRateBitsPerSecond, final boolean ecn,
                                           final int initialWindowPackets, final int fixedWindowPackets,
                                           final long hostDelayAllowanceNs, final long baseRttMaxNs,
                                           final boolean softwareEndpoint) {
        return switch (algorithm) {
            case FIXED -> new FixedWindowCongestionControl(
                initialWindowPackets > 0 ? initialWindowPackets : fixedWindowPackets);
            case DCQCN -> new DcqcnCongestionControl(pmtu, linkRateBitsPerSecond);
            case RECEIVER_CREDIT -> new ReceiverCreditCongestionControl(pmtu, linkRateBitsPerSecond);
            case DEFAULT -> new DelayBasedCongestionControl(pmtu, linkRateBitsPerSecond, ecn,
                initialWindowPackets > 0 ? (double) initialWindowPackets * pmtu : 0, hostDelayAllowanceNs)
                .baseRttMaxNs(baseRttMaxNs).softwareEndpoint(softwareEndpoint);
        };
    }
}
