// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.sim.workload;

/**
 * Base of workloads that know how many flows they will start: counts completions, remembers the
 * first start and last completion, and stops the simulator when the last flow is done.
 */
abstract class FlowSetWorkload implements Workload, FlowListener {
    private int expected;
    private int completed;
    private long firstStartNs = -1;
    private long lastEndNs = -1;
    Traffic traffic;

    void expect(final int flows) {
        expected += flows;
    }

    Flow start(final long nowNs, final int src, final int dst, final long bytes, final String tag) {
        return start(nowNs, src, dst, bytes, tag, false);
    }

    Flow start(final long nowNs, final int src, final int dst, final long bytes, final String tag,
               final boolean dedicatedQp) {
        if (firstStartNs < 0) {
            firstStartNs = nowNs;
        }
        return traffic.startFlow(nowNs, src, dst, bytes, tag, this, dedicatedQp);
    }

    @Override
    public void onFlowDone(final long nowNs, final Flow flow) {
        completed++;
        lastEndNs = Math.max(lastEndNs, nowNs);
        afterFlowDone(nowNs, flow);
        if (isDone()) {
            traffic.network().simulator().stop();
        }
    }

    /** Hook for workloads that chain flows. */
    void afterFlowDone(final long nowNs, final Flow flow) {
    }

    @Override
    public boolean isDone() {
        return expected > 0 && completed == expected;
    }

    @Override
    public long completionNs() {
        return isDone() ? lastEndNs - firstStartNs : -1;
    }

    @Override
    public void start(final Traffic t) {
        this.traffic = t;
        schedule(t);
    }

    abstract void schedule(Traffic t);
}
