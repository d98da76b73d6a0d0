// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.engine;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

import org.agrona.BufferUtil;
import org.metaroce.core.SeededRandomSource;
import org.metaroce.core.congestion.CongestionControlAlgorithm;
import org.metaroce.core.testwire.InMemoryWire;
import org.metaroce.core.testwire.LinkProfile;
import org.metaroce.core.verbs.AccessFlags;
import org.metaroce.core.verbs.CompletionQueue;
import org.metaroce.core.verbs.MemoryRegion;
import org.metaroce.core.verbs.ProtectionDomain;
import org.metaroce.core.verbs.QpAttributes;
import org.metaroce.core.verbs.QpState;
import org.metaroce.core.verbs.SendFlags;
import org.metaroce.core.verbs.SendRequest;
import org.metaroce.core.verbs.WcStatus;
import org.metaroce.core.verbs.WorkCompletion;
import org.metaroce.core.verbs.WrOpcode;

/**
 * N requester endpoints writing into one responder endpoint through the wire's bottleneck port in
 * front of it: the incast shape of congestion-control tests. Every sender has one QP connected to
 * its own QP on the receiver, and writes a stream of equal messages into its own slice of the
 * receiver's memory; the fixture records when each message completed.
 */
final class IncastFixture {
    static final int[] PATHS = {49152, 49153, 49154, 49155};

    final long seed;
    final InMemoryWire wire;
    final Endpoint receiver;
    final int receiverNode;
    final MemoryRegion receiverMr;
    final List<Sender> senders = new ArrayList<>();
    final List<QueuePair> receiverQps = new ArrayList<>();
    private final int sliceBytes;

    /** One requester: endpoint, QP, its memory and the completion times of its messages. */
    static final class Sender {
        final Endpoint endpoint;
        final int node;
        final QueuePair qp;
        final MemoryRegion mr;
        final CompletionQueue cq;
        final List<Long> completionNs = new ArrayList<>();
        int posted;
        boolean failed;
        private final WorkCompletion[] scratch = new WorkCompletion[64];

        Sender(final Endpoint endpoint, final int node, final QueuePair qp, final MemoryRegion mr,
               final CompletionQueue cq) {
            this.endpoint = endpoint;
            this.node = node;
            this.qp = qp;
            this.mr = mr;
            this.cq = cq;
            for (int i = 0; i < scratch.length; i++) {
                scratch[i] = new WorkCompletion();
            }
        }

        void drain(final long nowNs) {
            int n;
            while ((n = cq.poll(scratch, scratch.length)) > 0) {
                for (int i = 0; i < n; i++) {
                    if (scratch[i].status() != WcStatus.SUCCESS) {
                        failed = true;
                    }
                    completionNs.add(nowNs);
                }
            }
        }

        boolean done() {
            return completionNs.size() == posted;
        }
    }

    /**
     * @param seed seeds the endpoints and the wire
     * @param senderCount N
     * @param config every endpoint's configuration
     * @param capabilities negotiated Capability Flags of every connection
     * @param cc CC_ALGORITHM of every QP, or null for the endpoint default
     * @param mtu path MTU
     * @param sliceBytes receiver memory per sender
     */
    IncastFixture(final long seed, final int senderCount, final EndpointConfig config, final int capabilities,
                  final CongestionControlAlgorithm cc, final int mtu, final int sliceBytes, final LinkProfile profile) {
        this(seed, senderCount, config, capabilities, cc, mtu, sliceBytes, profile, (i, e) -> e);
    }

    /**
     * As above, with each sender's endpoint attached to the wire through {@code senderHost}, which
     * may wrap it in a model of its host (its index and its endpoint in, what the wire drives out).
     */
    IncastFixture(final long seed, final int senderCount, final EndpointConfig config, final int capabilities,
                  final CongestionControlAlgorithm cc, final int mtu, final int sliceBytes, final LinkProfile profile,
                  final java.util.function.BiFunction<Integer, DatagramEndpoint, DatagramEndpoint> senderHost) {
        this.seed = seed;
        this.sliceBytes = sliceBytes;
        System.out.println("IncastFixture seed=" + seed + " senders=" + senderCount + " cc=" + cc + " caps="
            + capabilities + " profile=" + profile);
        wire = new InMemoryWire(seed, profile);
        receiver = new Endpoint(config, new SeededRandomSource(seed * 31));
        receiverNode = wire.attach(receiver);
        final ProtectionDomain rpd = receiver.allocateProtectionDomain();
        final CompletionQueue rcq = receiver.createCompletionQueue(1 << 16);
        final ByteBuffer rmem = BufferUtil.allocateDirectAligned(senderCount * sliceBytes, 64);
        receiverMr = rpd.registerMemory(rmem, AccessFlags.ALL);
        for (int i = 0; i < senderCount; i++) {
            final Endpoint e = new Endpoint(config, new SeededRandomSource(seed * 31 + i + 1));
            final int node = wire.attach(senderHost.apply(i, e));
            final ProtectionDomain pd = e.allocateProtectionDomain();
            final CompletionQueue cq = e.createCompletionQueue(1 << 16);
            final QueuePair qp = e.createQueuePair(pd, cq, cq, QueuePairCapabilities.defaults());
            final MemoryRegion mr = pd.registerMemory(BufferUtil.allocateDirectAligned(sliceBytes, 64),
                AccessFlags.ALL);
            for (int k = 0; k < sliceBytes; k++) {
                mr.buffer().putByte(k, (byte) (k * 7 + i));
            }
            final QueuePair rqp = receiver.createQueuePair(rpd, rcq, rcq, QueuePairCapabilities.defaults());
            final int psnS = (int) ((seed + i) * 0x9E3779B97F4A7C15L);
            final int psnR = (int) ((seed + i) * 0xC2B2AE3D27D4EB4FL);
            bringUp(qp, rqp.qpn(), receiverNode, mtu, psnR, psnS, capabilities, cc);
            bringUp(rqp, qp.qpn(), node, mtu, psnS, psnR, capabilities, cc);
            senders.add(new Sender(e, node, qp, mr, cq));
            receiverQps.add(rqp);
        }
    }

    private static void bringUp(final QueuePair qp, final int destQpn, final int peerNode, final int mtu,
                                final int rqPsn, final int sqPsn, final int capabilities,
                                final CongestionControlAlgorithm cc) {
        qp.modify(QpState.INIT, new QpAttributes().port(1).accessFlags(AccessFlags.ALL));
        qp.modify(QpState.RTR, new QpAttributes().pathMtu(mtu).destQpn(destQpn).rqPsn(rqPsn).maxDestRdAtomic(16)
            .minRnrTimerNs(20_000).paths(PATHS).remotePeer(peerNode).capabilities(capabilities));
        final QpAttributes rts = new QpAttributes().sqPsn(sqPsn).timeoutNs(1_000_000).retryCount(7).rnrRetry(7)
            .maxRdAtomic(16);
        if (cc != null) {
            rts.ccAlgorithm(cc);
        }
        qp.modify(QpState.RTS, rts);
    }

    /** Each sender posts {@code count} WRITEs of {@code bytes}, filling its slice cyclically. */
    void postWrites(final int count, final int bytes) {
        for (int i = 0; i < senders.size(); i++) {
            postWrites(i, count, bytes);
        }
    }

    /** Sender {@code i} posts {@code count} WRITEs of {@code bytes}, filling its slice cyclically. */
    void postWrites(final int i, final int count, final int bytes) {
        {
            final Sender s = senders.get(i);
            for (int k = 0; k < count; k++) {
                final int offset = (int) (((long) k * bytes) % sliceBytes);
                final int status = s.qp.postSend(new SendRequest(1).wrId(k).opcode(WrOpcode.RDMA_WRITE)
                    .sendFlags(SendFlags.SIGNALED).addSge(s.mr.address() + offset, bytes, s.mr.lkey())
                    .remoteAddr(receiverMr.address() + (long) i * sliceBytes + offset).rkey(receiverMr.rkey()));
                if (status != 0) {
                    throw new IllegalStateException("post failed: " + status);
                }
                s.posted++;
            }
        }
    }

    /** Runs until every sender's messages completed; @return whether they did within the timeout. */
    boolean runUntilDone(final long timeoutNs) {
        return wire.runUntil(() -> {
            boolean all = true;
            for (final Sender s : senders) {
                s.drain(wire.now());
                all &= s.done();
            }
            return all;
        }, timeoutNs);
    }

    /** @return whether every sender's slice arrived intact (the slice is written whole at least once) */
    boolean dataIntact(final int bytesWritten) {
        for (int i = 0; i < senders.size(); i++) {
            final MemoryRegion mr = senders.get(i).mr;
            for (int k = 0; k < Math.min(bytesWritten, sliceBytes); k++) {
                if (receiverMr.buffer().getByte(i * sliceBytes + k) != mr.buffer().getByte(k)) {
                    return false;
                }
            }
        }
        return true;
    }

    long totalRetransmits() {
        long n = 0;
        for (final Sender s : senders) {
            n += s.endpoint.counters().retransmits();
        }
        return n;
    }

    long totalTimeouts() {
        long n = 0;
        for (final Sender s : senders) {
            n += s.endpoint.counters().get(EndpointCounter.TIMEOUTS);
        }
        return n;
    }

    /** @return completions of sender {@code i} with completion time in [fromNs, toNs) */
    long completionsBetween(final int i, final long fromNs, final long toNs) {
        return senders.get(i).completionNs.stream().filter(t -> t >= fromNs && t < toNs).count();
    }

    long lastCompletionNs() {
        long last = 0;
        for (final Sender s : senders) {
            for (final long t : s.completionNs) {
                last = Math.max(last, t);
            }
        }
        return last;
    }
}
