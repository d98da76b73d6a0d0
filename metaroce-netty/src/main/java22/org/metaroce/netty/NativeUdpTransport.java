// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.netty;

import java.io.IOException;

/**
 * The native Linux transport ({@link Transport#NATIVE}): sockets of {@code org.metaroce.netty.linux}
 * behind the seam, every one read by the owning thread ({@link NativeUdpSocket}), and chunks of
 * plain direct memory reused as soon as they are released ({@code sendmmsg} has copied the
 * datagrams when it returns). Built through {@link NativeTransportLoader}.
 *
 * <p>Owning thread only.
 */
final class NativeUdpTransport implements UdpTransport {
    private final int receiveSlots;
    private final int slotBytes;
    private final boolean gro;
    private final DriverCounters counters;
    private final DirectSendChunks chunks = new DirectSendChunks();

    /**
     * @param maxDatagramBytes largest datagram a receive slot holds whole (without GRO)
     * @param receiveSlots datagrams one {@code recvmmsg} reads at most
     * @param gro whether receiving sockets turn UDP GRO on (their slots then hold 64 KiB)
     * @param counters the device's counters, where the sockets count what their error queues held
     */
    NativeUdpTransport(final int maxDatagramBytes, final int receiveSlots, final boolean gro,
                       final DriverCounters counters) {
        this.receiveSlots = receiveSlots;
        this.slotBytes = gro ? Math.max(maxDatagramBytes, DeviceConfig.GRO_SLOT_BYTES) : maxDatagramBytes;
        this.gro = gro;
        this.counters = counters;
    }

    @Override
    public PolledUdpSocket open(final SocketOptions options, final DatagramReceiver receiver) throws IOException {
        return new NativeUdpSocket(options, receiver, receiveSlots, slotBytes, gro, counters);
    }

    @Override
    public SendChunk allocateChunk(final int capacity) {
        return chunks.allocate(capacity);
    }

    @Override
    public String name() {
        return "native";
    }
}
