// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.netty;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.net.InetAddress;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.metaroce.core.congestion.CongestionControlAlgorithm;
import org.metaroce.core.engine.EndpointCounter;
import org.metaroce.core.verbs.AccessFlags;
import org.metaroce.core.verbs.PostStatus;
import org.metaroce.core.verbs.QpAttributes;
import org.metaroce.core.verbs.QpState;
import org.metaroce.core.verbs.SendFlags;
import org.metaroce.core.verbs.SendRequest;
import org.metaroce.core.verbs.WcStatus;
import org.metaroce.core.verbs.WrOpcode;
import org.metaroce.core.wire.ConnectHeader;
import org.metaroce.netty.linux.NativeUdp;

/**
 * ECN end to end on real sockets with a real marker: two native devices in a network namespace
 * of the test's own, where an nftables rule on the input hook sets CE on every datagram to the
 * responder's endpoint port. The responder reads CE from the IP header (native transport), counts
 * it and answers with CNPs and ECN_ECHO / CE Count [ENC-016, CC-020]; the DCQCN requester reacts
 * [CC-021]. A first WRITE before the rule is the control: no mark, no echo. Root only.
 */
class EcnEndToEndTest {
    private static final int LENGTH = 1 << 20;

    @Test
    void ceSetByTheNetworkIsEchoedAndReactedTo() throws Exception {
        assumeTrue(NativeUdp.isAvailable(), () -> "native transport unavailable: " + NativeUdp.unavailabilityReason());
        final String reason = NetworkNamespace.unavailableReason();
        assumeTrue(reason == null, () -> "skipped: " + reason);
        try (NetworkNamespace ns = new NetworkNamespace("nat2E")) {
            final CompletableFuture<Void> done = new CompletableFuture<>();
            // The devices' owning thread lives in the namespace: INVOKER devices open their sockets on it.
            final Thread owner = new Thread(() -> {
                try {
                    ns.enter();
                    run(ns);
                    done.complete(null);
                } catch (final Throwable t) {
                    done.completeExceptionally(t);
                }
            }, "ecn-e2e-owner");
            owner.start();
            done.get(60, TimeUnit.SECONDS);
        }
    }

    private static void run(final NetworkNamespace ns) throws Exception {
        try (MetaRoceDevice a = new MetaRoceDevice(config(1)); MetaRoceDevice b = new MetaRoceDevice(config(2))) {
            assertThat(a.readsEcn()).isTrue();
            final DevicePair.Node x = DevicePair.node(a);
            final DevicePair.Node y = DevicePair.node(b);
            bringUp(x, y.qp.qpn(), a.peerId(b.localAddress()), 0x111, 0x777, a.entropyPorts());
            bringUp(y, x.qp.qpn(), b.peerId(a.localAddress()), 0x777, 0x111, b.entropyPorts());

            write(x, y, 1);
            assertThat(b.endpoint().counters().get(EndpointCounter.CNPS_OUT)).as("CNPs without marks").isZero();
            assertThat(ecnEchoes(x)).as("ECN echoes without marks").isZero();

            ns.nft("add", "table", "inet", "nat2ecn");
            ns.nft("add", "chain", "inet", "nat2ecn", "in", "{ type filter hook input priority 0; policy accept; }");
            ns.nft("add", "rule", "inet", "nat2ecn", "in", "udp", "dport", Integer.toString(b.endpointPort()),
                "ip", "ecn", "set", "ce");
            write(x, y, 2);
            final long cnpsOut = b.endpoint().counters().get(EndpointCounter.CNPS_OUT);
            final long cnpsIn = a.endpoint().counters().get(EndpointCounter.CNPS_IN);
            final long echoes = ecnEchoes(x);
            System.out.println("CE on every datagram to port " + b.endpointPort() + ": responder CNPs out " + cnpsOut
                + ", requester CNPs in " + cnpsIn + ", ACKs with ECN_ECHO " + echoes);
            assertThat(cnpsOut).as("CNPs sent by the responder on CE [CC-020]").isPositive();
            assertThat(cnpsIn).as("CNPs the DCQCN requester reacted to [CC-021]").isPositive();
            assertThat(echoes).as("ACKs with ECN_ECHO on the requester's paths").isPositive();
        }
    }

    private static DeviceConfig config(final long seed) {
        return DevicePair.config(Transport.NATIVE, ThreadingMode.INVOKER, 4, seed)
            .bindAddress(InetAddress.getLoopbackAddress());
    }

    private static void bringUp(final DevicePair.Node node, final int destQpn, final int remotePeer, final int rqPsn,
                                final int sqPsn, final int[] paths) {
        node.qp.modify(QpState.INIT, new QpAttributes().port(1).accessFlags(AccessFlags.ALL));
        node.qp.modify(QpState.RTR, new QpAttributes().pathMtu(4096).destQpn(destQpn).rqPsn(rqPsn)
            .maxDestRdAtomic(16).minRnrTimerNs(20_000).paths(paths).remotePeer(remotePeer)
            .capabilities(ConnectHeader.CAP_ECN));
        node.qp.modify(QpState.RTS, new QpAttributes().ccAlgorithm(CongestionControlAlgorithm.DCQCN).sqPsn(sqPsn).timeoutNs(DevicePair.INITIAL_RTO_NS).retryCount(7)
            .rnrRetry(7).maxRdAtomic(16));
    }

    /** A 1 MiB RDMA WRITE, driven from this (owning) thread until it completes. */
    private static void write(final DevicePair.Node x, final DevicePair.Node y, final long wrId) {
        assertThat(x.qp.postSend(new SendRequest(1).wrId(wrId).opcode(WrOpcode.RDMA_WRITE)
            .sendFlags(SendFlags.SIGNALED).addSge(x.address(0), LENGTH, x.mr.lkey()).remoteAddr(y.address(0))
            .rkey(y.mr.rkey()))).isEqualTo(PostStatus.OK);
        final int before = x.sendCompletions.size();
        final long deadline = System.nanoTime() + DevicePair.TIMEOUT_NS;
        while (x.sendCompletions.size() == before && System.nanoTime() - deadline < 0) {
            x.device.doWork();
            y.device.doWork();
            x.drain();
        }
        assertThat(x.sendCompletions).hasSize(before + 1);
        assertThat(x.sendCompletions.get(before).status()).isEqualTo(WcStatus.SUCCESS);
    }

    private static long ecnEchoes(final DevicePair.Node x) {
        long sum = 0;
        for (int i = 0; i < x.device.entropyPorts().length; i++) {
            sum += x.qp.paths().ecnEchoes(i);
        }
        return sum;
    }
}
