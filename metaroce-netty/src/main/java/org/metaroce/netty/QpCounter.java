// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.netty;

/**
 * What a {@link CounterFile} holds for each queue pair, sampled on the owning thread. Names are
 * stable: tools and scripts refer to them.
 */
public enum QpCounter {
    /** {@code QpState} ordinal (RESET 0, INIT 1, RTR 2, RTS 3, SQD 4, SQE 5, ERR 6). */
    STATE(CounterType.QP_GAUGE),
    /** Request packets transmitted, retransmissions included. */
    PACKETS_SENT(CounterType.QP_COUNTER),
    /** Retransmissions, all causes. */
    RETRANSMITS(CounterType.QP_COUNTER),
    /** Send work requests posted and not completed. */
    OUTSTANDING_SENDS(CounterType.QP_GAUGE),
    /** Receive work requests posted and not completed. */
    POSTED_RECEIVES(CounterType.QP_GAUGE),
    /** Next PSN the requester assigns. */
    SEND_PSN(CounterType.QP_GAUGE),
    /** Next PSN the responder expects. */
    EXPECTED_PSN(CounterType.QP_GAUGE),
    /** Congestion window in packets. */
    CWND_PACKETS(CounterType.QP_GAUGE),
    /** Smoothed RTT in ns (0 before a sample or outside RTS/SQD). */
    SRTT_NS(CounterType.QP_GAUGE),
    /** Retransmission timeout in ns, backoff included. */
    RTO_NS(CounterType.QP_GAUGE);

    private final CounterType type;

    QpCounter(final CounterType type) {
        this.type = type;
    }

    /** @return QP_COUNTER or QP_GAUGE */
    public CounterType type() {
        return type;
    }
}
