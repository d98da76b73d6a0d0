// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.congestion;

/**
 * A constant window and no pacing: the baseline against which adaptive algorithms are measured,
 * and the engine's default until a QP is configured otherwise.
 */
public final class FixedWindowCongestionControl implements CongestionControl {
    private final int windowPackets;

    /**
     * @param windowPackets packets allowed in flight, at least 1
     */
    public FixedWindowCongestionControl(final int windowPackets) {
        if (windowPackets < 1) {
            throw new IllegalArgumentException("window must be at least 1 packet, got " + windowPackets);
        }
        this.windowPackets = windowPackets;
    }

    @Override
    public int windowPackets() {
        return windowPackets;
    }

    @Override
    public long nextSendTimeNs(final long nowNs) {
        return nowNs;
    }

    @Override
    public void onPacketSent(final long nowNs, final int bytes, final int pathId) {
        // A fixed window does not react.
    }

    @Override
    public void onAck(final long nowNs, final int packets, final long rttNs, final boolean ecnEcho, final int pathId) {
        // A fixed window does not react.
    }

    @Override
    public void onLoss(final long nowNs, final int pathId, final boolean trimmed) {
        // A fixed window does not react.
    }

    @Override
    public void onRetransmitTimeout(final long nowNs) {
        // A fixed window does not react.
    }

    @Override
    public String toString() {
        return "FixedWindow{" + windowPackets + " packets}";
    }
}
