// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.conformance.suite;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * Queue-pair parameters a case asks the agent to use for a listen or connect (specification
 * 12.4.2): the IUT's ACCESS_FLAGS, proposal and local attributes.
 */
public final class QpOptions {
    String[] access = {"REMOTE_WRITE", "REMOTE_READ", "REMOTE_ATOMIC"};
    int pmtu = 1024;
    int retryCnt = 7;
    int rnrRetry = 7;
    int minRnrTimer = 10;
    int timeoutUs = 1000;
    /** RETRY_TIMEOUT in milliseconds, or -1 to leave the IUT's default (the option is then not sent). */
    long retryTimeoutMs = -1;
    int responderResources = 16;
    int initiatorDepth = 16;
    /** Capability Flags the IUT offers (and the tester proposes), 0 = none; extension "cc". */
    int capabilities;
    /** CC_ALGORITHM name, or null for the IUT's default; extension "cc". */
    String ccAlgorithm;
    /** CONGESTION_WINDOW in packets, 0 for section 8's default; extension "cc". */
    int congestionWindow;
    /** Path Count the tester proposes when it is the client (the IUT proposes its own). */
    int testerPaths = 1;

    /** Capability Flag RECEIVER_CREDIT (9.4, ConnectHeader). */
    public static final int CAP_RECEIVER_CREDIT = 0x0001;
    /** Capability Flag GO_BACK_N. */
    public static final int CAP_GO_BACK_N = 0x0002;
    /** Capability Flag ECN. */
    public static final int CAP_ECN = 0x0004;
    /** Capability Flag SENDER_COUNT (v1.0.10): the responder's Sender Count in its ACKs [CC-038]. */
    public static final int CAP_SENDER_COUNT = 0x0008;
    /** Capability Flag ATTACHED_ACK (v1.0.15): ACKs may ride on request packets [REL-070, WIRE-071]. */
    public static final int CAP_ATTACHED_ACK = 0x0010;
    /** Capability Flag DEFERRED_ACK (v1.0.16): a LAST packet without ACK_REQ may have its ACK held [REL-073, REL-074]. */
    public static final int CAP_DEFERRED_ACK = 0x0020;

    public static QpOptions defaults() {
        return new QpOptions();
    }

    public QpOptions access(final String... flags) {
        access = flags.clone();
        return this;
    }

    public QpOptions pmtu(final int mtu) {
        pmtu = mtu;
        return this;
    }

    public QpOptions retryCnt(final int n) {
        retryCnt = n;
        return this;
    }

    public QpOptions rnrRetry(final int n) {
        rnrRetry = n;
        return this;
    }

    public QpOptions minRnrTimer(final int units) {
        minRnrTimer = units;
        return this;
    }

    public QpOptions timeoutUs(final int us) {
        timeoutUs = us;
        return this;
    }

    /**
     * Asks for RETRY_TIMEOUT [REL-060]; 0 makes RETRY_CNT, the transmission limit and
     * KEEPALIVE_PROBES alone end a connection, as cases of those counts need. Sent only when set, so
     * an agent that predates the option sees the requests it always saw.
     */
    public QpOptions retryTimeoutMs(final long ms) {
        retryTimeoutMs = ms;
        return this;
    }

    public QpOptions depths(final int initiator, final int responder) {
        initiatorDepth = initiator;
        responderResources = responder;
        return this;
    }

    /**
     * Asks the IUT to offer these Capability Flags on the QP; the tester proposes the same ones
     * when it is the client (agent extension {@code cc}, 12.4.2).
     */
    public QpOptions capabilities(final int flags) {
        capabilities = flags;
        return this;
    }

    /** Asks the IUT to run this CC_ALGORITHM (DEFAULT, RECEIVER_CREDIT, DCQCN, FIXED) on the QP. */
    public QpOptions ccAlgorithm(final String name) {
        ccAlgorithm = name;
        return this;
    }

    /** Asks the IUT for a CONGESTION_WINDOW of {@code packets} (the initial window; FIXED's constant). */
    public QpOptions congestionWindow(final int packets) {
        congestionWindow = packets;
        return this;
    }

    /** Has the tester propose {@code paths} paths as client; the negotiated count is the minimum [MP-001]. */
    public QpOptions testerPaths(final int paths) {
        testerPaths = paths;
        return this;
    }

    public int testerPaths() {
        return testerPaths;
    }

    /** @return whether these options need the agent extension {@code cc} */
    public boolean needsCcExtension() {
        return capabilities != 0 || ccAlgorithm != null || congestionWindow != 0;
    }

    public int capabilities() {
        return capabilities;
    }

    public int pmtu() {
        return pmtu;
    }

    public int responderResources() {
        return responderResources;
    }

    public int initiatorDepth() {
        return initiatorDepth;
    }

    void into(final ObjectNode o) {
        final ArrayNode a = o.putArray("access");
        for (final String f : access) {
            a.add(f);
        }
        o.put("pmtu", pmtu);
        o.put("retry_cnt", retryCnt);
        o.put("rnr_retry", rnrRetry);
        o.put("min_rnr_timer", minRnrTimer);
        o.put("timeout_us", timeoutUs);
        if (retryTimeoutMs >= 0) {
            o.put("retry_timeout_ms", retryTimeoutMs);
        }
        o.put("responder_resources", responderResources);
        o.put("initiator_depth", initiatorDepth);
        if (capabilities != 0) {
            final ArrayNode c = o.putArray("capabilities");
            if ((capabilities & CAP_RECEIVER_CREDIT) != 0) {
                c.add("RECEIVER_CREDIT");
            }
            if ((capabilities & CAP_GO_BACK_N) != 0) {
                c.add("GO_BACK_N");
            }
            if ((capabilities & CAP_ECN) != 0) {
                c.add("ECN");
            }
            if ((capabilities & CAP_SENDER_COUNT) != 0) {
                c.add("SENDER_COUNT");
            }
            if ((capabilities & CAP_ATTACHED_ACK) != 0) {
                c.add("ATTACHED_ACK");
            }
            if ((capabilities & CAP_DEFERRED_ACK) != 0) {
                c.add("DEFERRED_ACK");
            }
        }
        if (ccAlgorithm != null) {
            o.put("cc_algorithm", ccAlgorithm);
        }
        if (congestionWindow != 0) {
            o.put("congestion_window", congestionWindow);
        }
    }
}
