// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.bench.loopback;

import org.agrona.BufferUtil;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;
import org.metaroce.core.engine.ConnectionManagerHandler;
import org.metaroce.core.engine.EndpointCounter;
import org.metaroce.core.engine.TransmitSink;
import org.metaroce.netty.MetaRoceDevice;

/**
 * The raw UDP contender's hook, as the {@code raw_udp_bw}/{@code raw_udp_lat} tools use it: it
 * sits where the connection manager would and, in each poll of the device, copies payload-only
 * datagrams into the driver's sink, sprayed over the device's entropy ports message by message.
 * Everything below is the MetaRoCE device: sockets, epoll with recvmmsg/sendmmsg, pooled chunks,
 * GSO, send-order flushing. No header, no integrity check, no acknowledgement, no retransmission.
 * The receiving device drops the datagrams at their first byte (an invalid version nibble) and
 * counts them as {@link EndpointCounter#MALFORMED}: its cost is the driver's receive path.
 *
 * <p>Owning thread only (the INVOKER thread that drives the device).
 */
final class RawDatagrams implements ConnectionManagerHandler {
    /** Builds the hook for a device. */
    interface Factory {
        RawDatagrams create(MetaRoceDevice device);
    }

    private static final int MAX_PER_POLL = 256;

    private final MetaRoceDevice device;
    private final UnsafeBuffer source;
    private final int[] entropies;
    private final int datagramBytes;
    private final int lastDatagramBytes;
    private final int datagramsPerMessage;
    private int peer = -1;
    private long target;
    private long sent;
    private int datagramInMessage;
    private int path;

    /**
     * @param device the device
     * @param messageBytes message size: a message is sent as datagrams of {@code mtu} bytes
     * @param mtu payload bytes per datagram
     */
    RawDatagrams(final MetaRoceDevice device, final int messageBytes, final int mtu) {
        this.device = device;
        this.entropies = device.entropyPorts();
        this.datagramBytes = Math.min(messageBytes, mtu);
        this.datagramsPerMessage = (messageBytes + mtu - 1) / mtu;
        this.lastDatagramBytes = messageBytes - (datagramsPerMessage - 1) * mtu;
        this.source = new UnsafeBuffer(BufferUtil.allocateDirectAligned(Math.max(64, datagramBytes), 64));
        Payload.fill(source, 0, datagramBytes);
        // Version nibble 0xF: the receiving endpoint drops it as malformed after reading one byte.
        source.putByte(0, (byte) 0xF0);
    }

    int datagramsPerMessage() {
        return datagramsPerMessage;
    }

    /** Where datagrams go: the peer id of the other end's endpoint address. */
    void peer(final int peerId) {
        this.peer = peerId;
    }

    /** Allows {@code datagrams} more datagrams to be sent. */
    void addTarget(final long datagrams) {
        target += datagrams;
    }

    /** @return datagrams allowed but not yet handed to the sink */
    long backlog() {
        return target - sent;
    }

    /** @return raw datagrams this device received */
    long received() {
        return device.endpoint().counters().get(EndpointCounter.MALFORMED);
    }

    @Override
    public void onPacket(final long nowNs, final DirectBuffer buffer, final int offset, final int length,
                         final int peerId) {
        // No connection manager here: nothing else sends control packets.
    }

    @Override
    public int poll(final long nowNs, final TransmitSink sink) {
        if (peer < 0) {
            return 0;
        }
        int emitted = 0;
        final long limit = Math.min(target, sent + MAX_PER_POLL);
        while (sent < limit) {
            final int length = datagramInMessage == datagramsPerMessage - 1 ? lastDatagramBytes : datagramBytes;
            final int offset = sink.claim(length, entropies[path]);
            if (offset == TransmitSink.NO_ROOM) {
                break;
            }
            sink.buffer().putBytes(offset, source, 0, length);
            sink.commit(offset, length, peer, entropies[path]);
            sent++;
            emitted++;
            if (++datagramInMessage == datagramsPerMessage) {
                datagramInMessage = 0;
                if (++path == entropies.length) {
                    path = 0;
                }
            }
        }
        return emitted;
    }

    @Override
    public long nextDeadlineNs() {
        // More to send: poll again at once (the endpoint maps MIN_VALUE to "now").
        return peer >= 0 && sent < target ? Long.MIN_VALUE : Long.MAX_VALUE;
    }
}
