// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.cli;

import java.io.PrintWriter;
import java.net.InetSocketAddress;
import java.util.Locale;
import java.util.concurrent.TimeUnit;

import org.HdrHistogram.Histogram;
import org.agrona.concurrent.UnsafeBuffer;
import org.metaroce.core.connection.CmEvent;
import org.metaroce.core.connection.CmReason;
import org.metaroce.core.connection.ConnectParams;
import org.metaroce.core.connection.Connection;
import org.metaroce.core.engine.QueuePair;
import org.metaroce.core.engine.QueuePairCapabilities;
import org.metaroce.core.verbs.AccessFlags;
import org.metaroce.core.verbs.SendFlags;
import org.metaroce.core.verbs.WcStatus;
import org.metaroce.core.verbs.WorkCompletion;
import org.metaroce.core.verbs.WrOpcode;
import org.metaroce.netty.ThreadingMode;

/**
 * The client: connects the control queue pair and the data queue pairs through the connection
 * manager, runs the warm-up and the measured iterations, sends DONE, waits for the server's
 * RESULT, disconnects. Bandwidth tests keep {@code txDepth} work requests outstanding per queue
 * pair and time the run from the first post to the last completion; latency tests time each
 * operation from its post to its completion (to the answer's receive completion for ping-pong).
 */
final class ClientAgent extends Agent {
    private static final long SAMPLE_NS = TimeUnit.MILLISECONDS.toNanos(100);
    private static final long PROGRESS_NS = TimeUnit.SECONDS.toNanos(1);
    private static final long RESULT_TIMEOUT_NS = TimeUnit.SECONDS.toNanos(15);
    /** With RETRY_TIMEOUT 0 (retry counts alone), a warm-up or drain still waits this long for a completion. */
    private static final long STALL_MIN_NS = TimeUnit.SECONDS.toNanos(15);
    /** How far past RETRY_TIMEOUT a silent warm-up or drain is declared stalled. */
    private static final long STALL_SLACK_NS = TimeUnit.SECONDS.toNanos(10);
    private static final long DISCONNECT_TIMEOUT_NS = TimeUnit.SECONDS.toNanos(3);
    private static final long ECHO_TIMEOUT_NS = TimeUnit.MILLISECONDS.toNanos(200);
    private static final long HISTOGRAM_MAX_NS = TimeUnit.SECONDS.toNanos(60);

    private enum Phase { CONNECTING, WARMUP, MEASURE, DRAIN, FINISHING, DISCONNECTING, DONE }

    private final TestKind kind;
    private final InetSocketAddress server;
    private final PrintWriter err;
    private final int qps;
    private final int size;
    private final int slots;
    private final int connections;
    private final boolean wake;
    private final Connection[] conns;
    private final QueuePair[] qps_;
    private final Messages.Region[] remote;
    private final long[] posted;
    private final long[] completed;
    private final long[] limit;
    private final Report report;
    private final Histogram histogram;
    private final UnsafeBuffer local;
    private RawTraffic raw;
    private Phase phase = Phase.CONNECTING;
    private Runnable onStart;
    private int established;
    private int disconnected;
    private long deadlineNs;
    /** When the warm-up or the drain (the phases that wait for every QP) began. */
    private long waitStartNs;
    /** When the latest completion arrived, in any phase. */
    private long lastAnyCompletionNs;

    // measurement
    private long t0;
    private long lastCompletionNs;
    private long measured;
    /** Duration mode: measuring, but still within the margin whose results are discarded. */
    private boolean inMargin;
    private long marginEndNs;
    private long nextSampleNs;
    private long sampleMessages;
    private long sampleNs;
    private long nextProgressNs;
    private double peakBps;

    // latency
    private boolean opOutstanding;
    private long opStartNs;
    private long opCount;
    private long recvSeq;
    private long sendsPosted;
    private long sendsCompleted;
    private long rawBase;
    private long rawWarmupTarget;

    /**
     * Builds the client's memory and starts connecting (call on the benchmark thread after the
     * side was built).
     */
    ClientAgent(final Side side, final BenchConfig config, final InetSocketAddress server, final PrintWriter err) {
        super(side, config);
        this.kind = config.kind();
        this.server = server;
        this.err = err;
        this.qps = kind.raw ? 0 : config.qps();
        this.size = config.size();
        this.slots = config.slots();
        this.connections = 1 + qps;
        this.wake = config.mode() != BenchConfig.Mode.invoker;
        conns = new Connection[connections];
        qps_ = new QueuePair[connections];
        remote = new Messages.Region[connections];
        posted = new long[connections];
        completed = new long[connections];
        limit = new long[connections];
        report = new Report(kind, config);
        report.halfRoundTrip = kind.pingPong;
        histogram = kind.bandwidth ? null : new Histogram(1, HISTOGRAM_MAX_NS, 3);
        final long bytes = regionBytes();
        final int cq = Math.max(16, qps * (config.txDepth() + recvDepth() + 8));
        side.device.call(ep -> {
            side.allocateData(bytes, cq);
            if (kind.raw) {
                raw = new RawTraffic(side.device, side.cm, size, config.mtu(), wake);
                ep.connectionManager(raw);
            }
            return null;
        });
        local = side.dataMr.buffer();
        if (config.verify()) {
            fillSources();
        }
        final int peer = side.device.peerId(server);
        final byte[] hello = hello(0);
        final int[] paths = side.device.entropyPorts();
        side.onOwner(() -> {
            final Connection c = side.cm.connect(new ConnectParams().peer(peer).serviceId(kind.controlService())
                .resources(side.pd, side.controlCq, side.controlCq, controlCaps()).accessFlags(AccessFlags.ALL)
                .pathMtu(config.mtu()).paths(paths).timeoutNs(config.initialRtoNs()).privateData(hello).context(0));
            postControlRecvDirect(c.queuePair(), 0);
            postControlRecvDirect(c.queuePair(), 1);
        });
        deadlineNs = System.nanoTime() + config.connectTimeoutNs() + TimeUnit.SECONDS.toNanos(5);
    }

    Report report() {
        return report;
    }

    private int recvDepth() {
        return kind.clientReceives() ? slots : 1;
    }

    /** Client memory: bandwidth tests qps x slots x size; ping-pong a source slot and the answer slots. */
    private long regionBytes() {
        if (kind.raw) {
            return 64;
        }
        if (kind == TestKind.ATOMIC_LAT) {
            return 64;
        }
        if (kind.pingPong) {
            return (long) (1 + slots) * size;
        }
        return (long) qps * slots * size;
    }

    private long slotAddress(final int q, final int slot) {
        return side.dataMr.address() + ((long) (q - 1) * slots + slot) * size;
    }

    private long slotOffset(final int q, final int slot) {
        return ((long) (q - 1) * slots + slot) * size;
    }

    private void fillSources() {
        if (kind == TestKind.WRITE_BW || kind == TestKind.SEND_BW) {
            for (int q = 1; q <= qps; q++) {
                for (int k = 0; k < slots; k++) {
                    Pattern.fill(local, slotOffset(q, k), size, q, k);
                }
            }
        } else if (kind.pingPong && !kind.raw) {
            Pattern.fill(local, 0, size, 1, 0);
        }
    }

    private byte[] hello(final int index) {
        final int flags = (config.verify() ? Messages.FLAG_VERIFY : 0)
            | (config.compareSwap() ? Messages.FLAG_COMPARE_SWAP : 0);
        long address = 0;
        long length = 0;
        if (index > 0 && kind.pingPong) {
            // The server answers into the answer slots (write_lat writes there).
            address = side.dataMr.address() + size;
            length = (long) slots * size;
        }
        return new Messages.Hello(kind, index, kind.raw ? 1 : qps, size, slots, flags, config.txDepth(),
            config.rxDepth(), address, side.dataMr.rkey(), config.mtu(), length).encode();
    }

    // ------------------------------------------------------------------ the state machine

    @Override
    int work() {
        int work = events();
        work += control();
        switch (phase) {
            case CONNECTING -> {
                if (System.nanoTime() - deadlineNs > 0) {
                    throw new BenchException("server " + describe(server) + " did not complete the handshake");
                }
            }
            case WARMUP, MEASURE, DRAIN -> work += kind.raw ? (kind.bandwidth ? rawBandwidth() : rawLatency())
                : kind.bandwidth ? bandwidth() : latency();
            case FINISHING -> {
                if (System.nanoTime() - deadlineNs > 0) {
                    throw new BenchException("no result from the server within "
                        + TimeUnit.NANOSECONDS.toSeconds(RESULT_TIMEOUT_NS) + " s after the run");
                }
            }
            case DISCONNECTING -> {
                if (disconnected >= connections || System.nanoTime() - deadlineNs > 0) {
                    phase = Phase.DONE;
                    finish();
                }
            }
            default -> {
            }
        }
        return work;
    }

    private int events() {
        int n = 0;
        CmEvent e;
        while ((e = nextEvent()) != null) {
            n++;
            final Connection c = e.connection();
            final int index = c != null && c.context() instanceof Integer i ? i : -1;
            switch (e.type()) {
                case ESTABLISHED -> onEstablished(c, index, e);
                case REJECTED -> throw rejected(e);
                case UNREACHABLE -> throw new BenchException("server " + describe(server) + " unreachable after "
                    + seconds(config.connectTimeoutNs()) + " (no answer to CONNECT_REQUEST)");
                case CONNECT_ERROR -> throw new BenchException("connection to " + describe(server)
                    + " failed during the handshake (" + CmReason.name(e.reason()) + ")");
                case DISCONNECTED -> {
                    if (phase == Phase.DISCONNECTING) {
                        disconnected++;
                    } else {
                        throw new BenchException("connection to " + describe(server) + " lost during the run ("
                            + CmReason.name(e.reason()) + ")");
                    }
                }
                default -> {
                }
            }
        }
        return n;
    }

    private BenchException rejected(final CmEvent e) {
        if (e.reason() == CmReason.NO_LISTENER) {
            return new BenchException("no MetaRoCE listener for " + kind.command + " at " + describe(server)
                + " (CONNECT_REJECT NO_LISTENER; is the server running 'metaroce " + kind.command + "'?)");
        }
        final String text = new String(e.privateData(), java.nio.charset.StandardCharsets.UTF_8).trim();
        return new BenchException("server " + describe(server) + " rejected the connection (CONNECT_REJECT "
            + CmReason.name(e.reason()) + (text.isEmpty() ? "" : ": " + text) + ")");
    }

    /** @return e.g. "DEFAULT (ECN)", or "FIXED (fall-back from DEFAULT: reason)" [CC-008], [CC-034] */
    static String describeCc(final QueuePair qp) {
        final StringBuilder b = new StringBuilder(qp.congestionControlAlgorithm().name());
        final java.util.List<String> caps = new java.util.ArrayList<>();
        if ((qp.capabilities() & org.metaroce.core.wire.ConnectHeader.CAP_ECN) != 0) {
            caps.add("ECN");
        }
        if ((qp.capabilities() & org.metaroce.core.wire.ConnectHeader.CAP_RECEIVER_CREDIT) != 0) {
            caps.add("RECEIVER_CREDIT");
        }
        if (!caps.isEmpty()) {
            b.append(" (").append(String.join(", ", caps)).append(')');
        }
        if (qp.ccFallbackReason() != null) {
            b.append("; fall-back from ").append(qp.requestedCongestionControlAlgorithm()).append(": ")
                .append(qp.ccFallbackReason());
        }
        return b.toString();
    }

    private void onEstablished(final Connection c, final int index, final CmEvent e) {
        if (index < 0 || index >= connections || conns[index] != null) {
            return;
        }
        conns[index] = c;
        qps_[index] = c.queuePair();
        established++;
        if (index == 0) {
            report.local = describe(side.address());
            report.remote = describe(server);
            report.negotiatedMtu = c.pathMtu();
            report.negotiatedPaths = c.pathCount();
            report.transport = side.device.transport().name();
            report.gso = side.device.gsoActive();
            if (kind.raw) {
                raw.peer(c.remotePeer());
            } else {
                connectData();
            }
        } else {
            remote[index] = Messages.Region.decode(e.privateData());
            if (remote[index] == null) {
                throw new BenchException("the server's CONNECT_REPLY carries no memory description");
            }
            report.negotiatedMtu = c.pathMtu();
            report.negotiatedPaths = c.pathCount();
            if (index == 1) {
                report.cc = describeCc(c.queuePair());
            }
        }
        if (established == connections) {
            start(System.nanoTime());
        }
    }

    private void connectData() {
        final int peer = conns[0].remotePeer();
        final int[] paths = side.device.entropyPorts();
        final int sqDepth = Math.max(16, config.txDepth() + 8);
        final QueuePairCapabilities caps = new QueuePairCapabilities(sqDepth, recvDepth() + 8, 1, 1, 16);
        final byte[][] hellos = new byte[qps + 1][];
        for (int q = 1; q <= qps; q++) {
            hellos[q] = hello(q);
        }
        side.onOwner(() -> {
            for (int q = 1; q <= qps; q++) {
                final Connection c = side.cm.connect(config.applyCc(new ConnectParams().peer(peer)
                    .serviceId(kind.dataService()).resources(side.pd, side.dataCq, side.dataCq, caps)
                    .accessFlags(AccessFlags.ALL).pathMtu(config.mtu()).paths(paths).timeoutNs(config.initialRtoNs())
                    .privateData(hellos[q]).context(q).connectTimeoutNs(config.connectTimeoutNs()),
                    side.device.readsEcn()));
                if (kind.clientReceives()) {
                    for (int k = 0; k < slots; k++) {
                        postAnswerRecv(c.queuePair(), k, true);
                    }
                    recvSeq = slots;
                }
            }
        });
    }

    /** Posts the receive for answer {@code seq} (slot seq % slots). */
    private void postAnswerRecv(final QueuePair qp, final long seq, final boolean direct) {
        final int slot = (int) (seq % slots);
        recvWr.clear().wrId(wrId(1, slot));
        if (kind == TestKind.SEND_LAT) {
            recvWr.addSge(side.dataMr.address() + (long) (1 + slot) * size, size, side.dataMr.lkey());
        }
        if (direct) {
            final int status = qp.postRecv(recvWr);
            if (status != org.metaroce.core.verbs.PostStatus.OK) {
                throw new BenchException(Poster.recvRefusal(qp, recvWr, status));
            }
        } else {
            side.poster.postRecv(qp, recvWr);
        }
    }

    /**
     * @param action run once, on this thread, when every connection is up and the warm-up (or the
     *     measurement) is about to begin: the tool prints the run's parameters there, as perftest does
     */
    void onStart(final Runnable action) {
        this.onStart = action;
    }

    private void start(final long now) {
        final Runnable announce = onStart;
        onStart = null;
        if (announce != null) {
            announce.run();
        }
        if (config.warmup() > 0) {
            phase = Phase.WARMUP;
            waitStartNs = now;
            nextProgressNs = now + PROGRESS_NS;
            for (int q = 1; q <= qps; q++) {
                limit[q] = config.warmup();
            }
            if (kind.raw) {
                rawWarmupTarget = config.warmup() * (kind.bandwidth ? raw.datagramsPerMessage() : 1);
                if (kind.bandwidth) {
                    raw.addTarget(rawWarmupTarget);
                }
            }
        } else {
            startMeasure(now);
        }
    }

    private void startMeasure(final long now) {
        phase = Phase.MEASURE;
        inMargin = config.timed() && config.marginNs() > 0;
        marginEndNs = now + config.marginNs();
        restartMeasurement(now);
        if (!inMargin) {
            markWindow();
        }
        final long extra = config.timed() ? Long.MAX_VALUE / 4 : config.iterations();
        for (int q = 1; q <= qps; q++) {
            limit[q] = config.warmup() + extra;
        }
        if (kind.raw && kind.bandwidth) {
            raw.addTarget(config.timed() ? Long.MAX_VALUE / 4 : config.iterations() * raw.datagramsPerMessage());
        }
    }

    /**
     * Duration mode: at the end of the margin the counts, the histogram and the clock start again,
     * so the averages cover only the {@code -D} seconds after it (perftest's {@code --margin}).
     */
    private void passMargin(final long now) {
        if (inMargin && now - marginEndNs >= 0) {
            inMargin = false;
            restartMeasurement(now);
            if (kind.raw && kind.bandwidth) {
                rawWarmupTarget = raw.sent();
            }
            markWindow();
        }
    }

    /**
     * Raw bandwidth: the receiver counts what arrives, so it is told when the measured window
     * starts (MARK); what arrived before (warm-up, margin) stays out of its average.
     */
    private void markWindow() {
        if (kind.raw && kind.bandwidth) {
            Messages.putMark(side.controlMr.buffer(), controlOffset(3));
            sendControl(conns[0], 3);
        }
    }

    private void restartMeasurement(final long now) {
        t0 = now;
        lastCompletionNs = now;
        measured = 0;
        sampleNs = now;
        sampleMessages = 0;
        nextSampleNs = now + SAMPLE_NS;
        nextProgressNs = now + PROGRESS_NS;
        peakBps = 0;
        if (histogram != null) {
            histogram.reset();
        }
    }

    private boolean timeUp(final long now) {
        return config.timed() && !inMargin && now - t0 >= config.durationNs();
    }

    /** A long warm-up is not silent: once a second, how far it got (stderr, with --progress). */
    private void warmupProgress(final long now) {
        if (config.progress() && now - nextProgressNs >= 0) {
            nextProgressNs = now + PROGRESS_NS;
            long done = 0;
            for (int q = 1; q <= qps; q++) {
                done += Math.min(completed[q], config.warmup());
            }
            err.printf(Locale.ROOT, "%s: warming up, %d of %d iterations, %.1f s%s%n", kind.command, done,
                config.warmup() * qps, (now - waitStartNs) / 1e9, congestionState());
        }
    }

    /**
     * ", " and the first data QP's congestion state where this thread owns the device (INVOKER):
     * elsewhere the driver thread changes it while it would be read; "" then.
     */
    private String congestionState() {
        return config.mode() == BenchConfig.Mode.invoker && qps_.length > 1 && qps_[1] != null
            ? ", " + qps_[1].congestionControl() : "";
    }

    private void sample(final long now, final long messagesSoFar) {
        if (now - nextSampleNs >= 0) {
            final double bps = (messagesSoFar - sampleMessages) * (double) size * 8 * 1e9 / (now - sampleNs);
            if (bps > peakBps) {
                peakBps = bps;
            }
            sampleMessages = messagesSoFar;
            sampleNs = now;
            nextSampleNs = now + SAMPLE_NS;
        }
        if (config.progress() && now - nextProgressNs >= 0) {
            nextProgressNs = now + PROGRESS_NS;
            final double elapsed = (now - t0) / 1e9;
            if (kind.bandwidth) {
                final String cc = congestionState();
                err.printf(Locale.ROOT, "%s: %.1f s, %d messages, %.2f Gb/sec%s%n", kind.command, elapsed,
                    messagesSoFar, messagesSoFar * (double) size * 8 / (now - t0), cc);
            } else {
                err.printf(Locale.ROOT, "%s: %.1f s, %d iterations, median %.2f usec%n", kind.command, elapsed,
                    messagesSoFar, histogram.getTotalCount() == 0 ? 0.0
                        : histogram.getValueAtPercentile(50) / (kind.pingPong ? 2000.0 : 1000.0));
            }
            err.flush();
        }
    }

    // ------------------------------------------------------------------ bandwidth

    private int bandwidth() {
        final int n = side.dataCq.poll(wcs, wcs.length);
        long now = 0;
        if (n > 0) {
            now = System.nanoTime();
            lastAnyCompletionNs = now;
            for (int i = 0; i < n; i++) {
                final WorkCompletion wc = wcs[i];
                if (wc.status() != WcStatus.SUCCESS) {
                    throw completionError(wc, kind.opcode.name());
                }
                completed[indexOf(wc.wrId())]++;
            }
            if (phase != Phase.WARMUP) {
                measured += n;
                lastCompletionNs = now;
            }
        }
        if (phase == Phase.WARMUP) {
            if (allCompleted()) {
                startMeasure(now != 0 ? now : System.nanoTime());
            } else {
                final long t = now != 0 ? now : System.nanoTime();
                warmupProgress(t);
                checkStalled(t, "warming up");
            }
        } else {
            if (now == 0) {
                now = System.nanoTime();
            }
            if (phase == Phase.MEASURE) {
                passMargin(now);
                sample(now, measured);
                if (timeUp(now)) {
                    for (int q = 1; q <= qps; q++) {
                        limit[q] = posted[q];
                    }
                    phase = Phase.DRAIN;
                    waitStartNs = now;
                }
            }
            if (phase == Phase.DRAIN) {
                checkStalled(now, "draining the last work requests");
            }
            if (allCompleted()) {
                finishMeasure();
                return n + 1;
            }
        }
        int work = n;
        for (int q = 1; q <= qps; q++) {
            final long depth = config.txDepth();
            while (posted[q] - completed[q] < depth && posted[q] < limit[q]) {
                postBandwidth(q, posted[q]);
                posted[q]++;
                work++;
            }
        }
        return work;
    }

    /**
     * Ends the run when a phase that waits for every queue pair's work (the warm-up, the drain)
     * has seen no completion for long: a queue pair that makes no progress fails itself once
     * RETRY_TIMEOUT is spent [REL-060] (its oldest WR completes in error, which ends the run with
     * that error), so silence well beyond it means something that should have ended the QP did
     * not. The error says what each unfinished QP was waiting for, instead of a hung tool.
     */
    private void checkStalled(final long now, final String what) {
        final long silentNs = now - Math.max(lastAnyCompletionNs, waitStartNs);
        if (silentNs > Math.max(config.retryTimeoutNs(), STALL_MIN_NS) + STALL_SLACK_NS) {
            throw stalled(now, silentNs, what);
        }
    }

    private BenchException stalled(final long now, final long silentNs, final String what) {
        final StringBuilder b = new StringBuilder("no completion for ")
            .append(TimeUnit.NANOSECONDS.toSeconds(silentNs)).append(" s while ").append(what)
            .append(", and no queue pair failed:");
        for (int q = 1; q <= qps; q++) {
            if (completed[q] < limit[q]) {
                b.append(" QP ").append(qps_[q].qpn()).append(" (").append(limit[q] - completed[q])
                    .append(" WRs unfinished): ").append(qps_[q].describeSendSide(now)).append(';');
            }
        }
        return new BenchException(b.toString());
    }

    private boolean allCompleted() {
        for (int q = 1; q <= qps; q++) {
            if (completed[q] < limit[q]) {
                return false;
            }
        }
        return true;
    }

    private void postBandwidth(final int q, final long seq) {
        final int slot = (int) (seq % slots);
        sendWr.clear().wrId(wrId(q, slot)).opcode(kind.opcode).sendFlags(SendFlags.SIGNALED)
            .addSge(slotAddress(q, slot), size, side.dataMr.lkey());
        if (kind != TestKind.SEND_BW) {
            sendWr.remoteAddr(remote[q].address() + (long) slot * size).rkey(remote[q].rkey());
        }
        side.poster.postSend(qps_[q], sendWr);
    }

    private void finishMeasure() {
        final long elapsed = Math.max(1, lastCompletionNs - t0);
        report.messages = measured;
        report.iterations = config.timed() ? Math.round((double) measured / Math.max(1, qps)) : config.iterations();
        report.elapsedNs = elapsed;
        report.peakBps = peakBps;
        if (config.verify() && kind == TestKind.READ_BW) {
            verifyLocalSlots();
        }
        long minAll = Long.MAX_VALUE;
        for (int q = 1; q <= qps; q++) {
            minAll = Math.min(minAll, completed[q]);
        }
        if (qps == 0) {
            minAll = 0;
        }
        sendDone(minAll);
    }

    private void verifyLocalSlots() {
        long checked = 0;
        for (int q = 1; q <= qps; q++) {
            final int touched = (int) Math.min(slots, completed[q]);
            for (int k = 0; k < touched; k++) {
                final long at = Pattern.firstMismatch(local, slotOffset(q, k), size, q, k);
                if (at >= 0) {
                    report.verify = "FAILED";
                    report.verifyDetail = "QP " + q + " slot " + k + " byte " + at + " differs";
                    return;
                }
                checked += size;
            }
        }
        report.verify = "passed";
        report.verifiedBytes = checked;
        report.verifyDetail = checked + " bytes checked";
    }

    private void sendDone(final long perQpAll) {
        Messages.putDone(side.controlMr.buffer(), controlOffset(2), report.iterations, report.messages,
            report.elapsedNs, report.peakBps, perQpAll);
        sendControl(conns[0]);
        phase = Phase.FINISHING;
        deadlineNs = System.nanoTime() + RESULT_TIMEOUT_NS;
    }

    // ------------------------------------------------------------------ latency

    private int latency() {
        final int n = side.dataCq.poll(wcs, wcs.length);
        int work = n;
        if (n > 0) {
            final long now = System.nanoTime();
            for (int i = 0; i < n; i++) {
                final WorkCompletion wc = wcs[i];
                if (wc.status() != WcStatus.SUCCESS) {
                    throw completionError(wc, kind.opcode.name());
                }
                final boolean isRecv = wc.opcode() == org.metaroce.core.verbs.WcOpcode.RECV
                    || wc.opcode() == org.metaroce.core.verbs.WcOpcode.RECV_RDMA_WITH_IMM;
                if (!isRecv) {
                    sendsCompleted++;
                }
                if (kind.pingPong == isRecv) {
                    onAnswer(now, wc);
                }
            }
        }
        if (!opOutstanding) {
            final long now = System.nanoTime();
            if (phase == Phase.WARMUP && opCount >= config.warmup()) {
                startMeasure(now);
            }
            if (phase == Phase.MEASURE) {
                passMargin(now);
                sample(now, measured);
                if (config.timed() ? timeUp(now) : measured >= config.iterations()) {
                    finishLatency();
                    return work + 1;
                }
            }
            if (sendsPosted - sendsCompleted < 8) {
                postLatencyOp();
                work++;
            }
        }
        return work;
    }

    private void onAnswer(final long now, final WorkCompletion wc) {
        if (!opOutstanding) {
            return;
        }
        opOutstanding = false;
        if (phase == Phase.MEASURE) {
            histogram.recordValue(Math.min(HISTOGRAM_MAX_NS, Math.max(1, now - opStartNs)));
            measured++;
        }
        if (kind.pingPong) {
            final int slot = slotOf(wc.wrId());
            if (config.verify()) {
                final long at = Pattern.firstMismatch(local, (long) (1 + slot) * size, size, 1, 0);
                if (at >= 0) {
                    throw new BenchException("verification FAILED: answer " + opCount + " byte " + at + " differs");
                }
            }
            postAnswerRecv(qps_[1], recvSeq++, false);
        } else if (config.verify()) {
            if (kind == TestKind.ATOMIC_LAT) {
                final long value = local.getLong(0);
                if (value != opCount) {
                    throw new BenchException("verification FAILED: atomic " + opCount + " returned " + value
                        + " instead of " + opCount);
                }
            } else {
                final long at = Pattern.firstMismatch(local, 0, size, 1, 0);
                if (at >= 0) {
                    throw new BenchException("verification FAILED: read " + opCount + " byte " + at + " differs");
                }
            }
        }
        opCount++;
    }

    private void postLatencyOp() {
        final Messages.Region r = remote[1];
        final long base = side.dataMr.address();
        final int lkey = side.dataMr.lkey();
        sendWr.clear().wrId(wrId(1, opCount)).sendFlags(SendFlags.SIGNALED);
        switch (kind) {
            case SEND_LAT -> sendWr.opcode(WrOpcode.SEND).addSge(base, size, lkey);
            case WRITE_LAT -> sendWr.opcode(WrOpcode.RDMA_WRITE_WITH_IMM).addSge(base, size, lkey)
                .remoteAddr(r.address() + (opCount % slots) * size).rkey(r.rkey()).immData((int) opCount);
            case READ_LAT -> sendWr.opcode(WrOpcode.RDMA_READ).addSge(base, size, lkey).remoteAddr(r.address())
                .rkey(r.rkey());
            case ATOMIC_LAT -> {
                if (config.compareSwap()) {
                    sendWr.opcode(WrOpcode.ATOMIC_CMP_SWAP).compareAdd(opCount).swap(opCount + 1);
                } else {
                    sendWr.opcode(WrOpcode.ATOMIC_FETCH_ADD).compareAdd(1);
                }
                sendWr.addSge(base, 8, lkey).remoteAddr(r.address()).rkey(r.rkey());
            }
            default -> throw new IllegalStateException(kind.toString());
        }
        opOutstanding = true;
        opStartNs = System.nanoTime();
        side.poster.postSend(qps_[1], sendWr);
        side.poster.flush();
        sendsPosted++;
    }

    private void finishLatency() {
        report.iterations = measured;
        report.histogram = histogram;
        if (config.verify()) {
            report.verify = "passed";
            report.verifyDetail = "every " + (kind == TestKind.ATOMIC_LAT ? "returned value" : "answer") + " checked";
        }
        sendDone(opCount);
    }

    // ------------------------------------------------------------------ raw UDP baselines

    private int rawBandwidth() {
        final long now = System.nanoTime();
        final long sent = raw.sent();
        if (phase == Phase.WARMUP) {
            if (sent >= rawWarmupTarget) {
                startMeasure(now);
            }
            return 1;
        }
        passMargin(now);
        final long messages = (raw.sent() - rawWarmupTarget) / raw.datagramsPerMessage();
        sample(now, messages);
        if (timeUp(now)) {
            raw.stop();
        }
        if (raw.sent() >= raw.target()) {
            final long total = raw.sent();
            report.messages = (total - rawWarmupTarget) / raw.datagramsPerMessage();
            report.iterations = config.timed() ? report.messages : config.iterations();
            report.elapsedNs = Math.max(1, now - t0);
            report.peakBps = peakBps;
            report.sentDatagrams = total;
            sendDone(total);
            return 1;
        }
        return 1;
    }

    private int rawLatency() {
        final long now = System.nanoTime();
        int work = 0;
        if (opOutstanding) {
            if (raw.received() - rawBase >= raw.datagramsPerMessage()) {
                opOutstanding = false;
                if (phase == Phase.MEASURE) {
                    histogram.recordValue(Math.min(HISTOGRAM_MAX_NS, Math.max(1, now - opStartNs)));
                    measured++;
                }
                opCount++;
                work++;
            } else if (now - opStartNs > ECHO_TIMEOUT_NS) {
                // UDP lost the datagram or its echo: count it and go on.
                opOutstanding = false;
                report.lostEchoes++;
                opCount++;
            } else {
                return 0;
            }
        }
        if (phase == Phase.WARMUP && opCount >= config.warmup()) {
            startMeasure(now);
        }
        if (phase == Phase.MEASURE) {
            passMargin(now);
            sample(now, measured);
            if (config.timed() ? timeUp(now) : measured >= config.iterations()) {
                report.iterations = measured;
                report.histogram = histogram;
                report.sentDatagrams = raw.sent();
                sendDone(opCount);
                return work + 1;
            }
        }
        rawBase = raw.received();
        opOutstanding = true;
        opStartNs = System.nanoTime();
        raw.addTarget(raw.datagramsPerMessage());
        return work + 1;
    }

    // ------------------------------------------------------------------ control

    private int control() {
        final int n = side.controlCq.poll(wcs, wcs.length);
        for (int i = 0; i < n; i++) {
            final WorkCompletion wc = wcs[i];
            if (wc.status() != WcStatus.SUCCESS) {
                if (phase.ordinal() >= Phase.DISCONNECTING.ordinal() && wc.status() == WcStatus.WR_FLUSH_ERR) {
                    continue; // the receive left over when the disconnect moved the QP to ERR
                }
                throw completionError(wc, "control message");
            }
            if (wc.opcode() == org.metaroce.core.verbs.WcOpcode.RECV) {
                onResult(slotOf(wc.wrId()));
            }
        }
        return n;
    }

    private void onResult(final int slot) {
        final UnsafeBuffer b = side.controlMr.buffer();
        final int at = controlOffset(slot);
        final Messages.Result result = Messages.readResult(b, at);
        if (result == null) {
            throw new BenchException("unexpected control message from the server");
        }
        if (result.verify() == Messages.VERIFY_PASSED) {
            report.verify = "passed";
            report.verifiedBytes = result.checked();
            report.verifyDetail = report.verifiedBytes + " bytes checked by the server";
        } else if (result.verify() == Messages.VERIFY_FAILED) {
            report.verify = "FAILED";
            report.verifyDetail = "QP " + result.qp() + " slot " + result.slot() + " byte " + result.mismatch()
                + " differs at the server";
        }
        if (kind.raw) {
            report.receivedDatagrams = result.rawDatagrams();
            if (kind.bandwidth) {
                // The baseline's bandwidth is what arrived, over the time it took to arrive.
                final long rxNs = result.rawNs();
                final double rxPeak = result.rawPeakBps();
                final double messages = (double) result.rawWindowDatagrams() / raw.datagramsPerMessage();
                if (rxNs > 0) {
                    report.elapsedNs = rxNs;
                    report.messages = Math.round(messages);
                    report.peakBps = rxPeak;
                } else {
                    report.messages = 0;
                }
            }
        }
        side.onOwner(() -> {
            for (final Connection c : conns) {
                if (c != null) {
                    try {
                        side.cm.disconnect(c);
                    } catch (final RuntimeException ex) {
                        // Already gone.
                    }
                }
            }
        });
        phase = Phase.DISCONNECTING;
        deadlineNs = System.nanoTime() + DISCONNECT_TIMEOUT_NS;
    }

    static String describe(final InetSocketAddress a) {
        return a.getAddress().getHostAddress() + ":" + a.getPort();
    }

    private static String seconds(final long ns) {
        final double s = ns / 1e9;
        return s == Math.rint(s) ? (long) s + " s" : String.format(Locale.ROOT, "%.1f s", s);
    }

    @Override
    QueuePair queuePair(final int qpn) {
        return find(qps_, qpn);
    }
}
