// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.verbs;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class ResultCodesTest {
    @Test
    void memoryAccessResultsHaveDistinctNames() {
        assertThat(MemoryAccessResult.OK).isZero();
        assertThat(MemoryAccessResult.describe(MemoryAccessResult.OK)).isEqualTo("OK");
        assertThat(MemoryAccessResult.describe(MemoryAccessResult.INVALID_KEY)).isEqualTo("INVALID_KEY");
        assertThat(MemoryAccessResult.describe(MemoryAccessResult.OUT_OF_BOUNDS)).isEqualTo("OUT_OF_BOUNDS");
        assertThat(MemoryAccessResult.describe(MemoryAccessResult.NO_PERMISSION)).isEqualTo("NO_PERMISSION");
        assertThat(MemoryAccessResult.describe(MemoryAccessResult.MISALIGNED)).isEqualTo("MISALIGNED");
        assertThat(MemoryAccessResult.describe(99)).isEqualTo("UNKNOWN(99)");
    }

    @Test
    void postStatusesHaveDistinctNamesAndOkIsZero() {
        assertThat(PostStatus.OK).isZero();
        final int[] codes = {
            PostStatus.OK, PostStatus.QUEUE_FULL, PostStatus.INVALID_QP_STATE, PostStatus.INVALID_LKEY,
            PostStatus.LOCAL_LENGTH_ERROR, PostStatus.TOO_MANY_SGE, PostStatus.INVALID_OPCODE_FOR_QP,
            PostStatus.INVALID_ARGUMENT, PostStatus.LOCAL_PROTECTION, PostStatus.INLINE_TOO_LARGE,
        };
        final String[] names = {
            "OK", "QUEUE_FULL", "INVALID_QP_STATE", "INVALID_LKEY", "LOCAL_LENGTH_ERROR", "TOO_MANY_SGE",
            "INVALID_OPCODE_FOR_QP", "INVALID_ARGUMENT", "LOCAL_PROTECTION", "INLINE_TOO_LARGE",
        };
        assertThat(codes).doesNotHaveDuplicates();
        for (int i = 0; i < codes.length; i++) {
            assertThat(PostStatus.describe(codes[i])).isEqualTo(names[i]);
        }
        assertThat(PostStatus.describe(-1)).isEqualTo("UNKNOWN(-1)");
    }

    @Test
    void wcStatusHasTheLibibverbsNamesInOrder() {
        // [GEN-007] libibverbs names without the IBV_ prefix.
        assertThat(WcStatus.values()).extracting(Enum::name).containsExactly(
            "SUCCESS", "LOC_LEN_ERR", "LOC_QP_OP_ERR", "LOC_PROT_ERR", "WR_FLUSH_ERR", "REM_INV_REQ_ERR",
            "REM_ACCESS_ERR", "REM_OP_ERR", "RETRY_EXC_ERR", "RNR_RETRY_EXC_ERR", "FATAL_ERR", "BAD_RESP_ERR");
        for (final WcStatus status : WcStatus.values()) {
            assertThat(WcStatus.fromOrdinal(status.ordinal())).isSameAs(status);
            assertThat(status.isError()).isEqualTo(status != WcStatus.SUCCESS);
        }
    }

    @Test
    void wcOpcodeHasTheLibibverbsNames() {
        assertThat(WcOpcode.values()).extracting(Enum::name).containsExactly(
            "SEND", "RDMA_WRITE", "RDMA_READ", "COMP_SWAP", "FETCH_ADD", "RECV", "RECV_RDMA_WITH_IMM");
        for (final WcOpcode opcode : WcOpcode.values()) {
            assertThat(WcOpcode.fromOrdinal(opcode.ordinal())).isSameAs(opcode);
            assertThat(opcode.isReceive()).isEqualTo(opcode.name().startsWith("RECV"));
        }
    }

    @Test
    void qpStateHasTheLibibverbsNames() {
        // [GEN-007] libibverbs names without the IBV_ prefix.
        assertThat(QpState.values()).extracting(Enum::name)
            .containsExactly("RESET", "INIT", "RTR", "RTS", "SQD", "SQE", "ERR");
        for (final QpState state : QpState.values()) {
            assertThat(QpState.fromOrdinal(state.ordinal())).isSameAs(state);
        }
    }
}
