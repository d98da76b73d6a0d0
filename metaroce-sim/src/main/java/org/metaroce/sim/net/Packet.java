// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.sim.net;

import org.agrona.concurrent.UnsafeBuffer;
import org.metaroce.core.engine.DatagramEndpoint;

/**
 * One datagram in flight through the fabric: the real MetaRoCE bytes the sending endpoint wrote,
 * plus the IP/UDP fields a switch looks at (addresses as host indices, the UDP source port as
 * entropy, the ECN codepoint). Pooled: the fabric recycles packets, so a run allocates a few
 * thousand of them at most.
 */
public final class Packet {
    /** Largest UDP payload the simulator carries (jumbo frame). */
    public static final int MAX_BYTES = 9216;
    /**
     * Bytes a datagram occupies on the wire beyond its UDP payload: UDP 8, IPv4 20, Ethernet 14,
     * FCS 4, preamble and start delimiter 8, inter-frame gap 12.
     */
    public static final int FRAME_OVERHEAD_BYTES = 8 + 20 + 14 + 4 + 8 + 12;

    final UnsafeBuffer buffer = new UnsafeBuffer(new byte[MAX_BYTES]);
    int length;
    int srcHost;
    int dstHost;
    int entropy;
    int ecn = DatagramEndpoint.ECN_NOT_ECT;
    /** Virtual time the sending host committed it (for latency checks). */
    long sentNs;
    /** Ingress port at the switch currently holding it (PFC and buffer accounting). */
    Port ingress;
    /** Bytes charged to the switch buffer for it while queued there. */
    int chargedBytes;

    /** @return the MetaRoCE bytes (UDP payload) */
    public UnsafeBuffer buffer() {
        return buffer;
    }

    /** @return UDP payload length */
    public int length() {
        return length;
    }

    /** @return bytes on the wire, framing and gaps included */
    public int wireBytes() {
        return length + FRAME_OVERHEAD_BYTES;
    }

    /** @return sending host index */
    public int srcHost() {
        return srcHost;
    }

    /** @return destination host index */
    public int dstHost() {
        return dstHost;
    }

    /** @return UDP source port: the entropy value ECMP hashes */
    public int entropy() {
        return entropy;
    }

    /** @return the IP ECN codepoint */
    public int ecn() {
        return ecn;
    }

    /** @return virtual time the sender committed it */
    public long sentNs() {
        return sentNs;
    }
}
