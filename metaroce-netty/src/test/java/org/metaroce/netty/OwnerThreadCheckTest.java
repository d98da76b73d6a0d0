// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.netty;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.ByteBuffer;

import org.junit.jupiter.api.Test;
import org.metaroce.core.verbs.AccessFlags;
import org.metaroce.core.verbs.RecvRequest;
import org.metaroce.core.verbs.SendRequest;
import org.metaroce.core.verbs.WrOpcode;

/**
 * The engine is single-threaded: a DEDICATED device's objects refuse calls from any thread but its
 * driver thread, with a message naming both threads and the way to hand the call over (issue 18:
 * these calls used to succeed from the main thread and race the driver).
 */
class OwnerThreadCheckTest {
    @Test
    void callsFromAnotherThreadAreRefusedWithTheWayOut() {
        try (DevicePair pair = new DevicePair(Transport.AUTO, ThreadingMode.DEDICATED, 2).connect(1024)) {
            final DevicePair.Node a = pair.a;
            final String driver = a.device.endpoint().owningThread().get().getName();
            assertThat(driver).isNotEqualTo(Thread.currentThread().getName());
            assertThatThrownBy(() -> a.qp.postSend(new SendRequest(1).wrId(1).opcode(WrOpcode.RDMA_WRITE)
                .addSge(a.mr.address(), 8, a.mr.lkey()).remoteAddr(pair.b.mr.address()).rkey(pair.b.mr.rkey())))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("postSend called on thread '" + Thread.currentThread().getName() + "'")
                .hasMessageContaining("owned by thread '" + driver + "'")
                .hasMessageContaining("MetaRoceDevice.call/submit/execute");
            assertThatThrownBy(() -> a.qp.postRecv(new RecvRequest(1).wrId(2))).hasMessageContaining("postRecv");
            assertThatThrownBy(() -> a.pd.registerMemory(ByteBuffer.allocateDirect(64), AccessFlags.ALL))
                .hasMessageContaining("registerMemory");
            assertThatThrownBy(() -> a.device.endpoint().createCompletionQueue(8))
                .hasMessageContaining("createCompletionQueue");
            // The same calls on the owning thread work.
            final Object cq = a.device.call(ep -> ep.createCompletionQueue(8));
            assertThat(cq).isNotNull();
        }
    }

    @Test
    void theCheckCanBeTurnedOff() {
        try (DevicePair pair = new DevicePair(Transport.AUTO, ThreadingMode.DEDICATED, 2,
            c -> c.ownerThreadChecks(false), c -> { })) {
            assertThat(pair.a.device.endpoint().owningThread().get()).isNull();
            assertThat(pair.b.device.endpoint().owningThread().get()).isNotNull();
        }
    }
}
