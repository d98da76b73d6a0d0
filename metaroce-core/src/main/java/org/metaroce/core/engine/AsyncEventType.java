// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.engine;

/**
 * Asynchronous events of a device, named as in libibverbs (ibv_event_type without the prefix).
 * They tell the application about things that happen outside any work request [QP-010].
 */
public enum AsyncEventType {
    /** A QP moved to ERR for a local reason: retry or RNR retry exhausted, length error, CQ overflow. */
    QP_FATAL,
    /** The responder detected an invalid request and moved the QP to ERR. */
    QP_REQ_ERR,
    /** The responder detected a remote access violation and moved the QP to ERR. */
    QP_ACCESS_ERR,
    /** A QP in RTR accepted its first request packet [QP-013]. */
    COMM_EST,
    /** A QP in SQD has no started send work request left [QP-014]. */
    SQ_DRAINED,
    /** A completion queue overflowed; every QP using it moved to ERR [QP-021]. */
    CQ_ERR,
    /**
     * The QP runs another congestion-control algorithm than the one it asked for: its CC_ALGORITHM
     * needs a capability that was not negotiated (RECEIVER_CREDIT or ECN), so it runs DEFAULT
     * [CC-008]; or it took DEFAULT from the endpoint without ECN and without a host-delay allowance,
     * so it runs FIXED [CC-034]. {@code QueuePair.ccFallbackReason()} says which. Raised by the
     * RTR→RTS modify; not an error.
     */
    CC_FALLBACK
}
