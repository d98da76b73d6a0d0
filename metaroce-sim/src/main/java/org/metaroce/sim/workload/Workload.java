// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.sim.workload;

/** Traffic a scenario runs: it schedules flows and knows when it is complete. */
public interface Workload {
    /** @return short name, e.g. {@code incast-32:1} */
    String name();

    /**
     * Schedules the workload's flows (now or later) on the traffic's simulator.
     *
     * @param traffic where flows are started
     */
    void start(Traffic traffic);

    /** @return whether every flow it will ever start has completed */
    boolean isDone();

    /** @return time from the first flow's start to the workload's completion, or -1 if not done (the collective completion time) */
    long completionNs();
}
