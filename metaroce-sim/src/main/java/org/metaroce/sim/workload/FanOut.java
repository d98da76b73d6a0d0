// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.sim.workload;

/**
 * 1:N fan-out: one sender writes the same amount to every other host at the same instant. Every
 * flow leaves through the sender's link, so a fault on that link reaches all of them equally,
 * whatever the paths the fabric picks.
 */
public final class FanOut extends FlowSetWorkload {
    private final int sender;
    private final int[] receivers;
    private final long bytes;

    /**
     * @param sender host index of the sender
     * @param receivers host indices of the receivers
     * @param bytes bytes per receiver
     */
    public FanOut(final int sender, final int[] receivers, final long bytes) {
        if (receivers.length == 0) {
            throw new IllegalArgumentException("fan-out needs at least one receiver");
        }
        this.sender = sender;
        this.receivers = receivers.clone();
        this.bytes = bytes;
    }

    @Override
    public String name() {
        return "fanout-1:" + receivers.length;
    }

    @Override
    void schedule(final Traffic t) {
        expect(receivers.length);
        final long now = t.network().simulator().nowNs();
        for (final int r : receivers) {
            start(now, sender, r, bytes, name());
        }
    }
}
