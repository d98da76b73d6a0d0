// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.netty;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.metaroce.core.engine.EndpointConfig;
import org.metaroce.core.engine.EndpointCounter;
import org.metaroce.core.verbs.PostStatus;
import org.metaroce.core.verbs.SendFlags;
import org.metaroce.core.verbs.SendRequest;
import org.metaroce.core.verbs.WcStatus;
import org.metaroce.core.verbs.WrOpcode;

/**
 * A QP spraying over four sockets emits a whole 1 MiB WRITE (256 packets) in one duty cycle. On
 * loopback nothing reorders datagrams but the sender itself: with send order preserved the
 * responder sees every packet in PSN order; flushed per socket at the end of the cycle, the packets
 * arrive grouped by socket, i.e. mostly out of order (which is what made the responder answer
 * nearly every packet with an ACK of its own).
 */
class SendOrderTest {
    @ParameterizedTest(name = "preserveSendOrder={0} burst={1} {2}")
    @CsvSource({"true,1,AUTO", "true,16,AUTO", "false,16,AUTO", "true,16,NIO"})
    void sprayedWriteArrivesInSendOrderWhenPreserved(final boolean preserve, final int burst, final Transport transport) {
        // [MP-021] packets leave in the order they were chosen, whatever the socket.
        final int length = 1 << 20;
        try (DevicePair pair = new DevicePair(transport, ThreadingMode.INVOKER, 4,
            c -> c.preserveSendOrder(preserve)
                .endpointConfig(new EndpointConfig().minRtoNs(DevicePair.MIN_RTO_NS).pathBurstPackets(burst)),
            c -> { }).connect(4096)) {
            EndToEndTest.fill(pair.a.mr.buffer(), 0, length, 5);
            assertThat((int) pair.a.device.call(ep -> pair.a.qp.postSend(new SendRequest(1).wrId(1)
                .opcode(WrOpcode.RDMA_WRITE).sendFlags(SendFlags.SIGNALED)
                .addSge(pair.a.address(0), length, pair.a.mr.lkey())
                .remoteAddr(pair.b.address(0)).rkey(pair.b.mr.rkey())))).isEqualTo(PostStatus.OK);
            assertThat(pair.awaitCompletions(1, 0)).as("completion").isTrue();
            assertThat(pair.a.sendCompletions.get(0).status()).isEqualTo(WcStatus.SUCCESS);
            pair.b.device.call(ep -> {
                EndToEndTest.assertSameBytes(pair.a.mr.buffer(), 0, pair.b.mr.buffer(), 0, length);
                return null;
            });
            final long outOfOrder = pair.b.device.call(ep -> ep.counters().get(EndpointCounter.OUT_OF_ORDER_REQUESTS));
            final long retransmits = pair.a.device.call(ep -> ep.counters().get(EndpointCounter.RETRANSMITS_TIMEOUT)
                + ep.counters().get(EndpointCounter.RETRANSMITS_LOSS_DETECTED));
            System.out.println("preserveSendOrder " + preserve + " burst " + burst + " " + transport
                + ": out-of-order arrivals " + outOfOrder + ", retransmits " + retransmits + ", sender "
                + pair.a.device.counters());
            // Loopback loses nothing here (1 MiB into a 4 MiB receive buffer, RTO at least 10 ms), so
            // the order at the receiver is the order the sender handed datagrams to the kernel.
            assertThat(retransmits).as("retransmissions").isZero();
            if (preserve) {
                assertThat(outOfOrder).isZero();
            } else {
                assertThat(outOfOrder).as("grouped by socket").isGreaterThan(64);
            }
        }
    }
}
