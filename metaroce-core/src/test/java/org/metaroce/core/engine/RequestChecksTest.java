// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.ByteOrder;
import org.agrona.BufferUtil;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;
import org.metaroce.core.SeededRandomSource;
import org.metaroce.core.verbs.AccessFlags;
import org.metaroce.core.verbs.MemoryKeySpace;
import org.metaroce.core.verbs.MemoryRegion;
import org.metaroce.core.verbs.ProtectionDomain;
import org.metaroce.core.verbs.WcOpcode;
import org.metaroce.core.wire.Flags;
import org.metaroce.core.wire.MessageHeader;
import org.metaroce.core.wire.NackReason;
import org.metaroce.core.wire.Opcode;

/** {@link RequestChecks} on its own: segmentation, rkey and range, and the receive a message consumes. */
class RequestChecksTest {
    private static final int MTU = 1024;
    private final ProtectionDomain pd = new ProtectionDomain(1, new MemoryKeySpace(new SeededRandomSource(19)));
    private final MemoryRegion writable = pd.registerMemory(
        new UnsafeBuffer(BufferUtil.allocateDirectAligned(4096, 64)), AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE);
    private final RequestChecks checks = new RequestChecks();

    @Test
    void segmentationFollowsThePmtuAndLastEndsTheMessage() {
        // [OPS-002, OPS-005]: 2500 bytes are 1024 + 1024 + 452, LAST on the third.
        assertThat(RequestChecks.segmentedAsSpecified(MTU, 0, 2500, 1024, 0)).isTrue();
        assertThat(RequestChecks.segmentedAsSpecified(MTU, 2048, 2500, 452, Flags.LAST)).isTrue();
        assertThat(RequestChecks.segmentedAsSpecified(MTU, 2048, 2500, 452, 0)).as("LAST missing").isFalse();
        assertThat(RequestChecks.segmentedAsSpecified(MTU, 1024, 2500, 1024, Flags.LAST)).as("LAST early").isFalse();
        assertThat(RequestChecks.segmentedAsSpecified(MTU, 100, 2500, 1024, 0)).as("offset off the PMTU").isFalse();
        assertThat(RequestChecks.segmentedAsSpecified(MTU, 0, 2500, 1000, 0)).as("short packet").isFalse();
        assertThat(RequestChecks.segmentedAsSpecified(MTU, 0, 0, 0, Flags.LAST)).as("zero length").isTrue();
    }

    @Test
    void remoteAccessNeedsALiveKeyTheRightAccessAndTheWholeRange() {
        // [MEM-009]
        final long va = writable.address();
        assertThat(checks.remote(pd, writable.rkey(), va, 4096, AccessFlags.REMOTE_WRITE)).isSameAs(writable);
        assertThat(checks.remote(pd, writable.rkey(), va + 1, 4096, AccessFlags.REMOTE_WRITE)).as("range").isNull();
        assertThat(checks.remote(pd, writable.rkey(), va, 8, AccessFlags.REMOTE_READ)).as("access").isNull();
        assertThat(checks.remote(pd, writable.rkey() ^ 1, va, 8, AccessFlags.REMOTE_WRITE)).as("key").isNull();
        // The cache must not keep a region alive past its deregistration.
        assertThat(checks.remote(pd, writable.rkey(), va, 8, AccessFlags.REMOTE_WRITE)).isSameAs(writable);
        pd.deregister(writable);
        assertThat(checks.remote(pd, writable.rkey(), va, 8, AccessFlags.REMOTE_WRITE)).as("deregistered").isNull();
    }

    @Test
    void theFirstPacketClaimsTheReceiveAndLaterOnesMustAgree() {
        // [OPS-014, OPS-042]
        final UnsafeBuffer packet = new UnsafeBuffer(new byte[256]);
        final RecvWqe recv = new RecvWqe(1);
        recv.capacity = 4096;
        msn(packet, Opcode.SEND, 7);
        assertThat(RequestChecks.matchReceive(recv, Opcode.SEND, packet, 0, 100, 1024, 2500, MTU)).isNull();
        assertThat(recv.matched).isTrue();
        assertThat(recv.msn).isEqualTo(7);
        assertThat(recv.lastPsn).as("third packet of the message, this one its second").isEqualTo(101);
        assertThat(recv.opcode).isEqualTo(WcOpcode.RECV);
        assertThat(RequestChecks.matchReceive(recv, Opcode.SEND, packet, 0, 99, 0, 2500, MTU)).isNull();
        assertThat(RequestChecks.matchReceive(recv, Opcode.SEND, packet, 0, 101, 2048, 2400, MTU))
            .as("another length").isEqualTo(NackReason.INVALID_REQUEST);
        msn(packet, Opcode.SEND, 8);
        assertThat(RequestChecks.matchReceive(recv, Opcode.SEND, packet, 0, 101, 2048, 2500, MTU))
            .as("another message").isEqualTo(NackReason.INVALID_REQUEST);
    }

    @Test
    void aSendThatDoesNotFitIsARemoteOperationError() {
        // [OPS-012]: LOC_LEN_ERR here, REM_OP_ERR at the requester.
        final UnsafeBuffer packet = new UnsafeBuffer(new byte[256]);
        final RecvWqe recv = new RecvWqe(1);
        recv.capacity = 1000;
        assertThat(RequestChecks.matchReceive(recv, Opcode.SEND, packet, 0, 5, 0, 1001, MTU))
            .isEqualTo(NackReason.REMOTE_OPERATION);
        assertThat(recv.tooSmall).isTrue();
        assertThat(recv.protectionError).isFalse();
        // A WRITE_WITH_IMM places into the region, not the receive: its size does not matter.
        final RecvWqe imm = new RecvWqe(1);
        assertThat(RequestChecks.matchReceive(imm, Opcode.WRITE_WITH_IMM, packet, 0, 5, 0, 1001, MTU)).isNull();
        assertThat(imm.opcode).isEqualTo(WcOpcode.RECV_RDMA_WITH_IMM);
        assertThat(imm.hasImm).isTrue();
    }

    @Test
    void everyFatalNackHasItsCounter() {
        assertThat(RequestChecks.nackCounter(NackReason.INVALID_REQUEST))
            .isEqualTo(EndpointCounter.NACKS_OUT_INVALID_REQUEST);
        assertThat(RequestChecks.nackCounter(NackReason.REMOTE_ACCESS)).isEqualTo(EndpointCounter.NACKS_OUT_REMOTE_ACCESS);
        assertThat(RequestChecks.nackCounter(NackReason.REMOTE_OPERATION))
            .isEqualTo(EndpointCounter.NACKS_OUT_REMOTE_OPERATION);
        assertThatThrownBy(() -> RequestChecks.nackCounter(NackReason.RNR)).isInstanceOf(IllegalArgumentException.class);
    }

    private static void msn(final UnsafeBuffer packet, final Opcode opcode, final int msn) {
        packet.putInt(opcode.msgOffset() + MessageHeader.MSN_OFFSET, msn, ByteOrder.BIG_ENDIAN);
    }
}
