// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.netty;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.metaroce.core.engine.EndpointCounter;
import org.metaroce.core.verbs.PostStatus;
import org.metaroce.core.verbs.SendFlags;
import org.metaroce.core.verbs.SendRequest;
import org.metaroce.core.verbs.WcStatus;
import org.metaroce.core.verbs.WrOpcode;
import org.metaroce.core.wire.BaseHeader;
import org.metaroce.core.wire.Flags;
import org.metaroce.core.wire.Opcode;

/**
 * {@link InboundDropRule}: a device drops exactly the datagrams its rule picks, counts them, and
 * the engine recovers: the first transmission of a one-packet WRITE is dropped, its retransmission
 * lands.
 */
class InboundDropRuleTest {
    private DevicePair pair;

    @AfterEach
    void close() {
        if (pair != null) {
            pair.close();
        }
    }

    @Test
    void theFirstTransmissionOfAWriteIsDroppedAndItsRetransmissionLands() {
        final AtomicInteger asked = new AtomicInteger();
        final AtomicInteger picked = new AtomicInteger();
        final InboundDropRule firstWrite = (b, offset, length) -> {
            asked.incrementAndGet();
            final boolean drop = BaseHeader.opcode(b, offset) == Opcode.WRITE.value()
                && (BaseHeader.flags(b, offset) & Flags.RETRANSMIT) == 0 && picked.get() == 0;
            if (drop) {
                picked.incrementAndGet();
            }
            return drop;
        };
        pair = new DevicePair(Transport.NIO, ThreadingMode.INVOKER, 1, c -> { }, c -> c.inboundDropRule(firstWrite))
            .connect(1024);
        final DevicePair p = pair;
        EndToEndTest.fill(p.a.mr.buffer(), 0, 512, 9);
        final int status = p.a.device.call(ep -> p.a.qp.postSend(new SendRequest(1).wrId(1)
            .opcode(WrOpcode.RDMA_WRITE).sendFlags(SendFlags.SIGNALED).addSge(p.a.address(0), 512, p.a.mr.lkey())
            .remoteAddr(p.b.address(0)).rkey(p.b.mr.rkey())));
        assertThat(status).isEqualTo(PostStatus.OK);
        assertThat(p.awaitCompletions(1, 0)).as(p::describe).isTrue();
        assertThat(p.a.sendCompletions.get(0).status()).isEqualTo(WcStatus.SUCCESS);
        EndToEndTest.assertSameBytes(p.a.mr.buffer(), 0, p.b.mr.buffer(), 0, 512);
        assertThat(picked.get()).as("datagrams the rule picked").isEqualTo(1);
        assertThat(p.b.device.counters().get(DriverCounter.FAULT_DROPPED)).isEqualTo(1);
        assertThat(asked.get()).as("the rule saw every datagram the endpoint received")
            .isEqualTo(p.b.device.counters().get(DriverCounter.DATAGRAMS_RECEIVED));
        assertThat(p.a.device.endpoint().counters().get(EndpointCounter.RETRANSMITS_LOSS_DETECTED)
            + p.a.device.endpoint().counters().get(EndpointCounter.RETRANSMITS_TIMEOUT)
            + p.a.device.endpoint().counters().get(EndpointCounter.RETRANSMITS_TAIL_PROBE))
            .as("retransmissions").isPositive();
        assertThat(new DeviceConfig().inboundDropRule()).isNull();
    }
}
