// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.verbs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class WorkRequestTest {
    @Test
    void scatterGatherEntryIsFluentAndResettable() {
        final ScatterGatherEntry sge = new ScatterGatherEntry().addr(0x1000).length(64).lkey(0xAB);
        assertThat(sge.addr()).isEqualTo(0x1000);
        assertThat(sge.length()).isEqualTo(64);
        assertThat(sge.lkey()).isEqualTo(0xAB);
        assertThat(sge.toString()).isEqualTo("{addr=0x1000, length=64, lkey=0xab}");
        final ScatterGatherEntry copy = new ScatterGatherEntry().copyFrom(sge);
        assertThat(copy).usingRecursiveComparison().isEqualTo(sge);
        sge.clear();
        assertThat(sge.addr()).isZero();
        assertThat(sge.length()).isZero();
        assertThat(sge.lkey()).isZero();
        assertThat(sge.set(1, 2, 3).lkey()).isEqualTo(3);
    }

    @Test
    void sendRequestFluentSettersAndGetters() {
        final SendRequest wr = new SendRequest(2)
            .wrId(99)
            .opcode(WrOpcode.ATOMIC_CMP_SWAP)
            .sendFlags(SendFlags.SIGNALED | SendFlags.FENCE)
            .immData(5)
            .remoteAddr(0x2000)
            .rkey(0x1234)
            .compareAdd(7)
            .swap(8)
            .addSge(0x3000, 8, 0x55);
        assertThat(wr.wrId()).isEqualTo(99);
        assertThat(wr.opcode()).isEqualTo(WrOpcode.ATOMIC_CMP_SWAP);
        assertThat(wr.sendFlags()).isEqualTo(3);
        assertThat(wr.isSignaled()).isTrue();
        assertThat(wr.immData()).isEqualTo(5);
        assertThat(wr.remoteAddr()).isEqualTo(0x2000);
        assertThat(wr.rkey()).isEqualTo(0x1234);
        assertThat(wr.compareAdd()).isEqualTo(7);
        assertThat(wr.swap()).isEqualTo(8);
        assertThat(wr.numSge()).isEqualTo(1);
        assertThat(wr.maxSge()).isEqualTo(2);
        assertThat(wr.sge(0).lkey()).isEqualTo(0x55);
        assertThat(wr.totalLength()).isEqualTo(8);
        assertThat(wr.toString()).contains("ATOMIC_CMP_SWAP").contains("SIGNALED|FENCE").contains("compareAdd=7")
            .contains("rkey=0x1234").contains("lkey=0x55");
    }

    @Test
    void sendRequestToStringFitsTheOpcode() {
        assertThat(new SendRequest(1).opcode(WrOpcode.SEND_WITH_IMM).immData(0xAB).toString())
            .contains("immData=0xab").doesNotContain("rkey").doesNotContain("compareAdd");
        assertThat(new SendRequest(1).toString()).contains("opcode=null").contains("sg=[]");
    }

    @Test
    void sendRequestClearResetsEverything() {
        final SendRequest wr = new SendRequest(2).wrId(1).opcode(WrOpcode.SEND).sendFlags(1).immData(2)
            .remoteAddr(3).rkey(4).compareAdd(5).swap(6).addSge(7, 8, 9).addSge(10, 11, 12);
        wr.clear();
        assertThat(wr.wrId()).isZero();
        assertThat(wr.opcode()).isNull();
        assertThat(wr.sendFlags()).isZero();
        assertThat(wr.isSignaled()).isFalse();
        assertThat(wr.immData()).isZero();
        assertThat(wr.remoteAddr()).isZero();
        assertThat(wr.rkey()).isZero();
        assertThat(wr.compareAdd()).isZero();
        assertThat(wr.swap()).isZero();
        assertThat(wr.numSge()).isZero();
        assertThat(wr.sge(1).addr()).isZero();
    }

    @Test
    void addSgeBeyondCapacityIsRejected() {
        final SendRequest wr = new SendRequest(1).addSge(1, 1, 1);
        assertThatThrownBy(() -> wr.addSge(2, 2, 2))
            .isInstanceOf(IllegalStateException.class)
            .hasMessageContaining("already holds its 1 preallocated scatter/gather entries");
        final RecvRequest recv = new RecvRequest(0);
        assertThatThrownBy(() -> recv.addSge(2, 2, 2)).isInstanceOf(IllegalStateException.class);
    }

    @Test
    void numSgeCanBeSetAfterFillingInPlace() {
        final SendRequest wr = new SendRequest(3);
        wr.sge(0).set(1, 10, 5);
        wr.sge(1).set(2, 20, 5);
        assertThat(wr.numSge(2).numSge()).isEqualTo(2);
        assertThat(wr.totalLength()).isEqualTo(30);
        assertThatThrownBy(() -> wr.numSge(4))
            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("numSge must be in 0..3, was 4");
        assertThatThrownBy(() -> wr.numSge(-1)).isInstanceOf(IllegalArgumentException.class);
        final RecvRequest recv = new RecvRequest(2);
        recv.sge(0).set(1, 10, 5);
        assertThat(recv.numSge(1).totalLength()).isEqualTo(10);
        assertThatThrownBy(() -> recv.numSge(3)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void constructorsValidateMaxSge() {
        assertThatThrownBy(() -> new SendRequest(-1))
            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("maxSge must be in 0..64, was -1");
        assertThatThrownBy(() -> new RecvRequest(65)).isInstanceOf(IllegalArgumentException.class);
        assertThat(new SendRequest(0).maxSge()).isZero();
        assertThat(new RecvRequest(64).maxSge()).isEqualTo(64);
    }

    @Test
    void copyFromCopiesAndClearsLeftovers() {
        final SendRequest source = new SendRequest(2).wrId(1).opcode(WrOpcode.RDMA_WRITE).sendFlags(8).immData(2)
            .remoteAddr(3).rkey(4).compareAdd(5).swap(6).addSge(7, 8, 9);
        final SendRequest target = new SendRequest(3).addSge(100, 100, 100).addSge(200, 200, 200);
        target.copyFrom(source);
        assertThat(target.numSge()).isEqualTo(1);
        assertThat(target.sge(0).addr()).isEqualTo(7);
        assertThat(target.sge(1).addr()).isZero();
        assertThat(target.wrId()).isEqualTo(1);
        assertThat(target.opcode()).isEqualTo(WrOpcode.RDMA_WRITE);
        assertThat(target.sendFlags()).isEqualTo(8);
        assertThat(target.immData()).isEqualTo(2);
        assertThat(target.remoteAddr()).isEqualTo(3);
        assertThat(target.rkey()).isEqualTo(4);
        assertThat(target.compareAdd()).isEqualTo(5);
        assertThat(target.swap()).isEqualTo(6);
        assertThatThrownBy(() -> new SendRequest(0).copyFrom(source))
            .isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining("cannot copy 1 scatter/gather entries into a request with room for 0");
    }

    @Test
    void recvRequestLifecycle() {
        final RecvRequest wr = new RecvRequest(2).wrId(5).addSge(0x10, 100, 1).addSge(0x20, 50, 1);
        assertThat(wr.wrId()).isEqualTo(5);
        assertThat(wr.numSge()).isEqualTo(2);
        assertThat(wr.maxSge()).isEqualTo(2);
        assertThat(wr.totalLength()).isEqualTo(150);
        assertThat(wr.sge(1).addr()).isEqualTo(0x20);
        assertThat(wr.toString()).isEqualTo(
            "RecvRequest{wrId=5, sg=[{addr=0x10, length=100, lkey=0x1}, {addr=0x20, length=50, lkey=0x1}]}");
        final RecvRequest copy = new RecvRequest(2).copyFrom(wr);
        assertThat(copy.wrId()).isEqualTo(5);
        assertThat(copy.totalLength()).isEqualTo(150);
        assertThatThrownBy(() -> new RecvRequest(1).copyFrom(wr)).isInstanceOf(IllegalArgumentException.class);
        wr.clear();
        assertThat(wr.wrId()).isZero();
        assertThat(wr.numSge()).isZero();
        assertThat(wr.sge(0).length()).isZero();
    }

    @Test
    void refillingDoesNotAllocate() {
        final SendRequest wr = new SendRequest(4);
        final SendRequest slot = new SendRequest(4);
        final RecvRequest recv = new RecvRequest(4);
        final long bytes = Allocations.allocatedBy(100_000, () -> {
            wr.clear().wrId(1).opcode(WrOpcode.RDMA_WRITE).remoteAddr(2).rkey(3).addSge(4, 5, 6).addSge(7, 8, 9);
            slot.copyFrom(wr);
            recv.clear().wrId(2).addSge(1, 2, 3);
        });
        assertThat(bytes).as("bytes allocated by 100k refills").isLessThan(1024);
    }

    @Test
    void sendFlagsRender() {
        assertThat(new int[] {SendFlags.SIGNALED, SendFlags.FENCE, SendFlags.SOLICITED, SendFlags.INLINE})
            .containsExactly(1, 2, 4, 8);
        assertThat(SendFlags.toString(0)).isEqualTo("NONE");
        assertThat(SendFlags.toString(SendFlags.ALL)).isEqualTo("SIGNALED|FENCE|SOLICITED|INLINE");
        assertThat(SendFlags.toString(SendFlags.INLINE | 0x20)).isEqualTo("INLINE|0x20");
        assertThat(SendFlags.toString(0x40)).isEqualTo("0x40");
    }

    @Test
    void wrOpcodeProperties() {
        assertThat(WrOpcode.values()).extracting(Enum::name).containsExactly("SEND", "SEND_WITH_IMM", "RDMA_WRITE",
            "RDMA_WRITE_WITH_IMM", "RDMA_READ", "ATOMIC_CMP_SWAP", "ATOMIC_FETCH_ADD");
        assertThat(WrOpcode.values()).extracting(WrOpcode::wcOpcode).containsExactly(WcOpcode.SEND, WcOpcode.SEND,
            WcOpcode.RDMA_WRITE, WcOpcode.RDMA_WRITE, WcOpcode.RDMA_READ, WcOpcode.COMP_SWAP, WcOpcode.FETCH_ADD);
        assertThat(WrOpcode.values()).filteredOn(WrOpcode::hasImm)
            .containsExactly(WrOpcode.SEND_WITH_IMM, WrOpcode.RDMA_WRITE_WITH_IMM);
        assertThat(WrOpcode.values()).filteredOn(WrOpcode::isAtomic)
            .containsExactly(WrOpcode.ATOMIC_CMP_SWAP, WrOpcode.ATOMIC_FETCH_ADD);
        assertThat(WrOpcode.values()).filteredOn(WrOpcode::writesLocalMemory)
            .containsExactly(WrOpcode.RDMA_READ, WrOpcode.ATOMIC_CMP_SWAP, WrOpcode.ATOMIC_FETCH_ADD);
        assertThat(WrOpcode.values()).filteredOn(WrOpcode::usesRemoteAddress).containsExactly(WrOpcode.RDMA_WRITE,
            WrOpcode.RDMA_WRITE_WITH_IMM, WrOpcode.RDMA_READ, WrOpcode.ATOMIC_CMP_SWAP, WrOpcode.ATOMIC_FETCH_ADD);
        assertThat(WrOpcode.values()).filteredOn(WrOpcode::consumesRemoteReceive)
            .containsExactly(WrOpcode.SEND, WrOpcode.SEND_WITH_IMM, WrOpcode.RDMA_WRITE_WITH_IMM);
        for (final WrOpcode opcode : WrOpcode.values()) {
            assertThat(WrOpcode.fromOrdinal(opcode.ordinal())).isSameAs(opcode);
        }
    }
}
