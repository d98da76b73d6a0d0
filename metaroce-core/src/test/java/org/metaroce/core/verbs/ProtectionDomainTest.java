// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.verbs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.ByteBuffer;

import org.agrona.BufferUtil;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;
import org.metaroce.core.SeededRandomSource;

class ProtectionDomainTest {
    private final MemoryKeySpace keys = new MemoryKeySpace(new SeededRandomSource(21));
    private final ProtectionDomain pd = new ProtectionDomain(7, keys);

    @Test
    void exposesHandleAndKeySpace() {
        assertThat(pd.handle()).isEqualTo(7);
        assertThat(pd.keySpace()).isSameAs(keys);
        assertThat(pd.toString()).contains("handle=7");
        assertThatThrownBy(() -> new ProtectionDomain(1, null)).isInstanceOf(NullPointerException.class);
    }

    @Test
    void registersTheRemainingBytesOfADirectByteBuffer() {
        final ByteBuffer buffer = ByteBuffer.allocateDirect(128);
        buffer.position(16).limit(80);
        final MemoryRegion region = pd.registerMemory(buffer, AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_READ);
        assertThat(region.address()).isEqualTo(BufferUtil.address(buffer) + 16);
        assertThat(region.length()).isEqualTo(64);
        assertThat(region.pd()).isSameAs(pd);
        assertThat(region.access()).isEqualTo(AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_READ);
        assertThat(buffer.position()).isEqualTo(16);
        assertThat(buffer.limit()).isEqualTo(80);
        assertThat(pd.regionCount()).isEqualTo(1);
        region.buffer().putByte(0, (byte)42);
        assertThat(buffer.get(16)).isEqualTo((byte)42);
    }

    @Test
    void rejectsHeapByteBuffers() {
        assertThatThrownBy(() -> pd.registerMemory(ByteBuffer.allocate(64), 0))
            .isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining("registered memory must be off-heap");
        assertThat(pd.regionCount()).isZero();
    }

    @Test
    void rejectsEmptyBuffers() {
        final ByteBuffer empty = ByteBuffer.allocateDirect(16);
        empty.position(16);
        assertThatThrownBy(() -> pd.registerMemory(empty, 0))
            .isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining("at least 1 byte");
        assertThatThrownBy(() -> pd.registerMemory(new UnsafeBuffer(ByteBuffer.allocateDirect(16), 0, 0), 0))
            .isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining("at least 1 byte");
    }

    @Test
    void rejectsWriteAccessToReadOnlyBuffers() {
        final ByteBuffer readOnly = ByteBuffer.allocateDirect(32).asReadOnlyBuffer();
        assertThatThrownBy(() -> pd.registerMemory(readOnly, AccessFlags.LOCAL_WRITE))
            .isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining("read-only");
        final MemoryRegion region = pd.registerMemory(readOnly, AccessFlags.REMOTE_READ);
        assertThat(region.length()).isEqualTo(32);
    }

    @Test
    void rejectsInvalidAccessFlags() {
        assertThatThrownBy(() -> pd.registerMemory(ByteBuffer.allocateDirect(8), AccessFlags.REMOTE_WRITE))
            .isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining("requires LOCAL_WRITE");
        assertThatThrownBy(() -> pd.registerMemory(new UnsafeBuffer(ByteBuffer.allocateDirect(8)), 0x10))
            .isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining("unknown access flag bits");
        assertThat(pd.regionCount()).isZero();
    }

    @Test
    void rejectsNullBuffers() {
        assertThatThrownBy(() -> pd.registerMemory((ByteBuffer)null, 0)).isInstanceOf(NullPointerException.class);
        assertThatThrownBy(() -> pd.registerMemory((UnsafeBuffer)null, 0)).isInstanceOf(NullPointerException.class);
        assertThatThrownBy(() -> pd.deregister(null)).isInstanceOf(NullPointerException.class);
    }

    @Test
    void registersUnsafeBufferOverDirectByteBuffer() {
        final ByteBuffer direct = ByteBuffer.allocateDirect(100);
        final UnsafeBuffer buffer = new UnsafeBuffer(direct, 10, 50);
        final MemoryRegion region = pd.registerMemory(buffer, AccessFlags.LOCAL_WRITE);
        assertThat(region.address()).isEqualTo(BufferUtil.address(direct) + 10);
        assertThat(region.length()).isEqualTo(50);
        // The region owns its buffer: rewrapping the caller's buffer does not move it.
        buffer.wrap(ByteBuffer.allocateDirect(8));
        assertThat(region.buffer().addressOffset()).isEqualTo(BufferUtil.address(direct) + 10);
        assertThat(region.buffer().capacity()).isEqualTo(50);
    }

    @Test
    void registersUnsafeBufferOverRawAddress() {
        final ByteBuffer backing = ByteBuffer.allocateDirect(64);
        final UnsafeBuffer raw = new UnsafeBuffer(BufferUtil.address(backing), 64);
        assertThat(raw.byteArray()).isNull();
        assertThat(raw.byteBuffer()).isNull();
        final MemoryRegion region = pd.registerMemory(raw, 0);
        assertThat(region.address()).isEqualTo(BufferUtil.address(backing));
        assertThat(region.length()).isEqualTo(64);
    }

    @Test
    void rejectsHeapUnsafeBuffers() {
        assertThatThrownBy(() -> pd.registerMemory(new UnsafeBuffer(new byte[64]), 0))
            .isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining("registered memory must be off-heap");
        assertThatThrownBy(() -> pd.registerMemory(new UnsafeBuffer(ByteBuffer.allocate(64)), 0))
            .isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining("registered memory must be off-heap");
    }

    @Test
    void rejectsUnsafeBufferWithNullAddress() {
        assertThatThrownBy(() -> pd.registerMemory(new UnsafeBuffer(0L, 16), 0))
            .isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining("address 0");
    }

    @Test
    void deregisterInvalidatesAndReleasesKeys() {
        final MemoryRegion region = pd.registerMemory(ByteBuffer.allocateDirect(8), 0);
        pd.deregister(region);
        assertThat(region.isValid()).isFalse();
        assertThat(pd.regionCount()).isZero();
        assertThat(keys.lookupRkey(region.rkey())).isNull();
        assertThat(keys.isQuarantined(region.rkey())).isTrue();
    }

    @Test
    void deregisterTwiceIsRejected() {
        final MemoryRegion region = pd.registerMemory(ByteBuffer.allocateDirect(8), 0);
        pd.deregister(region);
        assertThatThrownBy(() -> pd.deregister(region))
            .isInstanceOf(IllegalStateException.class)
            .hasMessageContaining("already deregistered");
        assertThat(pd.regionCount()).isZero();
    }

    @Test
    void deregisterThroughAnotherDomainIsRejected() {
        final ProtectionDomain other = new ProtectionDomain(8, keys);
        final MemoryRegion region = pd.registerMemory(ByteBuffer.allocateDirect(8), 0);
        assertThatThrownBy(() -> other.deregister(region))
            .isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining("belongs to protection domain 7, not 8");
        assertThat(region.isValid()).isTrue();
    }

    @Test
    void domainLookupsHideOtherDomainsKeys() {
        // [MEM-001] a domain's key lookups (which the engine uses) find only its own regions.
        final ProtectionDomain other = new ProtectionDomain(8, keys);
        final MemoryRegion mine = pd.registerMemory(ByteBuffer.allocateDirect(8), 0);
        final MemoryRegion theirs = other.registerMemory(ByteBuffer.allocateDirect(8), 0);
        assertThat(pd.lookupRkey(mine.rkey())).isSameAs(mine);
        assertThat(pd.lookupLkey(mine.lkey())).isSameAs(mine);
        assertThat(pd.lookupRkey(theirs.rkey())).isNull();
        assertThat(pd.lookupLkey(theirs.lkey())).isNull();
        assertThat(pd.lookupRkey(12345)).isNull();
        assertThat(keys.lookupRkey(theirs.rkey())).isSameAs(theirs);
    }

    @Test
    void closeFailsWhileRegionsAreRegisteredAndNamesHowMany() {
        // [MEM-002] busy while regions belong to it (QPs: QueuePairLifecycleTest).
        final MemoryRegion a = pd.registerMemory(ByteBuffer.allocateDirect(8), 0);
        final MemoryRegion b = pd.registerMemory(ByteBuffer.allocateDirect(8), 0);
        assertThatThrownBy(pd::close)
            .isInstanceOf(IllegalStateException.class)
            .hasMessageContaining("still has 2 registered memory region(s)");
        assertThat(pd.isClosed()).isFalse();
        pd.deregister(a);
        pd.deregister(b);
        pd.close();
        assertThat(pd.isClosed()).isTrue();
        pd.close();
    }

    @Test
    void registerAfterCloseIsRejected() {
        pd.close();
        assertThatThrownBy(() -> pd.registerMemory(ByteBuffer.allocateDirect(8), 0))
            .isInstanceOf(IllegalStateException.class)
            .hasMessageContaining("protection domain 7 is closed");
        assertThatThrownBy(() -> pd.registerMemory(new UnsafeBuffer(ByteBuffer.allocateDirect(8)), 0))
            .isInstanceOf(IllegalStateException.class);
    }
}
