// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.netty;

import org.metaroce.core.engine.EndpointCounter;

/**
 * What a {@link CounterFile} holds for each queue pair, sampled on the owning thread. Names are
 * stable: tools and scripts refer to them.
 */
public enum QpCounter {
    /** {@code QpState} ordinal (RESET 0, INIT 1, RTR 2, RTS 3, SQD 4, SQE 5, ERR 6). */
    STATE(CounterType.QP_GAUGE),
    /** Request packets transmitted, retransmissions included. */
    PACKETS_SENT(CounterType.QP_COUNTER),
    /** Retransmissions, all causes; the seven RETRANSMITS_* counters that follow split them. */
    RETRANSMITS(CounterType.QP_COUNTER),
    /** Retransmissions because loss detection (RACK, from the SACKs) declared a loss. */
    RETRANSMITS_LOSS_DETECTED(EndpointCounter.RETRANSMITS_LOSS_DETECTED),
    /** Retransmissions after the retransmission timer fired. */
    RETRANSMITS_TIMEOUT(EndpointCounter.RETRANSMITS_TIMEOUT),
    /** Tail-loss probes. */
    RETRANSMITS_TAIL_PROBE(EndpointCounter.RETRANSMITS_TAIL_PROBE),
    /** Retransmissions a TRIMMED NACK asked for. */
    RETRANSMITS_TRIMMED(EndpointCounter.RETRANSMITS_TRIMMED),
    /** Retransmissions after a PSN_WINDOW NACK. */
    RETRANSMITS_PSN_WINDOW(EndpointCounter.RETRANSMITS_PSN_WINDOW),
    /** Retransmissions after an RNR NACK's wait. */
    RETRANSMITS_RNR(EndpointCounter.RETRANSMITS_RNR),
    /** Go-back-N: resent after a SEQUENCE_GAP NACK or a timeout sent the requester back. */
    RETRANSMITS_GO_BACK_N(EndpointCounter.RETRANSMITS_GO_BACK_N),
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
    private final EndpointCounter cause;

    QpCounter(final CounterType type) {
        this.type = type;
        this.cause = null;
    }

    QpCounter(final EndpointCounter cause) {
        this.type = CounterType.QP_COUNTER;
        this.cause = cause;
    }

    /** @return the retransmission cause this counter counts for its QP, or null when it is not one */
    public EndpointCounter cause() {
        return cause;
    }

    /** @return QP_COUNTER or QP_GAUGE */
    public CounterType type() {
        return type;
    }
}
