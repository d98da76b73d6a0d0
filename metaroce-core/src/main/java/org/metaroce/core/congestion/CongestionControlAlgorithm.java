// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.congestion;

import org.metaroce.core.wire.ConnectHeader;

/**
 * Values of the CC_ALGORITHM queue-pair attribute (specification 4.3 and 8.4): which algorithm a
 * QP's requester runs. RECEIVER_CREDIT needs the RECEIVER_CREDIT capability and DCQCN the ECN
 * capability; without them the QP runs {@link #DEFAULT} instead and says so [CC-008].
 */
public enum CongestionControlAlgorithm {
    /** Delay-primary window with ECN quadrants (8.5). */
    DEFAULT,
    /** Window = credit granted by the responder (8.6). */
    RECEIVER_CREDIT,
    /** Rate-based reaction to CNPs, the RoCEv2 baseline (8.7). */
    DCQCN,
    /** Constant window, for tests and controlled experiments (8.8). */
    FIXED;

    /**
     * @return the Capability Flag the peer must have agreed to for this algorithm to run
     *     (RECEIVER_CREDIT for RECEIVER_CREDIT, ECN for DCQCN), 0 when it needs none [CC-008]
     */
    public int requiredCapability() {
        return switch (this) {
            case RECEIVER_CREDIT -> ConnectHeader.CAP_RECEIVER_CREDIT;
            case DCQCN -> ConnectHeader.CAP_ECN;
            default -> 0;
        };
    }
}
