// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.sim.net;

import org.metaroce.core.verbs.WorkCompletion;

/** Receives the work completions a simulated host's completion queues produce. */
@FunctionalInterface
public interface CompletionListener {
    /**
     * @param nowNs virtual time the completion was polled (the time of the event that produced it)
     * @param host the host whose completion queue held it
     * @param wc the completion; valid only during this call
     * @param send whether it came from the send completion queue
     */
    void onCompletion(long nowNs, Host host, WorkCompletion wc, boolean send);
}
