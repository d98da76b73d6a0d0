// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.netty;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.metaroce.core.engine.EndpointCounter;
import org.metaroce.core.verbs.PostStatus;
import org.metaroce.core.verbs.SendFlags;
import org.metaroce.core.verbs.SendRequest;
import org.metaroce.core.verbs.WcStatus;
import org.metaroce.core.verbs.WrOpcode;

/**
 * {@link InboundFaults}: seeded loss and reordering of what a device receives. A 1 MiB WRITE
 * between two INVOKER devices that both drop 5% and reorder 20% of their datagrams still lands
 * byte for byte; the faults really happened (counted by the driver, and the engine saw loss and
 * retransmitted).
 */
class InboundFaultsTest {
    private DevicePair pair;

    @AfterEach
    void close() {
        if (pair != null) {
            pair.close();
        }
    }

    @Test
    void writeSurvivesSeededLossAndReordering() {
        final long seed = 4242;
        System.out.println("InboundFaultsTest seed=" + seed);
        pair = new DevicePair(Transport.NIO, ThreadingMode.INVOKER, 4,
            c -> c.inboundFaults(new InboundFaults(0.05, 0.2, seed)),
            c -> c.inboundFaults(new InboundFaults(0.05, 0.2, seed + 1))).connect(1024);
        final DevicePair p = pair;
        final int length = 1 << 20;
        EndToEndTest.fill(p.a.mr.buffer(), 0, length, 5);
        final int status = p.a.device.call(ep -> p.a.qp.postSend(new SendRequest(1).wrId(1)
            .opcode(WrOpcode.RDMA_WRITE).sendFlags(SendFlags.SIGNALED).addSge(p.a.address(0), length, p.a.mr.lkey())
            .remoteAddr(p.b.address(0)).rkey(p.b.mr.rkey())));
        assertThat(status).isEqualTo(PostStatus.OK);
        assertThat(p.awaitCompletions(1, 0)).as(p::describe).isTrue();
        assertThat(p.a.sendCompletions.get(0).status()).isEqualTo(WcStatus.SUCCESS);
        final UnsafeBuffer dst = p.b.mr.buffer();
        EndToEndTest.assertSameBytes(p.a.mr.buffer(), 0, dst, 0, length);

        final long dropped = p.b.device.counters().get(DriverCounter.FAULT_DROPPED);
        final long reordered = p.b.device.counters().get(DriverCounter.FAULT_REORDERED);
        final long received = p.b.device.counters().get(DriverCounter.DATAGRAMS_RECEIVED);
        assertThat(dropped).as("dropped of %d", received).isPositive();
        assertThat(reordered).as("reordered of %d", received).isPositive();
        assertThat(dropped).isLessThan(received / 5);
        // The engine delivered what was not dropped, and recovered what was.
        assertThat(p.b.device.endpoint().counters().get(EndpointCounter.PACKETS_IN)).isEqualTo(received - dropped);
        assertThat(p.a.device.endpoint().counters().get(EndpointCounter.RETRANSMITS_LOSS_DETECTED)
            + p.a.device.endpoint().counters().get(EndpointCounter.RETRANSMITS_TIMEOUT)
            + p.a.device.endpoint().counters().get(EndpointCounter.RETRANSMITS_TAIL_PROBE)).isPositive();
        assertThat(p.b.device.counters().get(DriverCounter.ENGINE_ERRORS)).isZero();
    }

    @Test
    void profileIsValidated() {
        assertThatThrownBy(() -> new InboundFaults(1.0, 0, 1)).hasMessageContaining("dropProbability");
        assertThatThrownBy(() -> new InboundFaults(0, -0.1, 1)).hasMessageContaining("reorderProbability");
        assertThat(new DeviceConfig().inboundFaults()).isNull();
    }
}
