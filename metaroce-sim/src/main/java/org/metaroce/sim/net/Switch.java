// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.sim.net;

import java.nio.ByteOrder;
import java.util.SplittableRandom;

import org.metaroce.core.engine.DatagramEndpoint;
import org.metaroce.core.wire.BaseHeader;
import org.metaroce.core.wire.Flags;
import org.metaroce.core.wire.Opcode;
import org.metaroce.core.wire.WireConstants;

/**
 * An output-queued switch with a shared buffer: picks the egress by ECMP hash of the 5-tuple or
 * per-packet spraying, marks CE with RED thresholds, admits with a dynamic threshold (or, under
 * PFC, against the whole buffer while pausing congested ingress ports), and trims or tail-drops
 * what does not fit.
 */
public final class Switch extends Node {
    private final FabricConfig config;
    private final SplittableRandom random;
    private final long hashSalt;
    private long bufferBytes;
    private long usedBytes;
    private long maxUsedBytes;
    /** routes[dstHost] = egress port indices of equal-cost next hops. */
    int[][] routes;
    long noRouteDrops;

    Switch(final Network network, final int id, final String name, final FabricConfig config,
           final SplittableRandom random) {
        super(network, id, name);
        this.config = config;
        this.random = random;
        this.hashSalt = random.nextLong();
    }

    void sizeBuffer() {
        bufferBytes = config.bufferBytesPerPort() * ports.size();
    }

    /** @return bytes of the shared buffer in use */
    public long usedBytes() {
        return usedBytes;
    }

    /** @return the largest buffer occupancy seen */
    public long maxUsedBytes() {
        return maxUsedBytes;
    }

    /** @return the shared buffer size */
    public long bufferBytes() {
        return bufferBytes;
    }

    /**
     * @param dstHost a destination host index
     * @return indices of the ports on equal-cost shortest paths towards it (a copy)
     */
    public int[] route(final int dstHost) {
        return routes[dstHost].clone();
    }

    /** @return packets dropped for want of a route (every next hop down) */
    public long noRouteDrops() {
        return noRouteDrops;
    }

    @Override
    void receive(final long nowNs, final Packet p, final Port in) {
        final int[] hops = routes[p.dstHost];
        if (hops == null || hops.length == 0) {
            noRouteDrops++;
            network.pool.release(p);
            return;
        }
        final int choice;
        if (hops.length == 1) {
            choice = 0;
        } else if (config.loadBalancing() == LoadBalancing.SPRAY) {
            choice = random.nextInt(hops.length);
        } else {
            choice = (int) Long.remainderUnsigned(flowHash(p), hops.length);
        }
        admit(nowNs, p, in, ports.get(hops[choice]));
    }

    /** Hash of (source address, destination address, protocol, source port, destination port). */
    private long flowHash(final Packet p) {
        long h = hashSalt;
        h = mix(h ^ p.srcHost);
        h = mix(h ^ p.dstHost);
        h = mix(h ^ 17); // UDP
        h = mix(h ^ p.entropy);
        h = mix(h ^ WireConstants.DEFAULT_UDP_PORT);
        return h;
    }

    private static long mix(long x) {
        x ^= x >>> 33;
        x *= 0xff51afd7ed558ccdL;
        x ^= x >>> 33;
        x *= 0xc4ceb9fe1a85ec53L;
        x ^= x >>> 33;
        return x;
    }

    private void admit(final long nowNs, final Packet p, final Port in, final Port out) {
        final int bytes = p.wireBytes();
        if (config.ecnMarking() && p.ecn != DatagramEndpoint.ECN_NOT_ECT && p.ecn != DatagramEndpoint.ECN_CE
            && shouldMark(out.queuedBytes)) {
            p.ecn = DatagramEndpoint.ECN_CE;
            out.ecnMarks++;
        }
        if (fits(out, bytes)) {
            accept(nowNs, p, in, out, bytes, false);
            return;
        }
        if (config.trimming() && trim(p)) {
            final int trimmed = p.wireBytes();
            // Trimmed headers are small and go to the priority queue; they still need buffer.
            if (usedBytes + trimmed <= bufferBytes) {
                out.trims++;
                accept(nowNs, p, in, out, trimmed, true);
                return;
            }
        }
        out.tailDrops++;
        network.pool.release(p);
    }

    private boolean fits(final Port out, final int bytes) {
        if (usedBytes + bytes > bufferBytes) {
            return false;
        }
        if (config.pfc()) {
            // Lossless class: PFC, not per-port admission, keeps the buffer from overflowing.
            return true;
        }
        return out.queuedBytes + bytes <= config.dynamicThresholdAlpha() * (bufferBytes - usedBytes);
    }

    private void accept(final long nowNs, final Packet p, final Port in, final Port out, final int bytes,
                        final boolean priority) {
        usedBytes += bytes;
        if (usedBytes > maxUsedBytes) {
            maxUsedBytes = usedBytes;
        }
        p.ingress = in;
        p.chargedBytes = bytes;
        in.ingressBytes += bytes;
        if (config.pfc() && !in.pauseSent && in.ingressBytes > config.pfcXoffBytes()) {
            in.signalPeer(nowNs, true);
        }
        out.enqueue(nowNs, p, priority);
    }

    @Override
    void onDequeued(final long nowNs, final Packet p, final Port out) {
        final Port in = p.ingress;
        usedBytes -= p.chargedBytes;
        in.ingressBytes -= p.chargedBytes;
        p.ingress = null;
        p.chargedBytes = 0;
        if (in.pauseSent && in.ingressBytes <= config.pfcXonBytes()) {
            in.signalPeer(nowNs, false);
        }
    }

    private boolean shouldMark(final long queuedBytes) {
        if (queuedBytes <= config.ecnMinBytes()) {
            return false;
        }
        if (queuedBytes >= config.ecnMaxBytes()) {
            return true;
        }
        final double fraction = (double) (queuedBytes - config.ecnMinBytes())
            / Math.max(1, config.ecnMaxBytes() - config.ecnMinBytes());
        return random.nextDouble() < fraction * config.ecnMaxProbability();
    }

    /**
     * Trims a data packet to its headers as [WIRE-042] prescribes: TRIMMED flag set, Payload
     * Length zero, payload and Integrity Check removed.
     *
     * @return false when the packet may not be trimmed (no payload, wrong opcode, already trimmed)
     */
    static boolean trim(final Packet p) {
        if (p.length < BaseHeader.LENGTH) {
            return false;
        }
        final int code = BaseHeader.opcode(p.buffer, 0);
        final boolean trimmable = code == Opcode.SEND.value() || code == Opcode.SEND_WITH_IMM.value()
            || code == Opcode.WRITE.value() || code == Opcode.WRITE_WITH_IMM.value()
            || code == Opcode.READ_RESPONSE.value();
        final int flags = BaseHeader.flags(p.buffer, 0);
        if (!trimmable || (flags & Flags.TRIMMED) != 0 || BaseHeader.payloadLength(p.buffer, 0) == 0) {
            return false;
        }
        p.buffer.putShort(BaseHeader.FLAGS_OFFSET, (short) (flags | Flags.TRIMMED), ByteOrder.BIG_ENDIAN);
        p.buffer.putShort(BaseHeader.PAYLOAD_LENGTH_OFFSET, (short) 0, ByteOrder.BIG_ENDIAN);
        p.length = BaseHeader.headerLengthWords(p.buffer, 0) * 4;
        return true;
    }
}
