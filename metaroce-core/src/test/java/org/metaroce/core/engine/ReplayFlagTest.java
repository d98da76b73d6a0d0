// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.metaroce.core.verbs.SendFlags;
import org.metaroce.core.verbs.SendRequest;
import org.metaroce.core.verbs.WcStatus;
import org.metaroce.core.verbs.WorkCompletion;
import org.metaroce.core.verbs.WrOpcode;
import org.metaroce.core.wire.BaseHeader;
import org.metaroce.core.wire.Flags;
import org.metaroce.core.wire.Opcode;

/**
 * Found by the compliance suite: answers that re-send an earlier answer carry RETRANSMIT — the
 * READ_RESPONSEs of a re-executed duplicate READ_REQUEST [REL-044] and a replayed ATOMIC_RESPONSE
 * [REL-047] — so the requester takes no RTT sample from them [WIRE-016].
 */
class ReplayFlagTest {
    /** Drops the first packet of {@code opcode} and records the flags of every later one. */
    private static List<Integer> dropFirstAndRecord(final TwoNodeFixture f, final Opcode opcode) {
        final List<Integer> flags = new ArrayList<>();
        final int[] seen = {0};
        f.wire.filter((from, to, buf, off, len, now) -> {
            if (BaseHeader.opcode(buf, off) != opcode.value()) {
                return false;
            }
            if (seen[0]++ == 0) {
                return true;
            }
            flags.add(BaseHeader.flags(buf, off));
            return false;
        });
        return flags;
    }

    @Test
    void reExecutedReadResponsesCarryRetransmit() {
        final TwoNodeFixture f = new TwoNodeFixture(7201).connect(1024);
        final List<Integer> flags = dropFirstAndRecord(f, Opcode.READ_RESPONSE);
        f.a.qp.postSend(new SendRequest(1).wrId(1).opcode(WrOpcode.RDMA_READ).sendFlags(SendFlags.SIGNALED)
            .addSge(f.a.address(0), 512, f.a.mr.lkey()).remoteAddr(f.b.address(0)).rkey(f.b.mr.rkey()));
        assertThat(f.runUntilCompletions(1, 0)).isTrue();
        assertThat(f.a.sendCompletions).extracting(WorkCompletion::status).containsExactly(WcStatus.SUCCESS);
        assertThat(flags).isNotEmpty().allMatch(fl -> (fl & Flags.RETRANSMIT) != 0);
    }

    @Test
    void replayedAtomicResponseCarriesRetransmit() {
        final TwoNodeFixture f = new TwoNodeFixture(7202).connect(1024);
        final List<Integer> flags = dropFirstAndRecord(f, Opcode.ATOMIC_RESPONSE);
        f.b.mr.buffer().putLong(0, 10);
        f.a.qp.postSend(new SendRequest(1).wrId(1).opcode(WrOpcode.ATOMIC_FETCH_ADD).sendFlags(SendFlags.SIGNALED)
            .addSge(f.a.address(0), 8, f.a.mr.lkey()).remoteAddr(f.b.address(0)).rkey(f.b.mr.rkey()).compareAdd(1));
        assertThat(f.runUntilCompletions(1, 0)).isTrue();
        assertThat(f.a.sendCompletions).extracting(WorkCompletion::status).containsExactly(WcStatus.SUCCESS);
        assertThat(f.b.mr.buffer().getLong(0)).isEqualTo(11);
        assertThat(flags).isNotEmpty().allMatch(fl -> (fl & Flags.RETRANSMIT) != 0);
    }
}
