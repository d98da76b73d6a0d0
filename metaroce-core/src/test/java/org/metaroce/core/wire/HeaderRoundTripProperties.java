// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.wire;

import static org.assertj.core.api.Assertions.assertThat;

import org.agrona.concurrent.UnsafeBuffer;

import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.LongRange;

/**
 * Round-trip properties: whatever is written through a flyweight setter is read back unchanged by
 * both the instance getter and the static reader, at any buffer offset, and writes never touch a
 * byte outside the header. jqwik prints the seed of any failing run.
 */
class HeaderRoundTripProperties {
    private static final int SLACK = 16;

    private static UnsafeBuffer sentinelBuffer(final int headerLength) {
        final UnsafeBuffer b = new UnsafeBuffer(new byte[headerLength + 2 * SLACK]);
        b.setMemory(0, b.capacity(), (byte) 0xA5);
        return b;
    }

    private static void assertSentinelsIntact(final UnsafeBuffer b, final int offset, final int headerLength) {
        for (int i = 0; i < b.capacity(); i++) {
            if (i < offset || i >= offset + headerLength) {
                assertThat(b.getByte(i)).as("byte %d outside the header", i).isEqualTo((byte) 0xA5);
            }
        }
    }

    @Property
    void baseHeader(@ForAll @IntRange(min = 0, max = SLACK) final int offset,
                    @ForAll("opcodes") final Opcode opcode,
                    @ForAll @IntRange(min = 0, max = 0xFFFF) final int flags,
                    @ForAll @IntRange(min = 0, max = WireConstants.MAX_QPN) final int dqpn,
                    @ForAll final int psn,
                    @ForAll @IntRange(min = 0, max = 0xFFFF) final int payloadLength,
                    @ForAll @IntRange(min = 0, max = 255) final int pathId,
                    @ForAll final int timestamp,
                    @ForAll @IntRange(min = 0, max = WireConstants.MAX_QPN) final int sqpn) {
        final UnsafeBuffer b = sentinelBuffer(BaseHeader.LENGTH);
        final BaseHeader h = new BaseHeader().wrap(b, offset).initialize(opcode)
            .flags(flags).destQpn(dqpn).psn(psn).payloadLength(payloadLength).pathId(pathId)
            .timestamp(timestamp).sourceQpn(sqpn);
        assertThat(h.version()).isEqualTo(WireConstants.VERSION);
        assertThat(h.opcode()).isEqualTo(opcode.value());
        assertThat(h.headerLengthWords()).isEqualTo(opcode.headerLengthWords());
        assertThat(h.flags()).isEqualTo(flags).isEqualTo(BaseHeader.flags(b, offset));
        assertThat(h.destQpn()).isEqualTo(dqpn).isEqualTo(BaseHeader.destQpn(b, offset));
        assertThat(h.psn()).isEqualTo(psn).isEqualTo(BaseHeader.psn(b, offset));
        assertThat(h.payloadLength()).isEqualTo(payloadLength).isEqualTo(BaseHeader.payloadLength(b, offset));
        assertThat(h.pathId()).isEqualTo(pathId).isEqualTo(BaseHeader.pathId(b, offset));
        assertThat(h.timestamp()).isEqualTo(timestamp).isEqualTo(BaseHeader.timestamp(b, offset));
        assertThat(h.sourceQpn()).isEqualTo(sqpn).isEqualTo(BaseHeader.sourceQpn(b, offset));
        // Reserved bits stay zero [WIRE-002].
        assertThat(b.getByte(offset) & 0x0F).isZero();
        assertThat(b.getByte(offset + 4)).isZero();
        assertThat(b.getByte(offset + 20)).isZero();
        assertSentinelsIntact(b, offset, BaseHeader.LENGTH);
    }

    @Property
    void qpnSettersMaskTo24Bits(@ForAll final int anyQpn) {
        final UnsafeBuffer b = new UnsafeBuffer(new byte[BaseHeader.LENGTH]);
        final BaseHeader h = new BaseHeader().wrap(b, 0).destQpn(anyQpn).sourceQpn(anyQpn);
        assertThat(h.destQpn()).isEqualTo(anyQpn & 0xFF_FFFF);
        assertThat(h.sourceQpn()).isEqualTo(anyQpn & 0xFF_FFFF);
        assertThat(b.getByte(4)).isZero();
        assertThat(b.getByte(20)).isZero();
    }

    @Property
    void messageHeader(@ForAll @IntRange(min = 0, max = SLACK) final int offset, @ForAll final int msn,
                       @ForAll @LongRange(min = 0, max = 0xFFFF_FFFFL) final long messageOffset,
                       @ForAll @LongRange(min = 0, max = 0xFFFF_FFFFL) final long messageLength,
                       @ForAll final int rsn) {
        final UnsafeBuffer b = sentinelBuffer(MessageHeader.LENGTH);
        final MessageHeader h = new MessageHeader().wrap(b, offset)
            .msn(msn).messageOffset(messageOffset).messageLength(messageLength).rsn(rsn);
        assertThat(h.msn()).isEqualTo(msn).isEqualTo(MessageHeader.msn(b, offset));
        assertThat(h.messageOffset()).isEqualTo(messageOffset).isEqualTo(MessageHeader.messageOffset(b, offset));
        assertThat(h.messageLength()).isEqualTo(messageLength).isEqualTo(MessageHeader.messageLength(b, offset));
        assertThat(h.rsn()).isEqualTo(rsn).isEqualTo(MessageHeader.rsn(b, offset));
        assertSentinelsIntact(b, offset, MessageHeader.LENGTH);
    }

    @Property
    void rdmaHeader(@ForAll @IntRange(min = 0, max = SLACK) final int offset, @ForAll final long va,
                    @ForAll final int rkey, @ForAll @LongRange(min = 0, max = 0xFFFF_FFFFL) final long dmaLength) {
        final UnsafeBuffer b = sentinelBuffer(RdmaHeader.LENGTH);
        final RdmaHeader h = new RdmaHeader().wrap(b, offset).virtualAddress(va).rkey(rkey).dmaLength(dmaLength);
        assertThat(h.virtualAddress()).isEqualTo(va).isEqualTo(RdmaHeader.virtualAddress(b, offset));
        assertThat(h.rkey()).isEqualTo(rkey).isEqualTo(RdmaHeader.rkey(b, offset));
        assertThat(h.dmaLength()).isEqualTo(dmaLength).isEqualTo(RdmaHeader.dmaLength(b, offset));
        assertSentinelsIntact(b, offset, RdmaHeader.LENGTH);
    }

    @Property
    void immediateHeader(@ForAll @IntRange(min = 0, max = SLACK) final int offset, @ForAll final int data) {
        final UnsafeBuffer b = sentinelBuffer(ImmediateHeader.LENGTH);
        final ImmediateHeader h = new ImmediateHeader().wrap(b, offset).immediateData(data);
        assertThat(h.immediateData()).isEqualTo(data).isEqualTo(ImmediateHeader.immediateData(b, offset));
        assertSentinelsIntact(b, offset, ImmediateHeader.LENGTH);
    }

    @Property
    void atomicHeader(@ForAll @IntRange(min = 0, max = SLACK) final int offset, @ForAll final long va,
                      @ForAll final int rkey, @ForAll final long swapAdd, @ForAll final long compare) {
        final UnsafeBuffer b = sentinelBuffer(AtomicHeader.LENGTH);
        final AtomicHeader h = new AtomicHeader().wrap(b, offset).virtualAddress(va).rkey(rkey)
            .swapOrAdd(swapAdd).compare(compare);
        assertThat(h.virtualAddress()).isEqualTo(va).isEqualTo(AtomicHeader.virtualAddress(b, offset));
        assertThat(h.rkey()).isEqualTo(rkey).isEqualTo(AtomicHeader.rkey(b, offset));
        assertThat(h.swapOrAdd()).isEqualTo(swapAdd).isEqualTo(AtomicHeader.swapOrAdd(b, offset));
        assertThat(h.compare()).isEqualTo(compare).isEqualTo(AtomicHeader.compare(b, offset));
        assertSentinelsIntact(b, offset, AtomicHeader.LENGTH);
    }

    @Property
    void atomicAckHeader(@ForAll @IntRange(min = 0, max = SLACK) final int offset, @ForAll final long original) {
        final UnsafeBuffer b = sentinelBuffer(AtomicAckHeader.LENGTH);
        final AtomicAckHeader h = new AtomicAckHeader().wrap(b, offset).originalData(original);
        assertThat(h.originalData()).isEqualTo(original).isEqualTo(AtomicAckHeader.originalData(b, offset));
        assertSentinelsIntact(b, offset, AtomicAckHeader.LENGTH);
    }

    @Property
    void ackHeader(@ForAll @IntRange(min = 0, max = SLACK) final int offset, @ForAll final int cumulativePsn,
                   @ForAll final long bitmap, @ForAll final int echoedTs,
                   @ForAll @LongRange(min = 0, max = 0xFFFF_FFFFL) final long ackDelay,
                   @ForAll final int ceCount, @ForAll final int credit,
                   @ForAll @IntRange(min = 0, max = 255) final int pathId,
                   @ForAll @IntRange(min = 0, max = 255) final int ackFlags) {
        final UnsafeBuffer b = sentinelBuffer(AckHeader.LENGTH);
        final AckHeader h = new AckHeader().wrap(b, offset).initialize();
        assertThat(h.credit()).isEqualTo(WireConstants.CREDIT_UNLIMITED);
        h.cumulativePsn(cumulativePsn).sackBitmap(bitmap).echoedTimestamp(echoedTs).ackDelay(ackDelay)
            .ceCount(ceCount).credit(credit).echoedPathId(pathId).ackFlags(ackFlags);
        assertThat(h.cumulativePsn()).isEqualTo(cumulativePsn).isEqualTo(AckHeader.cumulativePsn(b, offset));
        assertThat(h.sackBitmap()).isEqualTo(bitmap).isEqualTo(AckHeader.sackBitmap(b, offset));
        assertThat(h.echoedTimestamp()).isEqualTo(echoedTs).isEqualTo(AckHeader.echoedTimestamp(b, offset));
        assertThat(h.ackDelay()).isEqualTo(ackDelay).isEqualTo(AckHeader.ackDelay(b, offset));
        assertThat(h.ceCount()).isEqualTo(ceCount).isEqualTo(AckHeader.ceCount(b, offset));
        assertThat(h.credit()).isEqualTo(credit).isEqualTo(AckHeader.credit(b, offset));
        assertThat(h.echoedPathId()).isEqualTo(pathId).isEqualTo(AckHeader.echoedPathId(b, offset));
        assertThat(h.ackFlags()).isEqualTo(ackFlags).isEqualTo(AckHeader.ackFlags(b, offset));
        assertThat(b.getShort(offset + 30)).as("reserved").isZero();
        assertSentinelsIntact(b, offset, AckHeader.LENGTH);
    }

    @Property
    void nackHeader(@ForAll @IntRange(min = 0, max = SLACK) final int offset,
                    @ForAll @IntRange(min = 0, max = 255) final int reason,
                    @ForAll @IntRange(min = 0, max = 255) final int rnrTimer, @ForAll final int psn) {
        final UnsafeBuffer b = sentinelBuffer(NackHeader.LENGTH);
        final NackHeader h = new NackHeader().wrap(b, offset).initialize().reason(reason).rnrTimer(rnrTimer).nackPsn(psn);
        assertThat(h.reason()).isEqualTo(reason).isEqualTo(NackHeader.reason(b, offset));
        assertThat(h.rnrTimer()).isEqualTo(rnrTimer).isEqualTo(NackHeader.rnrTimer(b, offset));
        assertThat(h.nackPsn()).isEqualTo(psn).isEqualTo(NackHeader.nackPsn(b, offset));
        assertThat(b.getShort(offset + 2)).as("reserved").isZero();
        assertSentinelsIntact(b, offset, NackHeader.LENGTH);
    }

    @Property
    void connectHeader(@ForAll @IntRange(min = 0, max = SLACK) final int offset, @ForAll final long serviceId,
                       @ForAll final long transactionId, @ForAll final int initialPsn,
                       @ForAll @IntRange(min = 0, max = 0xFFFF) final int mtu,
                       @ForAll @IntRange(min = 0, max = 0xFFFF) final int caps,
                       @ForAll @IntRange(min = 0, max = 255) final int initiatorDepth,
                       @ForAll @IntRange(min = 0, max = 255) final int responderResources,
                       @ForAll @IntRange(min = 0, max = 255) final int pathCount,
                       @ForAll @IntRange(min = 0, max = 255) final int reason,
                       @ForAll final byte[] cookieSeed) {
        final UnsafeBuffer b = sentinelBuffer(ConnectHeader.LENGTH);
        final byte[] cookie = new byte[WireConstants.COOKIE_LENGTH];
        for (int i = 0; i < cookie.length && i < cookieSeed.length; i++) {
            cookie[i] = cookieSeed[i];
        }
        final ConnectHeader h = new ConnectHeader().wrap(b, offset).initialize().serviceId(serviceId)
            .transactionId(transactionId).initialPsn(initialPsn).pathMtu(mtu).capabilities(caps)
            .initiatorDepth(initiatorDepth).responderResources(responderResources).pathCount(pathCount)
            .reason(reason).putCookie(new UnsafeBuffer(cookie), 0);
        assertThat(h.serviceId()).isEqualTo(serviceId).isEqualTo(ConnectHeader.serviceId(b, offset));
        assertThat(h.transactionId()).isEqualTo(transactionId).isEqualTo(ConnectHeader.transactionId(b, offset));
        assertThat(h.initialPsn()).isEqualTo(initialPsn).isEqualTo(ConnectHeader.initialPsn(b, offset));
        assertThat(h.pathMtu()).isEqualTo(mtu).isEqualTo(ConnectHeader.pathMtu(b, offset));
        assertThat(h.capabilities()).isEqualTo(caps).isEqualTo(ConnectHeader.capabilities(b, offset));
        assertThat(h.initiatorDepth()).isEqualTo(initiatorDepth).isEqualTo(ConnectHeader.initiatorDepth(b, offset));
        assertThat(h.responderResources()).isEqualTo(responderResources)
            .isEqualTo(ConnectHeader.responderResources(b, offset));
        assertThat(h.pathCount()).isEqualTo(pathCount).isEqualTo(ConnectHeader.pathCount(b, offset));
        assertThat(h.reason()).isEqualTo(reason).isEqualTo(ConnectHeader.reason(b, offset));
        final UnsafeBuffer out = new UnsafeBuffer(new byte[WireConstants.COOKIE_LENGTH]);
        h.getCookie(out, 0);
        assertThat(out.byteArray()).isEqualTo(cookie);
        assertSentinelsIntact(b, offset, ConnectHeader.LENGTH);
    }

    @net.jqwik.api.Provide
    net.jqwik.api.Arbitrary<Opcode> opcodes() {
        return net.jqwik.api.Arbitraries.of(Opcode.class);
    }
}
