// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.sim.workload;

/**
 * N:1 incast: every sender writes the same amount into one receiver at the same instant. The QP
 * pairs are connected {@link #CONNECT_LEAD_NS} before the burst, as RDMA applications connect at
 * initialisation and then start their traffic (NCCL, MPI); FCTs and the completion time count
 * from the burst.
 */
public final class Incast extends FlowSetWorkload {
    /** Time between connecting every QP pair and the burst: longer than any one-way trip of the fabrics built here. */
    public static final long CONNECT_LEAD_NS = 20_000;
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
            t.connect(now, s, receiver);
        }
        t.network().simulator().schedule(now + CONNECT_LEAD_NS, (at, subject, arg) -> {
            for (final int s : senders) {
                start(at, s, receiver, bytes, name());
            }
        }, null, 0);
    }
}
