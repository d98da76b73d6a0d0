// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.sim.net;

/**
 * Switch and NIC behaviour of a fabric. Mutable builder style; each setter validates and names
 * what it rejects. Thresholds are in bytes of wire occupancy (frames with their overhead).
 */
public final class FabricConfig {
    private LoadBalancing loadBalancing = LoadBalancing.ECMP;
    private boolean ecnMarking = true;
    private long ecnMinBytes = 40_000;
    private long ecnMaxBytes = 160_000;
    private double ecnMaxProbability = 0.2;
    private boolean trimming;
    private boolean pfc;
    private long pfcXoffBytes = 120_000;
    private long pfcXonBytes = 80_000;
    private long bufferBytesPerPort = 512 * 1024;
    private double dynamicThresholdAlpha = 1.0;
    private int nicQueuePackets = 2;

    public LoadBalancing loadBalancing() {
        return loadBalancing;
    }

    /** @param lb ECMP hashing or per-packet spraying @return this */
    public FabricConfig loadBalancing(final LoadBalancing lb) {
        if (lb == null) {
            throw new IllegalArgumentException("loadBalancing must not be null");
        }
        this.loadBalancing = lb;
        return this;
    }

    public boolean ecnMarking() {
        return ecnMarking;
    }

    public long ecnMinBytes() {
        return ecnMinBytes;
    }

    public long ecnMaxBytes() {
        return ecnMaxBytes;
    }

    public double ecnMaxProbability() {
        return ecnMaxProbability;
    }

    /**
     * RED-style ECN marking of ECN-capable packets on enqueue: no mark below {@code minBytes} of
     * queue, probability rising linearly to {@code maxProbability} at {@code maxBytes}, always
     * above.
     *
     * @param enabled whether switches mark at all
     * @param minBytes Kmin
     * @param maxBytes Kmax, at least Kmin
     * @param maxProbability Pmax in (0, 1]
     * @return this
     */
    public FabricConfig ecn(final boolean enabled, final long minBytes, final long maxBytes, final double maxProbability) {
        if (minBytes < 0 || maxBytes < minBytes) {
            throw new IllegalArgumentException("ECN thresholds need 0 <= Kmin <= Kmax, got " + minBytes + ", " + maxBytes);
        }
        if (!(maxProbability > 0 && maxProbability <= 1)) {
            throw new IllegalArgumentException("ECN Pmax must be in (0, 1], got " + maxProbability);
        }
        this.ecnMarking = enabled;
        this.ecnMinBytes = minBytes;
        this.ecnMaxBytes = maxBytes;
        this.ecnMaxProbability = maxProbability;
        return this;
    }

    public boolean trimming() {
        return trimming;
    }

    /** @param enabled trim data packets to their header instead of dropping them [WIRE-042] @return this */
    public FabricConfig trimming(final boolean enabled) {
        this.trimming = enabled;
        return this;
    }

    public boolean pfc() {
        return pfc;
    }

    public long pfcXoffBytes() {
        return pfcXoffBytes;
    }

    public long pfcXonBytes() {
        return pfcXonBytes;
    }

    /**
     * Priority flow control: a switch pauses the upstream port of an ingress whose queued bytes
     * exceed XOFF and resumes it below XON.
     *
     * @param enabled whether PFC runs
     * @param xoffBytes pause threshold per ingress port
     * @param xonBytes resume threshold, below XOFF
     * @return this
     */
    public FabricConfig pfc(final boolean enabled, final long xoffBytes, final long xonBytes) {
        if (xonBytes < 0 || xonBytes >= xoffBytes) {
            throw new IllegalArgumentException("PFC needs 0 <= XON < XOFF, got XON " + xonBytes + ", XOFF " + xoffBytes);
        }
        this.pfc = enabled;
        this.pfcXoffBytes = xoffBytes;
        this.pfcXonBytes = xonBytes;
        return this;
    }

    /** @param enabled PFC with the current thresholds @return this */
    public FabricConfig pfc(final boolean enabled) {
        return pfc(enabled, pfcXoffBytes, pfcXonBytes);
    }

    public long bufferBytesPerPort() {
        return bufferBytesPerPort;
    }

    /** @param bytes shared switch buffer per port (a switch's buffer is this times its ports) @return this */
    public FabricConfig bufferBytesPerPort(final long bytes) {
        if (bytes < Packet.MAX_BYTES + Packet.FRAME_OVERHEAD_BYTES) {
            throw new IllegalArgumentException("bufferBytesPerPort must hold at least one jumbo frame, got " + bytes);
        }
        this.bufferBytesPerPort = bytes;
        return this;
    }

    public double dynamicThresholdAlpha() {
        return dynamicThresholdAlpha;
    }

    /**
     * @param alpha dynamic-threshold factor of the shared buffer: without PFC a port may queue at
     *     most alpha times the free buffer (the usual Broadcom-style admission)
     * @return this
     */
    public FabricConfig dynamicThresholdAlpha(final double alpha) {
        if (!(alpha > 0)) {
            throw new IllegalArgumentException("dynamicThresholdAlpha must be > 0, got " + alpha);
        }
        this.dynamicThresholdAlpha = alpha;
        return this;
    }

    public int nicQueuePackets() {
        return nicQueuePackets;
    }

    /** @param packets packets a host NIC accepts ahead of the one on the wire (back-pressure to the engine) @return this */
    public FabricConfig nicQueuePackets(final int packets) {
        if (packets < 1) {
            throw new IllegalArgumentException("nicQueuePackets must be >= 1, got " + packets);
        }
        this.nicQueuePackets = packets;
        return this;
    }

    @Override
    public String toString() {
        return "lb=" + loadBalancing + " ecn=" + (ecnMarking ? ecnMinBytes + ".." + ecnMaxBytes + "@" + ecnMaxProbability : "off")
            + " trim=" + trimming + " pfc=" + (pfc ? pfcXoffBytes + "/" + pfcXonBytes : "off")
            + " buffer/port=" + bufferBytesPerPort;
    }
}
