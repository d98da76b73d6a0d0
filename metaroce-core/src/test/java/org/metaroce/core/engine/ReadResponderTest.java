// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.engine;

import static org.assertj.core.api.Assertions.assertThat;

import org.agrona.BufferUtil;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;
import org.metaroce.core.AllocationMeter;
import org.metaroce.core.SeededRandomSource;
import org.metaroce.core.verbs.AccessFlags;
import org.metaroce.core.verbs.MemoryKeySpace;
import org.metaroce.core.verbs.MemoryRegion;
import org.metaroce.core.verbs.ProtectionDomain;
import org.metaroce.core.wire.Flags;
import org.metaroce.core.wire.Opcode;

/**
 * The responder's READs on their own: held in PSN order and run only once every earlier PSN has
 * arrived and no earlier atomic waits [OPS-029], answered one PMTU per READ_RESPONSE with LAST on
 * the packet that ends the message, with RETRANSMIT when a duplicate request is executed again
 * [REL-044], a zero-length READ answered without a region [OPS-023], a region lost while being
 * answered reported rather than read [MEM-006], a full sink leaving the job untouched, and no
 * allocation on the way, since it runs for every READ_RESPONSE.
 */
class ReadResponderTest {
    private static final int MTU = 256;
    private static final int JOBS = 4;
    /** Just before the PSN wrap, so that ordering runs on serial arithmetic. */
    private static final int BASE = 0xFFFF_FFFE;

    private final ProtectionDomain pd = new ProtectionDomain(1, new MemoryKeySpace(new SeededRandomSource(19)));
    private final MemoryRegion region = pd.registerMemory(
        new UnsafeBuffer(BufferUtil.allocateDirectAligned(4096, 64)), AccessFlags.ALL);
    private final ReadResponder reads = new ReadResponder(JOBS);
    private final ResponseCapture out = new ResponseCapture();

    ReadResponderTest() {
        for (int i = 0; i < region.length(); i++) {
            region.buffer().putByte(i, (byte) i);
        }
    }

    /** Holds a READ of {@code length} bytes from offset 0 of the region, a whole message. */
    private void hold(final int psn, final int msn, final long length, final boolean repeat) {
        reads.hold(psn, length == 0 ? null : region, 0, 0, length, msn, ReadResponder.responseCount(length, MTU),
            length, repeat);
    }

    /** Emits every response the oldest READs may send with ePSN {@code expectedPsn} and no atomic held. */
    private void emitAll(final int expectedPsn) {
        while (reads.hasHeld() && reads.oldestMayRun(expectedPsn, false, 0)) {
            assertThat(reads.oldestLostItsRegion()).isFalse();
            assertThat(reads.emitResponse(10, out, out, MTU)).isTrue();
        }
    }

    @Test
    void aReadTakesOneResponsePerPmtuAndAtLeastOne() {
        assertThat(ReadResponder.responseCount(0, MTU)).isEqualTo(1);
        assertThat(ReadResponder.responseCount(1, MTU)).isEqualTo(1);
        assertThat(ReadResponder.responseCount(MTU, MTU)).isEqualTo(1);
        assertThat(ReadResponder.responseCount(MTU + 1, MTU)).isEqualTo(2);
        assertThat(ReadResponder.responseCount(3L * MTU, MTU)).isEqualTo(3);
    }

    @Test
    void aReadIsAnsweredOnePmtuAtATimeWithLastOnTheFinalPacketAndThenForgotten() {
        final long length = 2L * MTU + 10;
        hold(BASE, 7, length, false);
        assertThat(reads.isHeld(BASE)).isTrue();
        emitAll(BASE + 3);
        assertThat(out.sent()).isEqualTo(3);
        final Opcode op = Opcode.READ_RESPONSE;
        for (int i = 0; i < 3; i++) {
            assertThat(out.opcode(i)).isEqualTo(op.value());
            // Consecutive PSNs from the request's, across the wrap.
            assertThat(out.psn(i)).isEqualTo(BASE + i);
            assertThat(out.msn(i, op)).isEqualTo(7);
            assertThat(out.messageOffset(i, op)).isEqualTo((long) i * MTU);
            assertThat(out.messageLength(i, op)).isEqualTo(length);
            assertThat(out.flags(i) & Flags.LAST).isEqualTo(i == 2 ? Flags.LAST : 0);
            assertThat(out.flags(i) & Flags.RETRANSMIT).isZero();
        }
        assertThat(out.payloadLength(0)).isEqualTo(MTU);
        assertThat(out.payloadLength(2)).isEqualTo(10);
        // The data is the region's, read at the time of the response.
        final int payload = out.offset(1) + op.headerLength();
        for (int b = 0; b < MTU; b++) {
            assertThat(out.buffer.getByte(payload + b)).isEqualTo((byte) (MTU + b));
        }
        assertThat(reads.hasHeld()).isFalse();
        assertThat(reads.isHeld(BASE)).isFalse();
    }

    @Test
    void aRepeatedRequestIsAnsweredAgainWithRetransmitOnEveryResponse() {
        hold(BASE, 3, MTU + 1, true);
        emitAll(BASE + 2);
        assertThat(out.sent()).isEqualTo(2);
        assertThat(out.flags(0)).isEqualTo(Flags.RETRANSMIT);
        assertThat(out.flags(1)).isEqualTo(Flags.RETRANSMIT | Flags.LAST);
    }

    @Test
    void aZeroLengthReadIsOneEmptyLastResponseWithoutARegion() {
        hold(BASE, 1, 0, false);
        assertThat(reads.oldestLostItsRegion()).isFalse();
        emitAll(BASE + 1);
        assertThat(out.sent()).isEqualTo(1);
        assertThat(out.payloadLength(0)).isZero();
        assertThat(out.flags(0)).isEqualTo(Flags.LAST);
        assertThat(out.messageLength(0, Opcode.READ_RESPONSE)).isZero();
    }

    @Test
    void theOldestReadRunsOnlyAfterEveryEarlierPsnAndBeforeLaterAtomics() {
        // Arrived out of order: the later one first.
        hold(BASE + 2, 2, 8, false);
        hold(BASE, 1, 8, false);
        assertThat(reads.oldestPsn()).isEqualTo(BASE);
        // Its own PSN not yet passed by ePSN: it waits.
        assertThat(reads.oldestMayRun(BASE, false, 0)).isFalse();
        assertThat(reads.oldestMayRun(BASE + 1, false, 0)).isTrue();
        // An atomic before it, or at its PSN, runs first; one after it waits for it.
        assertThat(reads.oldestMayRun(BASE + 1, true, BASE - 1)).isFalse();
        assertThat(reads.oldestMayRun(BASE + 1, true, BASE)).isFalse();
        assertThat(reads.oldestMayRun(BASE + 1, true, BASE + 1)).isTrue();
        emitAll(BASE + 1);
        // Only the first ran: the second waits for ePSN to pass BASE + 2.
        assertThat(out.sent()).isEqualTo(1);
        assertThat(out.psn(0)).isEqualTo(BASE);
        assertThat(reads.oldestPsn()).isEqualTo(BASE + 2);
        emitAll(BASE + 3);
        assertThat(out.sent()).isEqualTo(2);
        assertThat(out.msn(1, Opcode.READ_RESPONSE)).isEqualTo(2);
    }

    @Test
    void aFullSinkWritesNothingAndTheSameResponseGoesOutLater() {
        hold(BASE, 1, 2L * MTU, false);
        out.room = 0;
        assertThat(reads.emitResponse(10, out, out, MTU)).isFalse();
        assertThat(out.sent()).isZero();
        assertThat(out.claims).isEqualTo(1);
        out.room = Integer.MAX_VALUE;
        emitAll(BASE + 2);
        assertThat(out.sent()).isEqualTo(2);
        assertThat(out.psn(0)).isEqualTo(BASE);
        assertThat(out.messageOffset(0, Opcode.READ_RESPONSE)).isZero();
    }

    @Test
    void aRegionDeregisteredWhileAnsweredIsReportedAndTheReadForgotten() {
        final MemoryRegion doomed = pd.registerMemory(new UnsafeBuffer(BufferUtil.allocateDirectAligned(1024, 64)),
            AccessFlags.ALL);
        reads.hold(BASE, doomed, 0, 0, 2L * MTU, 1, 2, 2L * MTU, false);
        assertThat(reads.emitResponse(10, out, out, MTU)).isTrue();
        pd.deregister(doomed);
        assertThat(reads.oldestLostItsRegion()).isTrue();
        assertThat(reads.oldestPsn()).isEqualTo(BASE);
        reads.forgetOldest();
        assertThat(reads.hasHeld()).isFalse();
        assertThat(out.sent()).isEqualTo(1);
    }

    @Test
    void clearingForgetsEveryReadAndFreesEverySlot() {
        for (int i = 0; i < JOBS; i++) {
            hold(BASE + i, i, 8, false);
        }
        assertThat(reads.isFull()).isTrue();
        reads.clear();
        assertThat(reads.hasHeld()).isFalse();
        assertThat(reads.isHeld(BASE)).isFalse();
        for (int i = 0; i < JOBS; i++) {
            hold(100 + i, i, 8, false);
        }
        assertThat(reads.isFull()).isTrue();
        emitAll(100 + JOBS);
        assertThat(out.sent()).isEqualTo(JOBS);
    }

    /** One round: READs held out of order, then answered. */
    private void exercise(final int base) {
        hold(base + 3, 2, 2L * MTU, false);
        hold(base, 1, 3L * MTU, true);
        if (!reads.isHeld(base) || reads.isFull()) {
            throw new AssertionError();
        }
        // As emitAll, without AssertJ's allocations.
        while (reads.hasHeld() && reads.oldestMayRun(base + 5, false, 0)) {
            if (reads.oldestLostItsRegion() || !reads.emitResponse(10, out, out, MTU)) {
                throw new AssertionError();
            }
        }
    }

    @Test
    void theDataPathDoesNotAllocate() {
        final int rounds = 50_000;
        final AllocationMeter.Measurement m = AllocationMeter.fewestBytes(rounds, i -> exercise(i * 5));
        assertThat(m.fewest()).as("bytes allocated by %d rounds: %s", rounds, m).isZero();
        assertThat(reads.hasHeld()).isFalse();
    }
}
