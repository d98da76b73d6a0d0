// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.sim.workload;

/** N:1 incast: every sender writes the same amount into one receiver at the same instant. */
public final class Incast extends FlowSetWorkload {
    private final int receiver;
    private final int[] senders;
    private final long bytes;

    /**
     * @param receiver host index of the receiver
     * @param senders host indices of the senders
     * @param bytes bytes per sender
     */
    public Incast(final int receiver, final int[] senders, final long bytes) {
        if (senders.length == 0) {
            throw new IllegalArgumentException("incast needs at least one sender");
        }
        this.receiver = receiver;
        this.senders = senders.clone();
        this.bytes = bytes;
    }

    @Override
    public String name() {
        return "incast-" + senders.length + ":1";
    }

    @Override
    void schedule(final Traffic t) {
        expect(senders.length);
        final long now = t.network().simulator().nowNs();
        for (final int s : senders) {
            start(now, s, receiver, bytes, name());
        }
    }
}
