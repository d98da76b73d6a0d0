// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.engine;

import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.MutableDirectBuffer;
import org.metaroce.core.wire.BaseHeader;
import org.metaroce.core.wire.MessageHeader;
import org.metaroce.core.wire.Opcode;

/**
 * A sink and {@link ResponseOut} for the responder's parts on their own: packets are written with
 * the real {@link PacketWriter} into one buffer and their offsets kept, so that a test reads back
 * what was sent. {@link #room} limits how many more packets the sink takes; without a limit the
 * buffer is reused from the start when full, so that a long run allocates nothing.
 */
final class ResponseCapture implements TransmitSink, ResponseOut {
    static final int DEST_QPN = 0x42;
    static final int SOURCE_QPN = 0x17;

    final UnsafeBuffer buffer = new UnsafeBuffer(new byte[1 << 16]);
    private final PacketWriter writer = new PacketWriter();
    /** Packets the sink still takes. */
    int room = Integer.MAX_VALUE;
    /** Claims made through {@link ResponseOut#claim}, including refused ones. */
    int claims;
    private final int[] offsets = new int[256];
    private int sent;
    private int position;

    // ------------------------------------------------------------------ TransmitSink

    @Override
    public MutableDirectBuffer buffer() {
        return buffer;
    }

    @Override
    public int claim(final int maxLength) {
        if (room == 0) {
            return NO_ROOM;
        }
        if (position + maxLength > buffer.capacity()) {
            position = 0;
        }
        return position;
    }

    @Override
    public void commit(final int offset, final int length, final int peerId, final int entropy) {
        offsets[sent++ % offsets.length] = offset;
        position = offset + length;
        room--;
    }

    // ------------------------------------------------------------------ ResponseOut

    @Override
    public int claim(final TransmitSink sink, final long nowNs, final int maxLength) {
        claims++;
        return sink.claim(maxLength);
    }

    @Override
    public int claimAck(final TransmitSink sink, final long nowNs, final int maxLength) {
        return claim(sink, nowNs, maxLength);
    }

    @Override
    public PacketWriter header(final MutableDirectBuffer b, final int offset, final Opcode opcode, final int flags,
                               final int psn, final int payloadLength, final long nowNs) {
        writer.header(b, offset, opcode, flags, DEST_QPN, psn, payloadLength, 0, nowNs, SOURCE_QPN);
        return writer;
    }

    @Override
    public void commit(final TransmitSink sink, final int offset, final Opcode opcode, final int payloadLength) {
        sink.commit(offset, writer.seal(sink.buffer(), offset, opcode, payloadLength), 0, 0);
    }

    // ------------------------------------------------------------------ reading back

    /** @return packets committed so far */
    int sent() {
        return sent;
    }

    /** @return the offset of the {@code i}-th packet committed (0 the first), while it is still kept */
    int offset(final int i) {
        return offsets[i % offsets.length];
    }

    int opcode(final int i) {
        return BaseHeader.opcode(buffer, offset(i));
    }

    int psn(final int i) {
        return BaseHeader.psn(buffer, offset(i));
    }

    int flags(final int i) {
        return BaseHeader.flags(buffer, offset(i));
    }

    int payloadLength(final int i) {
        return BaseHeader.payloadLength(buffer, offset(i));
    }

    int msn(final int i, final Opcode opcode) {
        return MessageHeader.msn(buffer, offset(i) + opcode.msgOffset());
    }

    long messageOffset(final int i, final Opcode opcode) {
        return MessageHeader.messageOffset(buffer, offset(i) + opcode.msgOffset());
    }

    long messageLength(final int i, final Opcode opcode) {
        return MessageHeader.messageLength(buffer, offset(i) + opcode.msgOffset());
    }
}
