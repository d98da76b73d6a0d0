// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.sim.workload;

/**
 * One message transfer: {@code bytes} written from {@code src} into {@code dst}'s memory as RDMA
 * WRITEs, the last one WRITE_WITH_IMM. It completes when the destination's receive completion for
 * the immediate arrives, i.e. when the receiver holds every byte (the usual FCT definition).
 */
public final class Flow {
    private final int id;
    private final int src;
    private final int dst;
    private final long bytes;
    private final long startNs;
    private final long idealNs;
    private final String tag;
    private final FlowListener listener;
    long endNs = -1;
    String error;

    Flow(final int id, final int src, final int dst, final long bytes, final long startNs, final long idealNs,
         final String tag, final FlowListener listener) {
        this.id = id;
        this.src = src;
        this.dst = dst;
        this.bytes = bytes;
        this.startNs = startNs;
        this.idealNs = idealNs;
        this.tag = tag;
        this.listener = listener;
    }

    public int id() {
        return id;
    }

    public int src() {
        return src;
    }

    public int dst() {
        return dst;
    }

    public long bytes() {
        return bytes;
    }

    public long startNs() {
        return startNs;
    }

    /** @return completion time, or -1 while running */
    public long endNs() {
        return endNs;
    }

    /** @return whether the receiver has every byte */
    public boolean isDone() {
        return endNs >= 0;
    }

    /** @return why it failed (error completion), or null */
    public String error() {
        return error;
    }

    /** @return the flow's label, e.g. the workload or step it belongs to */
    public String tag() {
        return tag;
    }

    /** @return flow completion time in ns, or -1 while running */
    public long fctNs() {
        return endNs < 0 ? -1 : endNs - startNs;
    }

    /** @return FCT of the flow alone on an idle fabric (see {@link Traffic#idealFctNs}) */
    public long idealNs() {
        return idealNs;
    }

    /** @return FCT over ideal FCT */
    public double slowdown() {
        return endNs < 0 ? Double.NaN : (double) fctNs() / idealNs;
    }

    FlowListener listener() {
        return listener;
    }
}
