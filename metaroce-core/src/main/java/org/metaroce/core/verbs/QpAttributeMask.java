// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.verbs;

/**
 * Bits naming queue-pair attributes, in the role of libibverbs {@code IBV_QP_*} attribute
 * masks: {@link QpAttributes} records which attributes it carries with them, and
 * {@link QpStateMachine#requiredAttributes(QpState, QpState)} says which a transition needs.
 */
public final class QpAttributeMask {
    /** Device port the QP is bound to (IBV_QP_PORT). */
    public static final int PORT = 1;
    /** Remote operations the QP serves (IBV_QP_ACCESS_FLAGS). */
    public static final int ACCESS_FLAGS = 1 << 1;
    /** Path MTU (IBV_QP_PATH_MTU). */
    public static final int PATH_MTU = 1 << 2;
    /** Peer's QP number (IBV_QP_DEST_QPN). */
    public static final int DEST_QPN = 1 << 3;
    /** First PSN the responder expects (IBV_QP_RQ_PSN). */
    public static final int RQ_PSN = 1 << 4;
    /** First PSN the requester sends (IBV_QP_SQ_PSN). */
    public static final int SQ_PSN = 1 << 5;
    /** Transport retry count (IBV_QP_RETRY_CNT). */
    public static final int RETRY_CNT = 1 << 6;
    /** RNR retry count (IBV_QP_RNR_RETRY). */
    public static final int RNR_RETRY = 1 << 7;
    /** Retransmission timeout (IBV_QP_TIMEOUT). */
    public static final int TIMEOUT = 1 << 8;
    /** RNR NAK delay the responder asks for (IBV_QP_MIN_RNR_TIMER). */
    public static final int MIN_RNR_TIMER = 1 << 9;
    /** Outstanding READ/atomic requests as requester (IBV_QP_MAX_QP_RD_ATOMIC). */
    public static final int MAX_QP_RD_ATOMIC = 1 << 10;
    /** Outstanding READ/atomic requests served as responder (IBV_QP_MAX_DEST_RD_ATOMIC). */
    public static final int MAX_DEST_RD_ATOMIC = 1 << 11;
    /** Entropy values (UDP source ports) of the paths; our multipath analogue of IBV_QP_AV. */
    public static final int PATHS = 1 << 12;
    /** Send queue depth (ibv_qp_cap.max_send_wr). */
    public static final int SEND_QUEUE_DEPTH = 1 << 13;
    /** Receive queue depth (ibv_qp_cap.max_recv_wr). */
    public static final int RECV_QUEUE_DEPTH = 1 << 14;
    /** Scatter/gather entries per send request (ibv_qp_cap.max_send_sge). */
    public static final int MAX_SEND_SGE = 1 << 15;
    /** Scatter/gather entries per receive request (ibv_qp_cap.max_recv_sge). */
    public static final int MAX_RECV_SGE = 1 << 16;
    /** Initial congestion window in packets (no verbs equivalent). */
    public static final int CONGESTION_WINDOW = 1 << 17;
    /** The driver's identifier of the peer's address (which datagrams come from and go to). */
    public static final int REMOTE_PEER = 1 << 18;
    /** Negotiated Capability Flags: GO_BACK_N, RECEIVER_CREDIT, ECN (table 4.3, section 9). */
    public static final int CAPABILITIES = 1 << 19;
    /** Congestion-control algorithm of the requester (table 4.3, section 8). */
    public static final int CC_ALGORITHM = 1 << 20;
    /**
     * Time without progress before retries end the connection (RETRY_TIMEOUT, table 4.3): the
     * retry budget as a time, so a stalled peer is not taken for dead [REL-060].
     */
    public static final int RETRY_TIMEOUT = 1 << 21;
    /** Every bit defined above. */
    public static final int ALL = (1 << 22) - 1;

    private static final String[] NAMES = {
        "PORT", "ACCESS_FLAGS", "PATH_MTU", "DEST_QPN", "RQ_PSN", "SQ_PSN", "RETRY_CNT",
        "RNR_RETRY", "TIMEOUT", "MIN_RNR_TIMER", "MAX_QP_RD_ATOMIC", "MAX_DEST_RD_ATOMIC",
        "PATHS", "SEND_QUEUE_DEPTH", "RECV_QUEUE_DEPTH", "MAX_SEND_SGE", "MAX_RECV_SGE",
        "CONGESTION_WINDOW", "REMOTE_PEER", "CAPABILITIES", "CC_ALGORITHM", "RETRY_TIMEOUT",
    };

    private QpAttributeMask() {
    }

    /**
     * @param mask attribute bits
     * @return e.g. "PATH_MTU, DEST_QPN" in bit order, "NONE" for zero, unknown bits as hex
     */
    public static String toString(final int mask) {
        if (mask == 0) {
            return "NONE";
        }
        final StringBuilder sb = new StringBuilder(64);
        for (int bit = 0; bit < NAMES.length; bit++) {
            if ((mask & (1 << bit)) != 0) {
                if (sb.length() > 0) {
                    sb.append(", ");
                }
                sb.append(NAMES[bit]);
            }
        }
        final int unknown = mask & ~ALL;
        if (unknown != 0) {
            if (sb.length() > 0) {
                sb.append(", ");
            }
            sb.append("0x").append(Integer.toHexString(unknown));
        }
        return sb.toString();
    }
}
