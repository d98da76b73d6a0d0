// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.verbs;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class WorkCompletionTest {
    @Test
    void setFillsEveryField() {
        final WorkCompletion wc = new WorkCompletion()
            .set(42L, WcStatus.REM_ACCESS_ERR, WcOpcode.RDMA_WRITE, 4096, 0xABCD, WorkCompletion.WC_WITH_IMM, 7, 9);
        assertThat(wc.wrId()).isEqualTo(42L);
        assertThat(wc.status()).isEqualTo(WcStatus.REM_ACCESS_ERR);
        assertThat(wc.opcode()).isEqualTo(WcOpcode.RDMA_WRITE);
        assertThat(wc.byteLen()).isEqualTo(4096);
        assertThat(wc.immData()).isEqualTo(0xABCD);
        assertThat(wc.wcFlags()).isEqualTo(WorkCompletion.WC_WITH_IMM);
        assertThat(wc.hasImm()).isTrue();
        assertThat(wc.qpNum()).isEqualTo(7);
        assertThat(wc.srcQp()).isEqualTo(9);
    }

    @Test
    void copyFromCopiesEveryField() {
        final WorkCompletion source = new WorkCompletion()
            .set(-1L, WcStatus.SUCCESS, WcOpcode.RECV, 10, 11, 1, 12, 13);
        final WorkCompletion copy = new WorkCompletion().copyFrom(source);
        assertThat(copy).usingRecursiveComparison().isEqualTo(source);
    }

    @Test
    void resetClearsEveryField() {
        final WorkCompletion wc = new WorkCompletion()
            .set(1L, WcStatus.SUCCESS, WcOpcode.SEND, 2, 3, 1, 4, 5).reset();
        assertThat(wc.wrId()).isZero();
        assertThat(wc.status()).isNull();
        assertThat(wc.opcode()).isNull();
        assertThat(wc.byteLen()).isZero();
        assertThat(wc.immData()).isZero();
        assertThat(wc.wcFlags()).isZero();
        assertThat(wc.hasImm()).isFalse();
        assertThat(wc.qpNum()).isZero();
        assertThat(wc.srcQp()).isZero();
    }

    @Test
    void toStringShowsImmOnlyWhenPresentAndByteLenUnsigned() {
        final WorkCompletion wc = new WorkCompletion()
            .set(5L, WcStatus.SUCCESS, WcOpcode.RECV_RDMA_WITH_IMM, Integer.MIN_VALUE, 0xBEEF, 1, 2, 3);
        assertThat(wc.toString()).contains("wrId=5").contains("RECV_RDMA_WITH_IMM")
            .contains("byteLen=2147483648").contains("immData=0xbeef");
        assertThat(wc.set(5L, WcStatus.SUCCESS, WcOpcode.SEND, 1, 0xBEEF, 0, 2, 3).toString())
            .doesNotContain("immData");
    }
}
