// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.sim.workload;

/** All-to-all: every host writes the same amount to every other host at once. */
public final class AllToAll extends FlowSetWorkload {
    private final int hosts;
    private final long bytesPerPair;

    /**
     * @param hosts number of hosts (indices 0..hosts-1)
     * @param bytesPerPair bytes each host sends to each other host
     */
    public AllToAll(final int hosts, final long bytesPerPair) {
        if (hosts < 2) {
            throw new IllegalArgumentException("all-to-all needs at least 2 hosts");
        }
        this.hosts = hosts;
        this.bytesPerPair = bytesPerPair;
    }

    @Override
    public String name() {
        return "all-to-all";
    }

    @Override
    void schedule(final Traffic t) {
        expect(hosts * (hosts - 1));
        final long now = t.network().simulator().nowNs();
        // Each host starts with a different peer so the first packets are not all aimed at host 0.
        for (int shift = 1; shift < hosts; shift++) {
            for (int i = 0; i < hosts; i++) {
                start(now, i, (i + shift) % hosts, bytesPerPair, name());
            }
        }
    }
}
