// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.cli;

import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;

import org.agrona.concurrent.UnsafeBuffer;
import org.metaroce.core.connection.CmEvent;
import org.metaroce.core.connection.CmEventType;
import org.metaroce.core.connection.Connection;
import org.metaroce.core.connection.ListenParams;
import org.metaroce.core.engine.QueuePair;
import org.metaroce.core.engine.QueuePairCapabilities;
import org.metaroce.core.verbs.AccessFlags;
import org.metaroce.core.verbs.PostStatus;
import org.metaroce.core.verbs.SendFlags;
import org.metaroce.core.verbs.WcOpcode;
import org.metaroce.core.verbs.WcStatus;
import org.metaroce.core.verbs.WorkCompletion;
import org.metaroce.core.verbs.WrOpcode;

/**
 * The server: listens on the tool's control Service ID, takes the run's parameters from the
 * client's CONNECT_REQUEST, allocates and describes its memory in the CONNECT_REPLY, then listens
 * for the data queue pairs. During the run it is passive for WRITE, READ and atomics (the
 * protocol engine answers), reposts receives for SEND, and answers each ping of the ping-pong
 * tests. On DONE it verifies what landed in its memory, sends RESULT and waits for the client to
 * disconnect. One run per process, as with perftest.
 */
final class ServerAgent extends Agent {
    private static final long DISCONNECT_TIMEOUT_NS = TimeUnit.SECONDS.toNanos(3);
    private static final long QUIET_NS = TimeUnit.MILLISECONDS.toNanos(5);
    private static final long SAMPLE_NS = TimeUnit.MILLISECONDS.toNanos(100);

    private enum Phase { WAITING, RUNNING, QUIESCING, RESULT_DUE, RESULT_SENT, DISCONNECTING, DONE }

    private final TestKind kind;
    private final PrintWriter out;
    private final boolean quiet;
    private final boolean wake;
    private final Report report;
    private volatile Messages.Hello hello;
    private Messages.Hello[] hellos;
    private Connection[] conns;
    private QueuePair[] qps;
    private boolean[] up;
    private long[] recvSeq;
    private long[] received;
    private int slots;
    private int size;
    private int connections;
    private int established;
    private int disconnected;
    private UnsafeBuffer memory;
    private RawTraffic raw;
    private Phase phase = Phase.WAITING;
    private long deadlineNs;
    private long perQpAll;

    // raw receive-side measurement
    private long rawLastCount;
    private long rawFirstNs;
    private long rawFirstCount;
    /** The client marked the start of its measured window (raw bandwidth). */
    private boolean rawMarked;
    private long rawLastNs;
    /**
     * The first observation of raw datagrams and the last arrival, whatever the MARK did: the
     * estimate when the client's MARK came after its last datagram (it travels on the control
     * connection, the datagrams do not, and on a loaded host it can arrive last), so that the
     * marked window is empty.
     */
    private long rawSeenNs;
    private long rawSeenCount;
    private long rawLastDatagramNs;
    private long rawSampleNs;
    private long rawSampleCount;
    private double rawPeakBps;
    private long rawEchoed;

    ServerAgent(final Side side, final BenchConfig config, final PrintWriter out, final boolean quiet) {
        super(side, config);
        this.kind = config.kind();
        this.out = out;
        this.quiet = quiet;
        this.wake = config.mode() != BenchConfig.Mode.invoker;
        this.report = new Report(kind, config);
        report.role = "server";
        side.ownerHandler = this::onOwnerEvent;
        final int[] paths = side.device.entropyPorts();
        side.onOwnerAndWait(() -> side.cm.listen(kind.controlService(), new ListenParams()
            .resources(side.pd, side.controlCq, side.controlCq, controlCaps()).accessFlags(AccessFlags.ALL)
            .pathMtu(config.mtu()).paths(paths).timeoutNs(config.initialRtoNs()).limit(1)));
    }

    // ------------------------------------------------------------------ owning thread: the handshake

    private void onOwnerEvent(final CmEvent e) {
        if (e.type() != CmEventType.CONNECT_REQUEST) {
            return;
        }
        final Messages.Hello h = Messages.Hello.decode(e.privateData());
        if (h == null || h.kind() != kind) {
            side.cm.reject(e, text(h == null ? "not a metaroce client" : "this server runs " + kind.command));
            return;
        }
        if (h.index() == 0) {
            if (hello != null) {
                side.cm.reject(e, text("busy with another client"));
                return;
            }
            final String problem = check(h);
            if (problem != null) {
                side.cm.reject(e, text(problem));
                return;
            }
            setUpRun(h);
            if (side.cm.accept(e, null)) {
                e.connection().context(0);
                // Completions can be polled before the ESTABLISHED event: remember the QP now.
                qps[0] = e.connection().queuePair();
                conns[0] = e.connection();
                postControlRecvDirect(e.connection().queuePair(), 0);
                postControlRecvDirect(e.connection().queuePair(), 1);
            }
            return;
        }
        final Messages.Hello run = hello;
        if (run == null || h.index() > run.qps() || hellos[h.index()] != null) {
            side.cm.reject(e, text("unexpected data connection " + h.index()));
            return;
        }
        hellos[h.index()] = h;
        final int q = h.index();
        final long regionOffset = regionOffset(q);
        final byte[] reply = new Messages.Region(side.dataMr.address() + regionOffset, side.dataMr.rkey(),
            regionLength()).encode();
        if (!side.cm.accept(e, reply)) {
            return;
        }
        final Connection c = e.connection();
        c.context(q);
        final QueuePair qp = c.queuePair();
        qps[q] = qp;
        conns[q] = c;
        if (kind == TestKind.SEND_BW) {
            for (long seq = 0; seq < h.rxDepth(); seq++) {
                postRecvDirect(qp, q, seq);
            }
            recvSeq[q] = h.rxDepth();
        } else if (kind.pingPong) {
            for (int k = 0; k < slots; k++) {
                postRecvDirect(qp, q, k);
            }
            recvSeq[q] = slots;
        }
    }

    private static byte[] text(final String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private String check(final Messages.Hello h) {
        if (h.qps() < 1 || h.qps() > 256 || h.size() < 1 || h.slots() < 1 || h.rxDepth() < 1 || h.rxDepth() > 16384) {
            return "bad parameters";
        }
        if (regionBytes(h) > Integer.MAX_VALUE - 4096) {
            return "memory of " + regionBytes(h) + " bytes is more than this server allocates";
        }
        return null;
    }

    private static long regionBytes(final Messages.Hello h) {
        if (h.kind().raw || h.kind() == TestKind.ATOMIC_LAT) {
            return 64;
        }
        if (!h.kind().bandwidth) {
            return (long) h.slots() * h.size();
        }
        return (long) h.qps() * h.slots() * h.size();
    }

    private long regionOffset(final int q) {
        return kind.bandwidth ? (long) (q - 1) * slots * size : 0;
    }

    private long regionLength() {
        if (kind == TestKind.ATOMIC_LAT) {
            return 8;
        }
        return (long) slots * size;
    }

    /** Owning thread, on the control CONNECT_REQUEST: memory, data listener. */
    private void setUpRun(final Messages.Hello h) {
        slots = h.slots();
        size = h.size();
        report.bytes = h.size();
        report.qps = h.qps();
        report.txDepth = kind.bandwidth ? h.txDepth() : 1;
        connections = kind.raw ? 1 : 1 + h.qps();
        hellos = new Messages.Hello[connections];
        conns = new Connection[connections];
        qps = new QueuePair[connections];
        up = new boolean[connections];
        recvSeq = new long[connections];
        received = new long[connections];
        final int dataQps = kind.raw ? 0 : h.qps();
        final int sq = kind.pingPong ? slots + 8 : 8;
        final int rq = kind == TestKind.SEND_BW ? h.rxDepth() + 8 : kind.pingPong ? slots + 8 : 8;
        side.allocateData(regionBytes(h), Math.max(16, dataQps * (sq + rq)));
        memory = side.dataMr.buffer();
        if (h.verify() && (kind == TestKind.READ_BW || kind == TestKind.READ_LAT)) {
            for (int q = 1; q <= dataQps; q++) {
                final int n = kind.bandwidth ? slots : 1;
                for (int k = 0; k < n; k++) {
                    Pattern.fill(memory, regionOffset(q) + (long) k * size, size, q, k);
                }
            }
        }
        if (kind.raw) {
            raw = new RawTraffic(side.device, side.cm, size, h.mtu(), wake);
            side.device.endpoint().connectionManager(raw);
        } else {
            side.cm.listen(kind.dataService(), config.applyCc(new ListenParams()
                .resources(side.pd, side.dataCq, side.dataCq, new QueuePairCapabilities(sq, rq, 1, 1, 16))
                .accessFlags(AccessFlags.ALL).pathMtu(config.mtu()).paths(side.device.entropyPorts())
                .timeoutNs(config.initialRtoNs()).limit(dataQps), side.device.readsEcn()));
        }
        hello = h;
    }

    private void postRecvDirect(final QueuePair qp, final int q, final long seq) {
        fillRecv(q, seq);
        final int status = qp.postRecv(recvWr);
        if (status != PostStatus.OK) {
            throw new BenchException(Poster.recvRefusal(qp, recvWr, status));
        }
    }

    private void fillRecv(final int q, final long seq) {
        final int slot = (int) (seq % slots);
        recvWr.clear().wrId(wrId(q, slot));
        if (kind != TestKind.WRITE_LAT) {
            recvWr.addSge(side.dataMr.address() + regionOffset(q) + (long) slot * size, size, side.dataMr.lkey());
        }
    }

    // ------------------------------------------------------------------ benchmark thread

    /** @return the report of a finished run (bandwidth numbers as the client measured them) */
    Report report() {
        return report;
    }

    @Override
    int work() {
        int work = events();
        work += control();
        switch (phase) {
            case RUNNING -> work += kind.raw ? rawWork() : data();
            case QUIESCING -> {
                rawWork();
                final long now = System.nanoTime();
                if (now - rawLastNs > QUIET_NS || now - deadlineNs > 0) {
                    sendResult();
                }
                work++;
            }
            case RESULT_DUE -> {
                // One cycle after DONE arrived: its ACK has left, so the verify (tens of
                // milliseconds over a few MB) does not hold it back past the client's timer.
                sendResult();
                work++;
            }
            case RESULT_SENT, DISCONNECTING -> {
                if (kind.raw) {
                    rawWork();
                } else {
                    work += data();
                }
                if (phase == Phase.DISCONNECTING
                    && (disconnected >= connections || System.nanoTime() - deadlineNs > 0)) {
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
            if (e.type() == CmEventType.ESTABLISHED && index >= 0 && index < connections && !up[index]) {
                up[index] = true;
                established++;
                if (index == 0) {
                    report.local = ClientAgent.describe(side.address());
                    report.remote = describeClient(c);
                    report.negotiatedMtu = c.pathMtu();
                    report.negotiatedPaths = c.pathCount();
                    report.transport = side.device.transport().name();
                    report.gso = side.device.gsoActive();
                    if (!quiet) {
                        out.println(" Client connected: " + describeClient(c));
                        out.flush();
                    }
                    if (raw != null) {
                        raw.peer(c.remotePeer());
                    }
                    phase = Phase.RUNNING;
                } else {
                    report.negotiatedMtu = c.pathMtu();
                    report.negotiatedPaths = c.pathCount();
                }
            } else if (e.type() == CmEventType.DISCONNECTED || e.type() == CmEventType.CONNECT_ERROR) {
                if (phase == Phase.RESULT_SENT || phase == Phase.DISCONNECTING) {
                    disconnected++;
                    if (phase == Phase.RESULT_SENT) {
                        phase = Phase.DISCONNECTING;
                        deadlineNs = System.nanoTime() + DISCONNECT_TIMEOUT_NS;
                    }
                } else if (index >= 0) {
                    throw new BenchException("the client went away before the end of the run ("
                        + e.type() + ")");
                }
            }
        }
        return n;
    }

    private String describeClient(final Connection c) {
        final java.net.InetSocketAddress a = side.device.peers().address(c.remotePeer());
        return a == null ? "peer " + c.remotePeer() : ClientAgent.describe(a);
    }

    private int data() {
        final int n = side.dataCq.poll(wcs, wcs.length);
        for (int i = 0; i < n; i++) {
            final WorkCompletion wc = wcs[i];
            if (wc.status() != WcStatus.SUCCESS) {
                if (phase != Phase.RUNNING && wc.status() == WcStatus.WR_FLUSH_ERR) {
                    continue;
                }
                throw completionError(wc, wc.opcode() == WcOpcode.RECV || wc.opcode() == WcOpcode.RECV_RDMA_WITH_IMM
                    ? "receive" : "answer");
            }
            final int q = indexOf(wc.wrId());
            final int slot = slotOf(wc.wrId());
            final boolean isRecv = wc.opcode() == WcOpcode.RECV || wc.opcode() == WcOpcode.RECV_RDMA_WITH_IMM;
            if (kind == TestKind.SEND_BW) {
                received[q]++;
                fillRecv(q, recvSeq[q]++);
                side.poster.postRecv(qps[q], recvWr);
            } else if (kind == TestKind.SEND_LAT) {
                if (isRecv) {
                    received[q]++;
                    sendWr.clear().wrId(wrId(q, slot)).opcode(WrOpcode.SEND).sendFlags(SendFlags.SIGNALED)
                        .addSge(side.dataMr.address() + (long) slot * size, wc.byteLen(), side.dataMr.lkey());
                    side.poster.postSend(qps[q], sendWr);
                    side.poster.flush();
                } else {
                    fillRecv(q, slot);
                    side.poster.postRecv(qps[q], recvWr);
                }
            } else if (kind == TestKind.WRITE_LAT) {
                if (isRecv) {
                    received[q]++;
                    final int j = wc.immData();
                    final int d = (int) Integer.toUnsignedLong(j) % slots;
                    final Messages.Hello h = hellos[q];
                    sendWr.clear().wrId(wrId(q, slot)).opcode(WrOpcode.RDMA_WRITE_WITH_IMM)
                        .sendFlags(SendFlags.SIGNALED).immData(j)
                        .addSge(side.dataMr.address() + (long) d * size, size, side.dataMr.lkey())
                        .remoteAddr(h.regionAddress() + (long) d * size).rkey(h.rkey());
                    side.poster.postSend(qps[q], sendWr);
                    side.poster.flush();
                } else {
                    fillRecv(q, slot);
                    side.poster.postRecv(qps[q], recvWr);
                }
            }
        }
        return n;
    }

    private int rawWork() {
        final long count = raw.received();
        if (count == rawLastCount) {
            return 0;
        }
        final long now = System.nanoTime();
        if (rawFirstNs == 0) {
            startRawWindow(now, count);
        }
        if (rawSeenNs == 0) {
            rawSeenNs = now;
            rawSeenCount = count;
        }
        rawLastDatagramNs = now;
        rawLastCount = count;
        rawLastNs = now;
        if (now - rawSampleNs >= SAMPLE_NS) {
            final double bps = (count - rawSampleCount) * (double) size / raw.datagramsPerMessage() * 8 * 1e9
                / (now - rawSampleNs);
            rawPeakBps = Math.max(rawPeakBps, bps);
            rawSampleNs = now;
            rawSampleCount = count;
        }
        if (kind.pingPong) {
            final int dpm = raw.datagramsPerMessage();
            while (count >= (rawEchoed + 1) * dpm) {
                raw.addTarget(dpm);
                rawEchoed++;
            }
        }
        return 1;
    }

    // ------------------------------------------------------------------ control

    private int control() {
        final int n = side.controlCq.poll(wcs, wcs.length);
        for (int i = 0; i < n; i++) {
            final WorkCompletion wc = wcs[i];
            if (wc.status() != WcStatus.SUCCESS) {
                if (phase.ordinal() >= Phase.RESULT_SENT.ordinal()) {
                    continue;
                }
                throw completionError(wc, "control message");
            }
            if (wc.opcode() == WcOpcode.RECV) {
                final int slot = slotOf(wc.wrId());
                if (Messages.isMark(side.controlMr.buffer(), controlOffset(slot))) {
                    onMark(slot);
                } else {
                    onDone(slot);
                }
            } else if (phase == Phase.RESULT_SENT) {
                // RESULT was acknowledged: wait for the client's disconnect.
                phase = Phase.DISCONNECTING;
                deadlineNs = System.nanoTime() + DISCONNECT_TIMEOUT_NS;
            }
        }
        return n;
    }

    private void startRawWindow(final long now, final long count) {
        rawFirstNs = now;
        rawFirstCount = count;
        rawSampleNs = now;
        rawSampleCount = count;
    }

    /** The client's measured window starts: the raw receive count and clock start again. */
    private void onMark(final int slot) {
        if (kind.raw && kind.bandwidth) {
            final long now = System.nanoTime();
            final long count = raw.received();
            rawMarked = true;
            startRawWindow(now, count);
            rawLastNs = now;
            rawLastCount = count;
            rawPeakBps = 0;
        }
        // Keep two receives posted for what follows (DONE).
        postControlRecv(qps[0], slot);
    }

    private void onDone(final int slot) {
        final UnsafeBuffer b = side.controlMr.buffer();
        final int at = controlOffset(slot);
        final Messages.Done done = Messages.readDone(b, at);
        if (done == null) {
            throw new BenchException("unexpected control message from the client");
        }
        report.iterations = done.iterations();
        report.messages = done.messages();
        report.elapsedNs = done.elapsedNs();
        report.peakBps = done.peakBps();
        perQpAll = done.perQpAll();
        if (kind.raw && kind.bandwidth) {
            report.sentDatagrams = perQpAll;
            phase = Phase.QUIESCING;
            deadlineNs = System.nanoTime() + TimeUnit.SECONDS.toNanos(1);
            return;
        }
        phase = Phase.RESULT_DUE;
    }

    private void sendResult() {
        int verify = Messages.VERIFY_NOT_REQUESTED;
        long checked = 0;
        long mismatch = -1;
        int badQp = 0;
        int badSlot = 0;
        if (hello.verify() && (kind == TestKind.WRITE_BW || kind == TestKind.SEND_BW)) {
            verify = Messages.VERIFY_PASSED;
            outer:
            for (int q = 1; q < connections; q++) {
                final long count = kind == TestKind.SEND_BW ? received[q] : perQpAll;
                final int touched = (int) Math.min(slots, count);
                for (int k = 0; k < touched; k++) {
                    final long at = Pattern.firstMismatch(memory, regionOffset(q) + (long) k * size, size, q, k);
                    if (at >= 0) {
                        verify = Messages.VERIFY_FAILED;
                        mismatch = at;
                        badQp = q;
                        badSlot = k;
                        break outer;
                    }
                    checked += size;
                }
            }
            report.verify = verify == Messages.VERIFY_PASSED ? "passed" : "FAILED";
            report.verifyDetail = verify == Messages.VERIFY_PASSED ? checked + " bytes checked"
                : "QP " + badQp + " slot " + badSlot + " byte " + mismatch + " differs";
        }
        long rawDatagrams = 0;
        long rawNs = 0;
        long rawWindow = 0;
        if (kind.raw) {
            rawDatagrams = rawLastCount;
            report.receivedDatagrams = rawDatagrams;
            if (kind.bandwidth && rawMarked && rawLastNs > rawFirstNs && rawLastCount > rawFirstCount) {
                // What arrived in the client's measured window (from its MARK), over that time.
                rawNs = rawLastNs - rawFirstNs;
                rawWindow = rawLastCount - rawFirstCount;
            } else if (kind.bandwidth && rawLastDatagramNs > rawSeenNs) {
                // No MARK, or one that came after the last datagram (an empty window): datagrams that
                // arrived after the first observation, over the time they took, scaled to all of them.
                rawNs = rawLastDatagramNs - rawSeenNs;
                final double scale = (double) rawLastCount / Math.max(1, rawLastCount - rawSeenCount);
                rawNs = (long) (rawNs * scale);
                rawWindow = rawLastCount;
            }
            if (rawNs > 0) {
                report.elapsedNs = rawNs;
                report.messages = rawWindow / raw.datagramsPerMessage();
                report.peakBps = rawPeakBps;
            }
        }
        Messages.putResult(side.controlMr.buffer(), controlOffset(2), verify, checked, mismatch, badQp, badSlot,
            rawDatagrams, rawNs, rawPeakBps, rawWindow);
        sendControl(conns[0]);
        phase = Phase.RESULT_SENT;
        if (!quiet) {
            if (kind.bandwidth) {
                report.printTable(out);
            } else {
                out.println(" Served " + (kind.raw ? rawEchoed : received[1]) + " " + kind.command
                    + " iterations (the client reports the latency)");
                out.flush();
            }
        }
    }

    /** Prints the banner of a standalone server. */
    @Override
    boolean waitingForPeer() {
        return phase == Phase.WAITING;
    }

    void printWaiting() {
        out.println("************************************");
        out.println("* Waiting for client to connect... *");
        out.println("************************************");
        out.println(" " + kind.title + " server on " + ClientAgent.describe(side.address()) + " ("
            + side.device.transport() + ", " + config.mode() + ", idle " + config.idle() + ")");
        out.flush();
    }

    String outcome() {
        return report.verify;
    }

    @Override
    QueuePair queuePair(final int qpn) {
        return find(qps, qpn);
    }
}
