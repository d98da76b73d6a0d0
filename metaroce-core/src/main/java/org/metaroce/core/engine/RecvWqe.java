// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.engine;

import org.agrona.DirectBuffer;
import org.metaroce.core.verbs.MemoryRegion;
import org.metaroce.core.verbs.WcOpcode;

/**
 * One posted receive as the responder tracks it: a copy of the scatter-gather list and the
 * progress of the message that consumes it. Packets of that message may arrive in any order; the
 * receive completes when all its bytes have arrived.
 */
final class RecvWqe {
    long wrId;
    int numSge;
    final long[] sgeAddr;
    final int[] sgeLength;
    final MemoryRegion[] sgeRegion;
    long capacity;

    boolean matched;
    /** MSN of the message the WQE is matched to [OPS-014]. */
    int msn;
    /** PSN of the message's last packet; the receive completes once the cumulative PSN passes it. */
    int lastPsn;
    long messageLength;
    long bytesReceived;
    int immData;
    boolean hasImm;
    boolean solicited;
    WcOpcode opcode;
    /** True when the message did not fit; completes with LOC_LEN_ERR. */
    boolean tooSmall;
    /** True when a buffer failed the local checks at placement; completes with LOC_PROT_ERR [OPS-015]. */
    boolean protectionError;

    RecvWqe(final int maxSge) {
        sgeAddr = new long[maxSge];
        sgeLength = new int[maxSge];
        sgeRegion = new MemoryRegion[maxSge];
    }

    void reset() {
        matched = false;
        messageLength = 0;
        bytesReceived = 0;
        immData = 0;
        hasImm = false;
        solicited = false;
        opcode = WcOpcode.RECV;
        tooSmall = false;
        protectionError = false;
        for (int i = 0; i < numSge; i++) {
            sgeRegion[i] = null;
        }
        numSge = 0;
        capacity = 0;
    }

    /**
     * @return 0 when every entry still addresses live memory this receive may write, else 1
     *     (a region deregistered after the post makes the receive fail [OPS-015])
     */
    int checkRegions() {
        for (int i = 0; i < numSge; i++) {
            final MemoryRegion mr = sgeRegion[i];
            if (mr == null || mr.checkLocal(sgeAddr[i], sgeLength[i], true)
                != org.metaroce.core.verbs.MemoryAccessResult.OK) {
                return 1;
            }
        }
        return 0;
    }

    boolean isComplete() {
        return matched && bytesReceived == messageLength;
    }

    void scatter(final long messageOffset, final DirectBuffer src, final int srcOffset, final int length) {
        ScatterGather.scatter(numSge, sgeAddr, sgeLength, sgeRegion, messageOffset, src, srcOffset, length);
    }
}
