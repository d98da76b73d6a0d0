// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.verbs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.metaroce.core.verbs.PostStatus.INLINE_TOO_LARGE;
import static org.metaroce.core.verbs.PostStatus.INVALID_ARGUMENT;
import static org.metaroce.core.verbs.PostStatus.INVALID_LKEY;
import static org.metaroce.core.verbs.PostStatus.LOCAL_LENGTH_ERROR;
import static org.metaroce.core.verbs.PostStatus.LOCAL_PROTECTION;
import static org.metaroce.core.verbs.PostStatus.OK;
import static org.metaroce.core.verbs.PostStatus.TOO_MANY_SGE;

import java.nio.ByteBuffer;

import org.agrona.BufferUtil;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;
import org.metaroce.core.SeededRandomSource;

class WorkRequestValidatorTest {
    private static final int MAX_SGE = 4;
    private static final int MAX_INLINE = 64;

    private final MemoryKeySpace keys = new MemoryKeySpace(new SeededRandomSource(41));
    private final ProtectionDomain pd = new ProtectionDomain(1, keys);
    private final ByteBuffer memory = BufferUtil.allocateDirectAligned(1024, 64);
    private final MemoryRegion writable = pd.registerMemory(memory.duplicate(), AccessFlags.LOCAL_WRITE);
    private final MemoryRegion readOnly = pd.registerMemory(memory.duplicate(), AccessFlags.REMOTE_READ);
    private final long base = writable.address();
    private final SendRequest send = new SendRequest(MAX_SGE + 2);
    private final RecvRequest recv = new RecvRequest(MAX_SGE + 2);

    private int validateSend() {
        return WorkRequestValidator.validateSend(send, keys, MAX_SGE, MAX_INLINE);
    }

    private int validateRecv() {
        return WorkRequestValidator.validateRecv(recv, keys, MAX_SGE);
    }

    @Test
    void everyOpcodeWithValidArgumentsIsAccepted() {
        for (final WrOpcode opcode : WrOpcode.values()) {
            send.clear().opcode(opcode).remoteAddr(0x10000).rkey(7).addSge(base, 8, writable.lkey());
            assertThat(validateSend()).as("%s", opcode).isEqualTo(OK);
        }
    }

    @Test
    void sendWithoutSgesIsAccepted() {
        send.clear().opcode(WrOpcode.SEND);
        assertThat(validateSend()).isEqualTo(OK);
        send.sendFlags(SendFlags.INLINE);
        assertThat(validateSend()).isEqualTo(OK);
    }

    @Test
    void sourceSgesMayBeReadOnly() {
        send.clear().opcode(WrOpcode.RDMA_WRITE).addSge(base, 1024, readOnly.lkey());
        assertThat(validateSend()).isEqualTo(OK);
    }

    @Test
    void missingOpcodeIsInvalidArgument() {
        send.clear().addSge(base, 8, writable.lkey());
        assertThat(validateSend()).isEqualTo(INVALID_ARGUMENT);
    }

    @Test
    void unknownSendFlagsAreInvalidArgument() {
        send.clear().opcode(WrOpcode.SEND).sendFlags(0x10);
        assertThat(validateSend()).isEqualTo(INVALID_ARGUMENT);
        send.sendFlags(SendFlags.ALL);
        assertThat(validateSend()).isEqualTo(OK);
    }

    @Test
    void tooManySgesForTheQp() {
        send.clear().opcode(WrOpcode.SEND);
        for (int i = 0; i < MAX_SGE + 1; i++) {
            send.addSge(base, 8, writable.lkey());
        }
        assertThat(validateSend()).isEqualTo(TOO_MANY_SGE);
        for (int i = 0; i < MAX_SGE + 1; i++) {
            recv.addSge(base, 8, writable.lkey());
        }
        assertThat(validateRecv()).isEqualTo(TOO_MANY_SGE);
    }

    @Test
    void atomicsNeedExactlyOneEightByteSgeAndAlignedRemoteAddress() {
        for (final WrOpcode atomic : new WrOpcode[] {WrOpcode.ATOMIC_CMP_SWAP, WrOpcode.ATOMIC_FETCH_ADD}) {
            send.clear().opcode(atomic).remoteAddr(0x1000);
            assertThat(validateSend()).as("no SGE").isEqualTo(INVALID_ARGUMENT);
            send.addSge(base, 4, writable.lkey());
            assertThat(validateSend()).as("4-byte SGE").isEqualTo(INVALID_ARGUMENT);
            send.sge(0).length(8);
            assertThat(validateSend()).isEqualTo(OK);
            send.addSge(base + 8, 8, writable.lkey());
            assertThat(validateSend()).as("two SGEs").isEqualTo(INVALID_ARGUMENT);
            send.numSge(1).remoteAddr(0x1004);
            assertThat(validateSend()).as("misaligned").isEqualTo(INVALID_ARGUMENT);
            send.remoteAddr(0x1008).sendFlags(SendFlags.INLINE);
            assertThat(validateSend()).as("inline atomic").isEqualTo(INVALID_ARGUMENT);
        }
    }

    @Test
    void inlineReadIsInvalidArgument() {
        send.clear().opcode(WrOpcode.RDMA_READ).sendFlags(SendFlags.INLINE).addSge(base, 8, writable.lkey());
        assertThat(validateSend()).isEqualTo(INVALID_ARGUMENT);
    }

    @Test
    void negativeSgeLengthIsLocalLengthError() {
        send.clear().opcode(WrOpcode.SEND).addSge(base, -1, writable.lkey());
        assertThat(validateSend()).isEqualTo(LOCAL_LENGTH_ERROR);
        recv.addSge(base, Integer.MIN_VALUE, writable.lkey());
        assertThat(validateRecv()).isEqualTo(LOCAL_LENGTH_ERROR);
    }

    @Test
    void unknownLkeyIsInvalidLkey() {
        send.clear().opcode(WrOpcode.SEND).addSge(base, 8, writable.rkey());
        assertThat(validateSend()).as("an rkey is not an lkey").isEqualTo(INVALID_LKEY);
        recv.addSge(base, 8, 0);
        assertThat(validateRecv()).isEqualTo(INVALID_LKEY);
    }

    @Test
    void deregisteredLkeyIsInvalidLkey() {
        final MemoryRegion gone = pd.registerMemory(memory.duplicate(), AccessFlags.LOCAL_WRITE);
        pd.deregister(gone);
        send.clear().opcode(WrOpcode.SEND).addSge(base, 8, gone.lkey());
        assertThat(validateSend()).isEqualTo(INVALID_LKEY);
        recv.addSge(base, 8, gone.lkey());
        assertThat(validateRecv()).isEqualTo(INVALID_LKEY);
    }

    @Test
    void lkeyOfAnotherDomainIsInvalidOnlyWhenCheckedAgainstTheQpDomain() {
        final ProtectionDomain other = new ProtectionDomain(2, keys);
        final MemoryRegion foreign = other.registerMemory(memory.duplicate(), AccessFlags.LOCAL_WRITE);
        send.clear().opcode(WrOpcode.SEND).addSge(base, 8, foreign.lkey());
        assertThat(WorkRequestValidator.validateSend(send, pd, MAX_SGE, MAX_INLINE)).isEqualTo(INVALID_LKEY);
        assertThat(WorkRequestValidator.validateSend(send, other, MAX_SGE, MAX_INLINE)).isEqualTo(OK);
        assertThat(validateSend()).isEqualTo(OK);
        recv.addSge(base, 8, foreign.lkey());
        assertThat(WorkRequestValidator.validateRecv(recv, pd, MAX_SGE)).isEqualTo(INVALID_LKEY);
        assertThat(WorkRequestValidator.validateRecv(recv, other, MAX_SGE)).isEqualTo(OK);
    }

    @Test
    void sgeOutsideItsRegionIsLocalProtection() {
        send.clear().opcode(WrOpcode.SEND).addSge(base + 1000, 25, writable.lkey());
        assertThat(validateSend()).isEqualTo(LOCAL_PROTECTION);
        send.sge(0).addr(base - 1).length(1);
        assertThat(validateSend()).isEqualTo(LOCAL_PROTECTION);
        recv.addSge(base + 1, 1024, writable.lkey());
        assertThat(validateRecv()).isEqualTo(LOCAL_PROTECTION);
    }

    @Test
    void writesIntoRegionsWithoutLocalWriteAreLocalProtection() {
        send.clear().opcode(WrOpcode.RDMA_READ).addSge(base, 8, readOnly.lkey());
        assertThat(validateSend()).as("READ target").isEqualTo(LOCAL_PROTECTION);
        send.opcode(WrOpcode.ATOMIC_FETCH_ADD);
        assertThat(validateSend()).as("atomic result").isEqualTo(LOCAL_PROTECTION);
        recv.addSge(base, 8, readOnly.lkey());
        assertThat(validateRecv()).as("receive buffer").isEqualTo(LOCAL_PROTECTION);
    }

    @Test
    void laterSgeFailuresAreFound() {
        send.clear().opcode(WrOpcode.SEND).addSge(base, 8, writable.lkey()).addSge(base, 8, 12345);
        assertThat(validateSend()).isEqualTo(INVALID_LKEY);
    }

    @Test
    void totalLengthAboveTwoToTheThirtyOneIsLocalLengthError() {
        // A region whose recorded length is huge; nothing ever touches its memory in this test.
        final MemoryRegion huge = pd.registerMemory(
            new UnsafeBuffer(BufferUtil.address(memory), Integer.MAX_VALUE), AccessFlags.LOCAL_WRITE);
        final long start = huge.address();
        send.clear().opcode(WrOpcode.RDMA_WRITE).addSge(start, 1 << 30, huge.lkey()).addSge(start, 1 << 30, huge.lkey());
        assertThat(validateSend()).as("exactly 2^31").isEqualTo(OK);
        send.addSge(start, 1, huge.lkey());
        assertThat(validateSend()).as("2^31 + 1").isEqualTo(LOCAL_LENGTH_ERROR);
        recv.addSge(start, Integer.MAX_VALUE, huge.lkey()).addSge(start, 1, huge.lkey());
        assertThat(validateRecv()).as("exactly 2^31").isEqualTo(OK);
        recv.addSge(start, 1, huge.lkey());
        assertThat(validateRecv()).isEqualTo(LOCAL_LENGTH_ERROR);
        pd.deregister(huge);
    }

    @Test
    void inlineDataIsLimitedByTheQp() {
        send.clear().opcode(WrOpcode.SEND).sendFlags(SendFlags.INLINE)
            .addSge(base, 32, writable.lkey()).addSge(base + 32, 32, readOnly.lkey());
        assertThat(validateSend()).isEqualTo(OK);
        send.sge(1).length(33);
        assertThat(validateSend()).isEqualTo(INLINE_TOO_LARGE);
        send.sendFlags(0);
        assertThat(validateSend()).as("the limit only applies to INLINE").isEqualTo(OK);
    }

    @Test
    void inlineDataStillNeedsValidLkeys() {
        send.clear().opcode(WrOpcode.RDMA_WRITE).sendFlags(SendFlags.INLINE).addSge(base, 8, 999);
        assertThat(validateSend()).isEqualTo(INVALID_LKEY);
    }

    @Test
    void validReceiveIsAccepted() {
        recv.wrId(1).addSge(base, 512, writable.lkey()).addSge(base + 512, 512, writable.lkey());
        assertThat(validateRecv()).isEqualTo(OK);
        assertThat(WorkRequestValidator.validateRecv(new RecvRequest(0), keys, 1)).isEqualTo(OK);
    }

    @Test
    void validationDoesNotAllocate() {
        send.clear().opcode(WrOpcode.RDMA_READ).addSge(base, 64, writable.lkey()).addSge(base + 64, 64, writable.lkey());
        recv.addSge(base, 128, writable.lkey());
        final int[] sink = new int[1];
        final long bytes = Allocations.allocatedBy(100_000, () -> {
            sink[0] += WorkRequestValidator.validateSend(send, pd, MAX_SGE, MAX_INLINE);
            sink[0] += WorkRequestValidator.validateRecv(recv, keys, MAX_SGE);
        });
        assertThat(sink[0]).isZero();
        assertThat(bytes).as("bytes allocated by 100k validations").isLessThan(1024);
    }
}
