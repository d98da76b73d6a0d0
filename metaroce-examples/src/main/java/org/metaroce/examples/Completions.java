// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.examples;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import org.metaroce.core.verbs.CompletionQueue;
import org.metaroce.core.verbs.WcStatus;
import org.metaroce.core.verbs.WorkCompletion;
import org.metaroce.netty.MetaRoceDevice;

/**
 * Waits for a completion on an INVOKER device: the thread that polls the completion queue is the
 * one that owns the device, so it also drives it ({@code doWork}), and rests in
 * {@code awaitWork} (which returns as soon as a datagram arrives) when there was nothing to do.
 */
public final class Completions {
    /** How long an example waits for one completion. */
    public static final long TIMEOUT_S = 10;
    private static final long IDLE_WAIT_NS = TimeUnit.MILLISECONDS.toNanos(1);

    private Completions() {
    }

    /**
     * @param device an INVOKER device owned by the calling thread
     * @param cq one of its completion queues
     * @return the next completion, which succeeded
     * @throws TimeoutException if none arrives within {@link #TIMEOUT_S} seconds
     * @throws IllegalStateException if it completed with an error status (the message names it)
     */
    public static WorkCompletion next(final MetaRoceDevice device, final CompletionQueue cq) throws TimeoutException {
        final WorkCompletion[] wc = {new WorkCompletion()};
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(TIMEOUT_S);
        while (cq.poll(wc, 1) == 0) {
            if (System.nanoTime() - deadline > 0) {
                throw new TimeoutException("no completion within " + TIMEOUT_S + " s");
            }
            if (device.doWork() == 0) {
                device.awaitWork(IDLE_WAIT_NS);
            }
        }
        if (wc[0].status() != WcStatus.SUCCESS) {
            throw new IllegalStateException("work request failed: " + wc[0]);
        }
        return wc[0];
    }
}
