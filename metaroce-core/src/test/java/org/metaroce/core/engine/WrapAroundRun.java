// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.engine;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

import org.agrona.concurrent.UnsafeBuffer;
import org.metaroce.core.testwire.LinkProfile;
import org.metaroce.core.verbs.PostStatus;
import org.metaroce.core.verbs.QpState;
import org.metaroce.core.verbs.RecvRequest;
import org.metaroce.core.verbs.SendFlags;
import org.metaroce.core.verbs.SendRequest;
import org.metaroce.core.verbs.WcOpcode;
import org.metaroce.core.verbs.WcStatus;
import org.metaroce.core.verbs.WorkCompletion;
import org.metaroce.core.verbs.WrOpcode;

/**
 * Drives a list of operations from A to B over {@link TwoNodeFixture} with chosen initial PSN, MSN
 * and RSN and chosen queue depths, keeping both queues as full as their depths allow, and checks
 * the outcome exactly: every send and receive completion in post order with the right wr_id,
 * status, opcode, length and immediate; every byte where it belongs; atomics executed once with
 * the right original; both QPs still in RTS. Every operation has its own bytes on both nodes, so
 * any placement into another request's buffer shows up as a byte mismatch.
 *
 * <p>Only the sequence spaces are unusual here: this is how tests take them across 2^32
 * [OPS-043] without sending 2^32 messages.
 */
final class WrapAroundRun {
    static final long RECV_WR_ID_BASE = 1L << 40;
    private static final long STALL_NS = 5_000_000_000L;

    /** One operation A posts; {@code length} is ignored for atomics, {@code entropy} picks operands. */
    record Op(WrOpcode opcode, int length, long entropy) {
        boolean consumesReceive() {
            return opcode == WrOpcode.SEND || opcode == WrOpcode.SEND_WITH_IMM
                || opcode == WrOpcode.RDMA_WRITE_WITH_IMM;
        }

        boolean isAtomic() {
            return opcode == WrOpcode.ATOMIC_FETCH_ADD || opcode == WrOpcode.ATOMIC_CMP_SWAP;
        }

        int dataLength() {
            return isAtomic() ? 8 : length;
        }

        /** @return PSNs the operation uses at path MTU {@code mtu} [OPS-006] */
        int psns(final int mtu) {
            return isAtomic() ? 1 : Math.max(1, (length + mtu - 1) / mtu);
        }
    }

    /** Initial sequence numbers: PSN, MSN and RSN of A's requester (B's responder expects the same). */
    record Start(int psn, int msn, int rsn) {
        @Override
        public String toString() {
            return "psn=0x" + Integer.toHexString(psn) + " msn=0x" + Integer.toHexString(msn) + " rsn=0x"
                + Integer.toHexString(rsn);
        }
    }

    private final long seed;
    private final int mtu;
    private final int window;
    private final int sendDepth;
    private final int recvDepth;
    private final Start start;
    private final boolean sendsAhead;
    private final List<Op> ops;
    private final TwoNodeFixture f;

    // Per operation: A's bytes (source, READ destination or atomic result slot), B's bytes (WRITE
    // destination, READ source, atomic target or receive buffer) and the receive index, or -1.
    private final long[] aOffset;
    private final long[] bOffset;
    private final int[] recvIndex;
    private final long[] atomicInitial;
    private final int[] recvOp;
    private int recvCount;

    WrapAroundRun(final long seed, final LinkProfile profile, final int mtu, final int sendDepth, final int recvDepth,
                  final Start start, final boolean sendsAhead, final List<Op> ops) {
        this(seed, profile, mtu, 1024, sendDepth, recvDepth, start, sendsAhead, ops);
    }

    /** @param window the receive window (and so the PSN scoreboard) in packets, a power of two >= 64 */
    WrapAroundRun(final long seed, final LinkProfile profile, final int mtu, final int window, final int sendDepth,
                  final int recvDepth, final Start start, final boolean sendsAhead, final List<Op> ops) {
        this.seed = seed;
        this.sendsAhead = sendsAhead;
        this.mtu = mtu;
        this.window = window;
        this.sendDepth = sendDepth;
        this.recvDepth = recvDepth;
        this.start = start;
        this.ops = ops;
        System.out.println("WrapAroundRun seed=" + seed + " mtu=" + mtu + " window=" + window + " sq=" + sendDepth
            + " rq=" + recvDepth
            + " " + start + (sendsAhead ? " sendsAhead" : "") + " ops=" + ops.size() + " profile=" + profile);
        f = new TwoNodeFixture(seed, profile,
            new EndpointConfig().receiveWindowPackets(window).readChunkPackets(Math.min(64, window / 2)),
            new QueuePairCapabilities(sendDepth, recvDepth, 4, 4, 16), 4096);
        // B's requester sends nothing, but its sequences start near 2^32 too.
        f.startSequences(start.msn(), start.rsn(), ~start.msn(), ~start.rsn());
        f.connectWithPsns(mtu, start.psn(), ~start.psn());
        aOffset = new long[ops.size()];
        bOffset = new long[ops.size()];
        recvIndex = new int[ops.size()];
        atomicInitial = new long[ops.size()];
        recvOp = new int[ops.size()];
        layOut();
    }

    /** Gives every operation its own bytes on both nodes and fills sources with seeded data. */
    private void layOut() {
        final SplittableRandom r = new SplittableRandom(seed);
        long a = 64;
        long b = 64;
        for (int i = 0; i < ops.size(); i++) {
            final Op op = ops.get(i);
            final int length = op.dataLength();
            a = (a + 7) & ~7L;
            b = (b + 7) & ~7L;
            aOffset[i] = a;
            bOffset[i] = b;
            a += length + 8;
            b += length + 8;
            recvIndex[i] = op.consumesReceive() ? recvCount : -1;
            if (op.consumesReceive()) {
                recvOp[recvCount++] = i;
            }
            final UnsafeBuffer source = op.opcode() == WrOpcode.RDMA_READ ? f.b.mr.buffer() : f.a.mr.buffer();
            final long from = op.opcode() == WrOpcode.RDMA_READ ? bOffset[i] : aOffset[i];
            for (int k = 0; k < length; k++) {
                source.putByte((int) from + k, (byte) r.nextInt());
            }
            if (op.isAtomic()) {
                atomicInitial[i] = r.nextLong();
                f.b.mr.buffer().putLong((int) bOffset[i], atomicInitial[i]);
            }
        }
        if (a > TwoNodeFixture.REGION_SIZE || b > TwoNodeFixture.REGION_SIZE) {
            throw new IllegalArgumentException("operations need " + Math.max(a, b) + " bytes");
        }
    }

    /** Runs every operation to completion and checks the outcome; throws AssertionError with the seed. */
    void execute() {
        int nextOp = 0;
        int nextRecv = 0;
        while (f.a.sendCompletions.size() < ops.size() || f.b.recvCompletions.size() < recvCount) {
            // Sends going ahead also find the receive queue refilled only once it has run empty,
            // so that messages do arrive for receives not yet posted.
            final boolean refill = !sendsAhead || f.b.qp.postedReceives() == 0;
            while (refill && nextRecv < recvCount && nextRecv - f.b.recvCompletions.size() < recvDepth) {
                postRecv(nextRecv++);
            }
            // Unless sends go ahead, a receive-consuming message waits for its receive; ahead, it
            // may meet RNR NACKs [OPS-013] until its receive is posted. Ahead by at most one
            // receive queue: far deeper starvation (24 sends on a 1-deep receive queue) ends in
            // RETRY_EXC_ERR whatever the sequence numbers, which is no matter for this run.
            while (nextOp < ops.size() && f.a.qp.outstandingSends() < sendDepth
                && recvIndex[nextOp] < nextRecv + (sendsAhead ? recvDepth : 0)) {
                postSend(nextOp++);
            }
            final int sends = f.a.sendCompletions.size();
            final int recvs = f.b.recvCompletions.size();
            final boolean progressed = f.wire.runUntil(() -> {
                f.a.drain();
                f.b.drain();
                return f.a.sendCompletions.size() > sends || f.b.recvCompletions.size() > recvs
                    || f.a.qp.state() != QpState.RTS || f.b.qp.state() != QpState.RTS;
            }, STALL_NS);
            requireRts();
            if (!progressed) {
                fail("no completion within 5 s virtual; " + f.a.qp.outstandingSends() + " sends and "
                    + f.b.qp.postedReceives() + " receives outstanding");
            }
            checkCompletionsSoFar();
        }
        checkCompletionsSoFar();
        checkMemory();
        requireRts();
    }

    /**
     * For the caller to check that a run really crosses 2^32, so that a generator bug cannot quietly
     * turn a wrap test into one about small numbers.
     *
     * @return whether the run uses both 0xFFFFFFFF and 0 as PSN, as MSN and as RSN
     */
    boolean[] wrapped() {
        long psns = 0;
        for (final Op op : ops) {
            psns += op.psns(mtu);
        }
        return new boolean[] {
            Integer.toUnsignedLong(start.psn()) + psns > 1L << 32,
            Integer.toUnsignedLong(start.msn()) + ops.size() > 1L << 32,
            Integer.toUnsignedLong(start.rsn()) + recvCount > 1L << 32};
    }

    /** @return B's endpoint counters, for a test that wants to know which paths a run took */
    EndpointCounters responderCounters() {
        return f.b.endpoint.counters();
    }

    private void postRecv(final int k) {
        final int i = recvOp[k];
        final Op op = ops.get(i);
        final RecvRequest wr = new RecvRequest(4).wrId(RECV_WR_ID_BASE + k);
        if (op.opcode() == WrOpcode.RDMA_WRITE_WITH_IMM) {
            // A WRITE_WITH_IMM's receive gets no data; give it a buffer anyway, which must stay untouched.
            wr.addSge(f.b.address(bOffset[i] + op.length()), 8, f.b.mr.lkey());
        } else {
            // Split into up to three entries so that scatter across entries is exercised too.
            final int length = op.length();
            final int first = length / 3;
            final int second = length / 2;
            wr.addSge(f.b.address(bOffset[i]), first, f.b.mr.lkey());
            wr.addSge(f.b.address(bOffset[i] + first), second - first, f.b.mr.lkey());
            wr.addSge(f.b.address(bOffset[i] + second), length - second + 8, f.b.mr.lkey());
        }
        final int status = f.b.qp.postRecv(wr);
        if (status != PostStatus.OK) {
            fail("postRecv " + k + ": " + PostStatus.describe(status));
        }
    }

    private void postSend(final int i) {
        final Op op = ops.get(i);
        final SendRequest wr = new SendRequest(4).wrId(i).opcode(op.opcode()).sendFlags(SendFlags.SIGNALED)
            .addSge(f.a.address(aOffset[i]), op.dataLength(), f.a.mr.lkey());
        switch (op.opcode()) {
            case SEND_WITH_IMM, RDMA_WRITE_WITH_IMM -> wr.immData((int) op.entropy());
            default -> {
            }
        }
        if (op.opcode() != WrOpcode.SEND && op.opcode() != WrOpcode.SEND_WITH_IMM) {
            wr.remoteAddr(f.b.address(bOffset[i])).rkey(f.b.mr.rkey());
        }
        if (op.opcode() == WrOpcode.ATOMIC_FETCH_ADD) {
            wr.compareAdd(op.entropy());
        } else if (op.opcode() == WrOpcode.ATOMIC_CMP_SWAP) {
            // Half of them match and swap, half do not.
            wr.compareAdd((op.entropy() & 1) == 0 ? atomicInitial[i] : ~atomicInitial[i]).swap(op.entropy());
        }
        final int status = f.a.qp.postSend(wr);
        if (status != PostStatus.OK) {
            fail("postSend " + i + " " + op + ": " + PostStatus.describe(status));
        }
    }

    private void requireRts() {
        if (f.a.qp.state() != QpState.RTS || f.b.qp.state() != QpState.RTS) {
            f.a.drain();
            f.b.drain();
            fail("QP left RTS: A " + f.a.qp.state() + ", B " + f.b.qp.state() + "; first error completions: A "
                + f.a.sendCompletions.stream().filter(wc -> wc.status() != WcStatus.SUCCESS).findFirst().orElse(null)
                + ", B " + f.b.recvCompletions.stream().filter(wc -> wc.status() != WcStatus.SUCCESS).findFirst()
                .orElse(null));
        }
    }

    /** Completions so far must be a prefix of the expected ones, in post order. */
    private void checkCompletionsSoFar() {
        for (int n = 0; n < f.a.sendCompletions.size(); n++) {
            final WorkCompletion wc = f.a.sendCompletions.get(n);
            final Op op = ops.get(n);
            if (wc.wrId() != n || wc.status() != WcStatus.SUCCESS || wc.opcode() != SendQueue.wcOpcode(op.opcode())) {
                fail("send completion " + n + " is " + wc + ", expected wr_id " + n + " SUCCESS for " + op);
            }
        }
        for (int k = 0; k < f.b.recvCompletions.size(); k++) {
            final WorkCompletion wc = f.b.recvCompletions.get(k);
            final Op op = ops.get(recvOp[k]);
            final boolean imm = op.opcode() != WrOpcode.SEND;
            final WcOpcode opcode = op.opcode() == WrOpcode.RDMA_WRITE_WITH_IMM ? WcOpcode.RECV_RDMA_WITH_IMM
                : WcOpcode.RECV;
            if (wc.wrId() != RECV_WR_ID_BASE + k || wc.status() != WcStatus.SUCCESS || wc.opcode() != opcode
                || wc.byteLen() != op.length() || ((wc.wcFlags() & WorkCompletion.WC_WITH_IMM) != 0) != imm
                || (imm && wc.immData() != (int) op.entropy())) {
                fail("receive completion " + k + " is " + wc + ", expected wr_id " + (RECV_WR_ID_BASE + k)
                    + " SUCCESS " + opcode + " of " + op.length() + " bytes for op #" + recvOp[k] + " " + op);
            }
        }
    }

    private void checkMemory() {
        final UnsafeBuffer a = f.a.mr.buffer();
        final UnsafeBuffer b = f.b.mr.buffer();
        for (int i = 0; i < ops.size(); i++) {
            final Op op = ops.get(i);
            final int ai = (int) aOffset[i];
            final int bi = (int) bOffset[i];
            switch (op.opcode()) {
                case SEND, SEND_WITH_IMM, RDMA_WRITE, RDMA_WRITE_WITH_IMM -> sameBytes(i, a, ai, b, bi, op.length());
                case RDMA_READ -> sameBytes(i, b, bi, a, ai, op.length());
                case ATOMIC_FETCH_ADD -> {
                    expectLong(i, "original", a.getLong(ai), atomicInitial[i]);
                    expectLong(i, "target", b.getLong(bi), atomicInitial[i] + op.entropy());
                }
                case ATOMIC_CMP_SWAP -> {
                    expectLong(i, "original", a.getLong(ai), atomicInitial[i]);
                    expectLong(i, "target", b.getLong(bi), (op.entropy() & 1) == 0 ? op.entropy() : atomicInitial[i]);
                }
                default -> throw new IllegalStateException(op.toString());
            }
            // The 8 bytes after every operation's bytes belong to nobody and must stay zero (a
            // WRITE_WITH_IMM's receive buffer is there too): nothing may land past its message.
            if (!op.isAtomic() && (b.getLong(bi + op.length()) != 0 || a.getLong(ai + op.length()) != 0)) {
                fail("bytes written past op #" + i + " " + op);
            }
        }
    }

    private void sameBytes(final int i, final UnsafeBuffer from, final int fromOffset, final UnsafeBuffer to,
                           final int toOffset, final int length) {
        for (int k = 0; k < length; k++) {
            if (from.getByte(fromOffset + k) != to.getByte(toOffset + k)) {
                fail("byte " + k + " of op #" + i + " " + ops.get(i) + " differs: expected "
                    + from.getByte(fromOffset + k) + ", was " + to.getByte(toOffset + k));
            }
        }
    }

    private void expectLong(final int i, final String what, final long actual, final long expected) {
        if (actual != expected) {
            fail(what + " of op #" + i + " " + ops.get(i) + " is " + actual + ", expected " + expected);
        }
    }

    private void fail(final String message) {
        throw new AssertionError(message + "; seed=" + seed + " mtu=" + mtu + " window=" + window + " sq=" + sendDepth
            + " rq=" + recvDepth + " " + start + (sendsAhead ? " sendsAhead" : "") + " at t=" + f.wire.now() + " ns; "
            + describeOps() + "; A " + f.a.endpoint.counters() + " B " + f.b.endpoint.counters() + " "
            + f.wire.stats());
    }

    private String describeOps() {
        final List<String> kinds = new ArrayList<>();
        for (final Op op : ops) {
            kinds.add(op.opcode() + "/" + op.length());
        }
        return ops.size() > 40 ? ops.size() + " ops starting " + kinds.subList(0, 40) : "ops " + kinds;
    }
}
