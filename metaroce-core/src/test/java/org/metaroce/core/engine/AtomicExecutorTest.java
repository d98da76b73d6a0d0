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
import org.metaroce.core.wire.AtomicAckHeader;
import org.metaroce.core.wire.Flags;
import org.metaroce.core.wire.Opcode;

/**
 * The responder's atomics on their own: executed in PSN order once every earlier PSN has arrived
 * and no earlier READ waits [OPS-029], each exactly once, a duplicate answered from the retained
 * results with RETRANSMIT and without executing [REL-047], the bound on held atomics plus
 * unwritten responses, what a flush and a reset forget, and no allocation on the way.
 */
class AtomicExecutorTest {
    private static final int SLOTS = 4;
    /** Just before the PSN wrap, so that ordering runs on serial arithmetic. */
    private static final int BASE = 0xFFFF_FFFE;

    private final MemoryRegion region = new ProtectionDomain(1, new MemoryKeySpace(new SeededRandomSource(23)))
        .registerMemory(new UnsafeBuffer(BufferUtil.allocateDirectAligned(4096, 64)), AccessFlags.ALL);
    private final AtomicExecutor atomics = new AtomicExecutor(SLOTS);
    private final ResponseCapture out = new ResponseCapture();

    private void fetchAdd(final int psn, final int msn, final int index, final long add) {
        atomics.hold(psn, msn, false, region, index, add, 0);
    }

    private void compareSwap(final int psn, final int msn, final int index, final long compare, final long swap) {
        atomics.hold(psn, msn, true, region, index, swap, compare);
    }

    private void emitAll() {
        while (atomics.hasResponses()) {
            assertThat(atomics.emitResponse(10, out, out)).isTrue();
        }
    }

    private long originalData(final int i) {
        return AtomicAckHeader.originalData(out.buffer, out.offset(i) + Opcode.ATOMIC_RESPONSE.aackOffset());
    }

    @Test
    void atomicsRunInPsnOrderOnceEveryEarlierPsnHasArrived() {
        region.buffer().putLong(0, 10);
        // Arrived out of order: the CMP_SWAP, which expects the FETCH_ADD's result, first.
        compareSwap(BASE + 1, 2, 0, 15, 100);
        fetchAdd(BASE, 1, 0, 5);
        assertThat(atomics.oldestHeldPsn()).isEqualTo(BASE);
        atomics.executeReady(BASE, false, 0);
        assertThat(atomics.hasResponses()).isFalse();
        assertThat(region.buffer().getLong(0)).isEqualTo(10);
        // ePSN past the first only: it alone runs.
        atomics.executeReady(BASE + 1, false, 0);
        assertThat(region.buffer().getLong(0)).isEqualTo(15);
        atomics.executeReady(BASE + 2, false, 0);
        assertThat(region.buffer().getLong(0)).isEqualTo(100);
        assertThat(atomics.hasHeld()).isFalse();
        emitAll();
        assertThat(out.sent()).isEqualTo(2);
        final Opcode op = Opcode.ATOMIC_RESPONSE;
        assertThat(out.opcode(0)).isEqualTo(op.value());
        assertThat(out.psn(0)).isEqualTo(BASE);
        assertThat(out.msn(0, op)).isEqualTo(1);
        assertThat(out.flags(0)).isEqualTo(Flags.LAST);
        assertThat(out.messageLength(0, op)).isEqualTo(8);
        assertThat(originalData(0)).isEqualTo(10);
        assertThat(out.psn(1)).isEqualTo(BASE + 1);
        assertThat(originalData(1)).isEqualTo(15);
    }

    @Test
    void aFailedCompareLeavesMemoryAndReturnsWhatItSaw() {
        region.buffer().putLong(8, 7);
        compareSwap(BASE, 1, 8, 6, 100);
        atomics.executeReady(BASE + 1, false, 0);
        assertThat(region.buffer().getLong(8)).isEqualTo(7);
        emitAll();
        assertThat(originalData(0)).isEqualTo(7);
    }

    @Test
    void anAtomicWaitsForAnEarlierReadButNotForALaterOne() {
        fetchAdd(BASE + 1, 1, 0, 1);
        atomics.executeReady(BASE + 5, true, BASE);
        assertThat(atomics.hasHeld()).isTrue();
        // A READ at its own PSN does not hold it back (the READ waits for it instead).
        atomics.executeReady(BASE + 5, true, BASE + 1);
        assertThat(atomics.hasHeld()).isFalse();
        assertThat(atomics.hasResponses()).isTrue();
    }

    @Test
    void aDuplicateIsAnsweredFromTheRetainedResultWithoutExecutingAgain() {
        region.buffer().putLong(0, 40);
        fetchAdd(BASE, 9, 0, 2);
        atomics.executeReady(BASE + 1, false, 0);
        emitAll();
        assertThat(atomics.replay(BASE)).isTrue();
        assertThat(region.buffer().getLong(0)).isEqualTo(42);
        emitAll();
        assertThat(out.sent()).isEqualTo(2);
        assertThat(out.psn(1)).isEqualTo(BASE);
        assertThat(out.msn(1, Opcode.ATOMIC_RESPONSE)).isEqualTo(9);
        assertThat(out.flags(1)).isEqualTo(Flags.LAST | Flags.RETRANSMIT);
        assertThat(originalData(1)).isEqualTo(40);
        // Not retained (never executed here): nothing, only the duplicate ACK of REL-042.
        assertThat(atomics.replay(BASE + 1)).isFalse();
        assertThat(atomics.hasResponses()).isFalse();
    }

    @Test
    void theResultsOfTheLatestSlotsAtomicsAreRetained() {
        for (int i = 0; i <= SLOTS; i++) {
            fetchAdd(BASE + i, i, 0, 1);
            atomics.executeReady(BASE + i + 1, false, 0);
            emitAll();
        }
        // SLOTS + 1 executed: the first one's result has been overwritten.
        assertThat(atomics.replay(BASE)).isFalse();
        for (int i = 1; i <= SLOTS; i++) {
            assertThat(atomics.replay(BASE + i)).as("PSN BASE + %d", i).isTrue();
        }
    }

    @Test
    void heldAtomicsAndUnwrittenResponsesShareTheSlots() {
        fetchAdd(BASE, 1, 0, 1);
        fetchAdd(BASE + 1, 2, 0, 1);
        atomics.executeReady(BASE + 2, false, 0);
        fetchAdd(BASE + 3, 4, 0, 1);
        assertThat(atomics.isFull()).isFalse();
        fetchAdd(BASE + 4, 5, 0, 1);
        // Two responses unwritten, two atomics held.
        assertThat(atomics.isFull()).isTrue();
        out.room = 0;
        assertThat(atomics.emitResponse(10, out, out)).isFalse();
        assertThat(atomics.isFull()).isTrue();
        out.room = Integer.MAX_VALUE;
        assertThat(atomics.emitResponse(10, out, out)).isTrue();
        assertThat(out.psn(0)).isEqualTo(BASE);
        assertThat(atomics.isFull()).isFalse();
    }

    /**
     * A replay may not take the room a held atomic's response will need: responses share one ring
     * of SLOTS entries, and every held atomic queues one when it executes. (Replays used to check
     * only the ring's count: with two atomics held behind a gap, two replays filled the ring, and
     * the held atomics' responses then overwrote the oldest unwritten ones — the first atomic's
     * own response was never sent and the last went out twice.)
     */
    @Test
    void aReplayNeverTakesTheRoomOfAHeldAtomicsResponse() {
        fetchAdd(BASE, 1, 0, 1);
        atomics.executeReady(BASE + 1, false, 0);
        // BASE + 1 is missing: these two wait behind it.
        fetchAdd(BASE + 2, 3, 0, 1);
        fetchAdd(BASE + 3, 4, 0, 1);
        atomics.executeReady(BASE + 1, false, 0);
        assertThat(atomics.replay(BASE)).isTrue();
        // One response and one replay unwritten, two atomics held: every slot is spoken for.
        assertThat(atomics.isFull()).isTrue();
        assertThat(atomics.replay(BASE)).isFalse();
        atomics.executeReady(BASE + 4, false, 0);
        emitAll();
        assertThat(out.sent()).isEqualTo(4);
        assertThat(out.psn(0)).isEqualTo(BASE);
        assertThat(out.flags(0)).isEqualTo(Flags.LAST);
        assertThat(out.psn(1)).isEqualTo(BASE);
        assertThat(out.flags(1)).isEqualTo(Flags.LAST | Flags.RETRANSMIT);
        assertThat(out.psn(2)).isEqualTo(BASE + 2);
        assertThat(out.psn(3)).isEqualTo(BASE + 3);
    }

    @Test
    void aFlushForgetsHeldAtomicsAndResponsesButAResetAlsoForgetsTheResults() {
        fetchAdd(BASE, 1, 0, 1);
        atomics.executeReady(BASE + 1, false, 0);
        fetchAdd(BASE + 2, 3, 0, 1);
        // The flush of ERR.
        atomics.dropHeld();
        atomics.dropResponses();
        assertThat(atomics.hasHeld()).isFalse();
        assertThat(atomics.hasResponses()).isFalse();
        assertThat(atomics.isFull()).isFalse();
        assertThat(atomics.replay(BASE)).isTrue();
        atomics.dropResponses();
        // The reset to RESET: a QP used again must not answer with its old connection's results.
        atomics.forgetResults();
        assertThat(atomics.replay(BASE)).isFalse();
        assertThat(region.buffer().getLong(0)).isEqualTo(1);
    }

    /** One round: atomics held out of order, executed, answered, one replayed. */
    private void exercise(final int base) {
        fetchAdd(base + 1, 2, 0, 1);
        compareSwap(base, 1, 8, 0, 0);
        atomics.executeReady(base + 2, false, 0);
        if (!atomics.replay(base + 1)) {
            throw new AssertionError();
        }
        while (atomics.hasResponses()) {
            atomics.emitResponse(10, out, out);
        }
    }

    @Test
    void theDataPathDoesNotAllocate() {
        final int rounds = 50_000;
        final AllocationMeter.Measurement m = AllocationMeter.fewestBytes(rounds, i -> exercise(i * 2));
        assertThat(m.fewest()).as("bytes allocated by %d rounds: %s", rounds, m).isZero();
        assertThat(atomics.hasHeld()).isFalse();
    }
}
