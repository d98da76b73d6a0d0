// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.cli;

import java.io.PrintWriter;

import org.metaroce.core.connection.CmEvent;
import org.metaroce.core.connection.Connection;
import org.metaroce.core.engine.QueuePair;
import org.metaroce.core.engine.QueuePairCapabilities;
import org.metaroce.core.verbs.RecvRequest;
import org.metaroce.core.verbs.SendFlags;
import org.metaroce.core.verbs.SendRequest;
import org.metaroce.core.verbs.WcStatus;
import org.metaroce.core.verbs.WorkCompletion;
import org.metaroce.core.verbs.WrOpcode;

/**
 * One end's benchmark logic, a state machine advanced by {@link #doWork()} on the benchmark
 * thread: it consumes connection-manager events and completions and posts work requests through
 * the side's {@link Poster}. Nothing on the measured path allocates.
 */
abstract class Agent {
    /** Work request ids: connection index (0 = control) in the high half, slot or sequence in the low half. */
    static long wrId(final int index, final long slot) {
        return ((long) index << 32) | (slot & 0xFFFF_FFFFL);
    }

    static int indexOf(final long wrId) {
        return (int) (wrId >>> 32);
    }

    static int slotOf(final long wrId) {
        return (int) wrId;
    }

    static QueuePairCapabilities controlCaps() {
        return new QueuePairCapabilities(8, 8, 1, 1, 1);
    }

    final Side side;
    final BenchConfig config;
    final WorkCompletion[] wcs = new WorkCompletion[64];
    final SendRequest sendWr = new SendRequest(1);
    final RecvRequest recvWr = new RecvRequest(1);
    private final SendRequest controlWr = new SendRequest(1);
    private final RecvRequest controlRecv = new RecvRequest(1);
    private volatile boolean done;
    private volatile Throwable failure;
    /** Where {@code --counters} prints: the command's stderr once the tool has set it. */
    private volatile PrintWriter diagnostics = new PrintWriter(System.err, true);

    Agent(final Side side, final BenchConfig config) {
        this.side = side;
        this.config = config;
        for (int i = 0; i < wcs.length; i++) {
            wcs[i] = new WorkCompletion();
        }
    }

    /** @return work done (0 lets the thread idle) */
    final int doWork() {
        if (done) {
            return 0;
        }
        try {
            final int work = work();
            side.poster.flush();
            side.poster.check();
            return work;
        } catch (final RuntimeException | Error ex) {
            fail(ex);
            return 1;
        }
    }

    abstract int work();

    /** Sets where {@code --counters} prints (the command line's stderr, which tests capture). */
    final void diagnostics(final PrintWriter err) {
        diagnostics = err;
    }

    /** Called when the run is abandoned (the other end failed): release what can be. */
    void abort() {
        finish("aborted");
    }

    final void fail(final Throwable t) {
        if (failure == null) {
            failure = t;
            // A failed run is when the counters are needed most (retransmissions before a
            // RETRY_EXC_ERR, drops, timeouts): print them as a finished run does.
            if (config.counters() && !done) {
                CounterDump.print(side, config.countersJson(), "failed", diagnostics);
            }
            if (Boolean.getBoolean("metaroce.debug")) {
                System.err.println(side.name + " failed: " + t + "\n  driver: " + side.device.counters()
                    + "\n  endpoint: " + side.device.endpoint().counters() + "\n  wire: "
                    + side.device.endpoint().wireCounters() + "\n  cm: " + side.cm.counters());
                t.printStackTrace();
            }
        }
        done = true;
    }

    final void finish() {
        finish("ok");
    }

    private void finish(final String outcome) {
        if (config.counters() && !done) {
            CounterDump.print(side, config.countersJson(), outcome, diagnostics);
        }
        done = true;
    }

    /**
     * @return whether this end only waits for its peer to connect: nothing can happen before a
     *     datagram arrives, so the loop may block on the socket instead of spinning (a perftest
     *     server waiting for its client spins a core; ours need not)
     */
    boolean waitingForPeer() {
        return false;
    }

    final boolean isDone() {
        return done;
    }

    final Throwable failure() {
        return failure;
    }

    /** @return the next connection-manager event for the benchmark thread, or null */
    final CmEvent nextEvent() {
        return side.events.poll();
    }

    /** Owning thread: posts control receive {@code slot} (0 or 1). */
    final void postControlRecv(final QueuePair qp, final int slot) {
        controlRecv.clear().wrId(wrId(0, slot)).addSge(side.controlMr.address() + (long) slot * Side.CONTROL_SLOT,
            Side.CONTROL_SLOT, side.controlMr.lkey());
        side.poster.postRecv(qp, controlRecv);
    }

    /** Owning thread only (connection setup): posts a control receive directly. */
    final void postControlRecvDirect(final QueuePair qp, final int slot) {
        controlRecv.clear().wrId(wrId(0, slot)).addSge(side.controlMr.address() + (long) slot * Side.CONTROL_SLOT,
            Side.CONTROL_SLOT, side.controlMr.lkey());
        final int status = qp.postRecv(controlRecv);
        if (status != org.metaroce.core.verbs.PostStatus.OK) {
            throw new BenchException(Poster.recvRefusal(qp, controlRecv, status));
        }
    }

    /** Sends the control message written at control slot 2. */
    final void sendControl(final Connection control) {
        sendControl(control, 2);
    }

    /** Sends the control message in {@code slot} (2: DONE or RESULT; 3: MARK). */
    final void sendControl(final Connection control, final int slot) {
        controlWr.clear().wrId(wrId(0, slot)).opcode(WrOpcode.SEND).sendFlags(SendFlags.SIGNALED)
            .addSge(side.controlMr.address() + (long) slot * Side.CONTROL_SLOT, Messages.CONTROL_LENGTH,
                side.controlMr.lkey());
        side.poster.postSend(control.queuePair(), controlWr);
        side.poster.flush();
    }

    /** @return the control slot's offset in the control region */
    static int controlOffset(final int slot) {
        return slot * Side.CONTROL_SLOT;
    }

    /**
     * The error for a failed completion, root cause first: why its queue pair failed when the
     * engine knows (a flushed receive otherwise says only that the QP is in error), then the
     * completion itself.
     */
    final BenchException completionError(final WorkCompletion wc, final String what) {
        final QueuePair qp = queuePair(wc.qpNum());
        final String why = qp == null ? null : qp.failure();
        if (why != null) {
            // With the last events of its trace: what it did just before (times relative to the failure).
            final java.util.List<String> trace = qp.failureTrace();
            return new BenchException("queue pair " + wc.qpNum() + " failed: " + why + "; " + what + " completed with "
                + wc.status() + (trace.isEmpty() ? "" : "\nlast events of the queue pair:\n  "
                    + String.join("\n  ", trace)));
        }
        final String hint = wc.status() == WcStatus.RETRY_EXC_ERR ? " (the peer stopped answering)"
            : wc.status() == WcStatus.WR_FLUSH_ERR ? " (the queue pair is in error)" : "";
        return new BenchException(what + " failed on QP " + wc.qpNum() + ": " + wc.status() + hint);
    }

    /** @return this agent's queue pair with that number, or null */
    abstract QueuePair queuePair(int qpn);

    static QueuePair find(final QueuePair[] qps, final int qpn) {
        if (qps != null) {
            for (final QueuePair qp : qps) {
                if (qp != null && qp.qpn() == qpn) {
                    return qp;
                }
            }
        }
        return null;
    }
}
