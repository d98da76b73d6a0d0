// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.sim.workload;

/** Told when a flow completes (collectives chain their steps on it). */
@FunctionalInterface
public interface FlowListener {
    /**
     * @param nowNs completion time
     * @param flow the completed flow
     */
    void onFlowDone(long nowNs, Flow flow);
}
