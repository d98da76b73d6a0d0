// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.cli.incast;

import java.io.IOException;
import java.util.Arrays;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.metaroce.cli.faults.TwoHosts;

/**
 * The bottleneck of the rig, in nftables on the receiving host's input hook (the one hook that
 * works on every machine this runs on; tc does not): an ECN marker that sets CE on ECN-capable
 * datagrams above rate {@code markBytesPerSecond}, then a policer that drops datagrams above rate
 * {@code dropBytesPerSecond}, and behind both one counter per receiving port. A token bucket stands
 * in for a switch queue: the policer's burst is the buffer, the marker's burst the marking threshold
 * (a phantom queue draining at the marking rate, as HULL's). Counters: {@value #MARKED},
 * {@value #DROPPED}, and {@code p<i>} for what reached port {@code i} (bytes on the wire, IP header
 * included).
 */
final class Bottleneck implements AutoCloseable {
    static final String TABLE = "mr_bottleneck";
    static final String MARKED = "marked";
    static final String DROPPED = "dropped";
    private static final ObjectMapper JSON = new ObjectMapper();

    private final String ns;
    private final int[] ports;

    /**
     * @param ns the receiving host's namespace
     * @param device its interface: only datagrams arriving there pass the bottleneck
     * @param dropBytesPerSecond policer rate R
     * @param dropBurstBytes policer bucket (the "buffer")
     * @param markBytesPerSecond marking rate, below R
     * @param markBurstBytes marker bucket (the "marking threshold")
     * @param ports the receiving UDP ports, each counted on its own
     */
    Bottleneck(final String ns, final String device, final long dropBytesPerSecond, final long dropBurstBytes,
               final long markBytesPerSecond, final long markBurstBytes, final int[] ports) throws IOException {
        this.ns = ns;
        this.ports = ports.clone();
        nftOutput("delete", "table", "inet", TABLE);
        nft("add", "table", "inet", TABLE);
        nft("add", "counter", "inet", TABLE, MARKED);
        nft("add", "counter", "inet", TABLE, DROPPED);
        for (int i = 0; i < ports.length; i++) {
            nft("add", "counter", "inet", TABLE, "p" + i);
        }
        nft("add", "chain", "inet", TABLE, "in", "{ type filter hook input priority 0; policy accept; }");
        // Marks only ECN-capable datagrams: CE on a Not-ECT packet would tell a transport that never
        // asked for ECN of congestion it cannot echo (RFC 3168, 5).
        nft("add", "rule", "inet", TABLE, "in", "iifname", device, "meta", "l4proto", "udp", "ip", "ecn", "!=",
            "not-ect", "limit", "rate", "over", markBytesPerSecond + " bytes/second", "burst", markBurstBytes + " bytes",
            "counter", "name", MARKED, "ip", "ecn", "set", "ce");
        nft("add", "rule", "inet", TABLE, "in", "iifname", device, "meta", "l4proto", "udp", "limit", "rate", "over",
            dropBytesPerSecond + " bytes/second", "burst", dropBurstBytes + " bytes", "counter", "name", DROPPED,
            "drop");
        for (int i = 0; i < ports.length; i++) {
            nft("add", "rule", "inet", TABLE, "in", "iifname", device, "udp", "dport", Integer.toString(ports[i]),
                "counter", "name", "p" + i);
        }
    }

    /** What the counters held at one instant. */
    /**
     * @param markedBytes bytes of the datagrams marked CE
     * @param droppedBytes bytes of the datagrams dropped. Bytes, not datagrams: the input hook sees
     *     a UDP GSO super-datagram unsegmented on veth (up to 15 MetaRoCE packets per drop)
     */
    record Sample(long nanoTime, long markedBytes, long droppedBytes, long[] portBytes) {
        @Override
        public String toString() {
            return "marked " + markedBytes + " B, dropped " + droppedBytes + " B, per port " + Arrays.toString(portBytes);
        }
    }

    /** @return the counters now (one {@code nft -j list counters} call) */
    Sample sample() throws IOException {
        final TwoHosts.Output r = nftOutput("-j", "list", "counters", "table", "inet", TABLE);
        final long now = System.nanoTime();
        if (r.exit() != 0) {
            throw new IOException("cannot read the bottleneck's counters in " + ns + ": " + r);
        }
        long marked = -1;
        long dropped = -1;
        final long[] bytes = new long[ports.length];
        Arrays.fill(bytes, -1);
        for (final JsonNode item : JSON.readTree(r.out()).path("nftables")) {
            final JsonNode c = item.path("counter");
            if (c.isMissingNode()) {
                continue;
            }
            final String name = c.path("name").asText();
            if (name.equals(MARKED)) {
                marked = c.path("bytes").asLong();
            } else if (name.equals(DROPPED)) {
                dropped = c.path("bytes").asLong();
            } else if (name.startsWith("p")) {
                bytes[Integer.parseInt(name.substring(1))] = c.path("bytes").asLong();
            }
        }
        if (marked < 0 || dropped < 0 || Arrays.stream(bytes).anyMatch(b -> b < 0)) {
            throw new IOException("the bottleneck's counters are incomplete: " + r.out());
        }
        return new Sample(now, marked, dropped, bytes);
    }

    /** Deletes the table (deleting the namespace would too). */
    @Override
    public void close() {
        try {
            nftOutput("delete", "table", "inet", TABLE);
        } catch (final IOException ex) {
            // Best effort.
        }
    }

    private void nft(final String... args) throws IOException {
        TwoHosts.mustNft(ns, args);
    }

    private TwoHosts.Output nftOutput(final String... args) throws IOException {
        return TwoHosts.nft(ns, args);
    }
}
