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
    int responderResources = 16;
    int initiatorDepth = 16;

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

    public QpOptions depths(final int initiator, final int responder) {
        initiatorDepth = initiator;
        responderResources = responder;
        return this;
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
        o.put("responder_resources", responderResources);
        o.put("initiator_depth", initiatorDepth);
    }
}
