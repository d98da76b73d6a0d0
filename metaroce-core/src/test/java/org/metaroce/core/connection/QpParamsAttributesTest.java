// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.connection;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.metaroce.core.verbs.QpAttributes;

/** [CM-019]: the attributes both sides move their queue pair to RTR and RTS with. */
class QpParamsAttributesTest {
    @Test
    void rtrTakesTheNegotiatedValuesAndTheFirstPathCountEntropies() {
        final ConnectParams p = new ConnectParams().paths(101, 102, 103, 104).minRnrTimerNs(123_000);
        final Connection c = new Connection(false, 1, 2, null);
        c.mtu = 2048;
        c.remoteQpn = 77;
        c.remoteInitialPsn = 0x00AB_CDEF;
        c.pathCount = 2;
        c.remotePeer = 9;
        c.capabilities = 0b101;

        final QpAttributes rtr = p.rtrAttributes(c, 0);

        assertThat(rtr.pathMtu()).isEqualTo(2048);
        assertThat(rtr.destQpn()).isEqualTo(77);
        assertThat(rtr.rqPsn()).isEqualTo(0x00AB_CDEF);
        assertThat(rtr.paths()).containsExactly(101, 102);
        assertThat(rtr.remotePeer()).isEqualTo(9);
        assertThat(rtr.capabilities()).isEqualTo(0b101);
        assertThat(rtr.minRnrTimerNs()).isEqualTo(123_000);
        assertThat(rtr.maxDestRdAtomic()).as("a peer granted no READs still gets one slot").isEqualTo(1);
        assertThat(p.rtrAttributes(c, 8).maxDestRdAtomic()).isEqualTo(8);
    }

    @Test
    void rtsTakesThisSidesRetryParameters() {
        final ListenParams p = new ListenParams().paths(1).timeoutNs(4_000_000).retryCount(3).rnrRetry(5);

        final QpAttributes rts = p.rtsAttributes(42, 0);

        assertThat(rts.sqPsn()).isEqualTo(42);
        assertThat(rts.timeoutNs()).isEqualTo(4_000_000);
        assertThat(rts.retryCount()).isEqualTo(3);
        assertThat(rts.rnrRetry()).isEqualTo(5);
        assertThat(rts.maxRdAtomic()).isEqualTo(1);
        assertThat(p.rtsAttributes(42, 16).maxRdAtomic()).isEqualTo(16);
    }
}
