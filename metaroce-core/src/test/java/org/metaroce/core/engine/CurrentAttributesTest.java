// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.engine;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.metaroce.core.verbs.AccessFlags;
import org.metaroce.core.verbs.QpAttributes;
import org.metaroce.core.wire.ConnectHeader;

class CurrentAttributesTest {
    @Test
    void theDefaultsHoldUntilAModifySetsThem() {
        final CurrentAttributes current = new CurrentAttributes(15_000_000_000L);
        assertThat(current.pathMtu()).isEqualTo(1024);
        assertThat(current.remotePeer()).isEqualTo(-1);
        assertThat(current.remoteHost()).isEqualTo(-1);
        assertThat(current.destQpn()).isZero();
        assertThat(current.retryCount()).isEqualTo(7);
        assertThat(current.rnrRetry()).isEqualTo(7);
        assertThat(current.minRnrTimerNs()).isEqualTo(10_000);
        assertThat(current.maxRdAtomic()).isEqualTo(1);
        assertThat(current.retryTimeoutNs()).isEqualTo(15_000_000_000L);
        assertThat(current.paths()).isNull();
    }

    @Test
    void onlyTheOptionalAttributesAModifySetsChange() {
        final CurrentAttributes current = new CurrentAttributes(15_000_000_000L);
        current.applyOptional(new QpAttributes().retryCount(3).maxRdAtomic(4));
        assertThat(current.retryCount()).isEqualTo(3);
        assertThat(current.maxRdAtomic()).isEqualTo(4);
        assertThat(current.rnrRetry()).isEqualTo(7);
        current.applyOptional(new QpAttributes().accessFlags(AccessFlags.REMOTE_WRITE).rnrRetry(2)
            .minRnrTimerNs(20_000).retryTimeoutNs(0));
        assertThat(current.retryCount()).isEqualTo(3);
        assertThat(current.accessFlags()).isEqualTo(AccessFlags.REMOTE_WRITE);
        assertThat(current.rnrRetry()).isEqualTo(2);
        assertThat(current.minRnrTimerNs()).isEqualTo(20_000);
        assertThat(current.retryTimeoutNs()).isZero();
    }

    @Test
    void goBackNSendsOnPathZeroAlone() {
        final QpAttributes attrs = new QpAttributes().pathMtu(4096).destQpn(0x42).remotePeer(3)
            .paths(new int[] {49152, 49153, 49154});
        final CurrentAttributes spraying = new CurrentAttributes(0);
        spraying.applyPeer(attrs, 9, 1);
        assertThat(spraying.pathMtu()).isEqualTo(4096);
        assertThat(spraying.destQpn()).isEqualTo(0x42);
        assertThat(spraying.remotePeer()).isEqualTo(3);
        assertThat(spraying.remoteHost()).isEqualTo(9);
        assertThat(spraying.capabilities()).isZero();
        assertThat(spraying.isGoBackN()).isFalse();
        assertThat(spraying.paths().pathCount()).isEqualTo(3);
        final CurrentAttributes goBackN = new CurrentAttributes(0);
        goBackN.applyPeer(attrs.capabilities(ConnectHeader.CAP_GO_BACK_N), 9, 1);
        assertThat(goBackN.isGoBackN()).isTrue();
        assertThat(goBackN.paths().pathCount()).isEqualTo(1);
        assertThat(goBackN.paths().entropy(0)).isEqualTo(49152);
    }
}
