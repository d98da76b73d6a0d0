// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.netty;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.metaroce.netty.linux.Errno;

/** Each errno a UDP send can return maps to one defined outcome of the sink. */
class SendFailuresTest {
    @Test
    void errnosMapToOutcomes() {
        assertThat(SendFailures.of(Errno.EAGAIN)).isEqualTo(SendFailure.WOULD_BLOCK);
        assertThat(SendFailures.of(Errno.ENOBUFS)).isEqualTo(SendFailure.NO_BUFFERS);
        assertThat(SendFailures.of(Errno.ENOMEM)).isEqualTo(SendFailure.NO_BUFFERS);
        assertThat(SendFailures.of(Errno.EMSGSIZE)).isEqualTo(SendFailure.MESSAGE_TOO_LONG);
        assertThat(SendFailures.of(Errno.ECONNREFUSED)).isEqualTo(SendFailure.PEER_UNREACHABLE);
        assertThat(SendFailures.of(Errno.EHOSTUNREACH)).isEqualTo(SendFailure.PEER_UNREACHABLE);
        assertThat(SendFailures.of(Errno.ENETUNREACH)).isEqualTo(SendFailure.PEER_UNREACHABLE);
        assertThat(SendFailures.of(Errno.EPERM)).isEqualTo(SendFailure.NOT_PERMITTED);
        assertThat(SendFailures.of(Errno.EACCES)).isEqualTo(SendFailure.NOT_PERMITTED);
        assertThat(SendFailures.of(Errno.EBADF)).isEqualTo(SendFailure.CLOSED);
        assertThat(SendFailures.of(Errno.EIO)).isEqualTo(SendFailure.IO_ERROR);
        assertThat(SendFailures.of(Errno.EINVAL)).isEqualTo(SendFailure.OTHER);
    }

    @Test
    void aSendToAClosedPortOnAConnectedSocketReportsPeerUnreachableNextTime() throws Exception {
        org.junit.jupiter.api.Assumptions.assumeTrue(org.metaroce.netty.linux.NativeUdp.isAvailable());
        final DriverCounters counters = new DriverCounters(0);
        final NativeUdpTransport transport = new NativeUdpTransport(2048, 8, false, counters);
        final java.net.InetSocketAddress lo = new java.net.InetSocketAddress(java.net.InetAddress.getLoopbackAddress(), 0);
        final int closedPort;
        try (java.net.DatagramSocket probe = new java.net.DatagramSocket(lo)) {
            closedPort = probe.getLocalPort();
        }
        try (PolledUdpSocket s = transport.open(new SocketOptions(lo, 4096, 65536, 0), null)) {
            final java.net.InetSocketAddress peer = new java.net.InetSocketAddress(lo.getAddress(), closedPort);
            assertThat(s.connect(peer)).isTrue();
            final SendChunk chunk = transport.allocateChunk(64);
            final SendBatch batch = new SendBatch();
            batch.add(chunk, 0, 16, 16, false, null);
            assertThat(s.send(batch)).isEqualTo(1);
            batch.takeStop();
            Thread.sleep(50); // the ICMP port unreachable comes back
            assertThat(s.send(batch)).isZero();
            assertThat(batch.takeStop()).isEqualTo(SendFailure.PEER_UNREACHABLE);
            // The failed send read the error queue (IP_RECVERR): the ICMP error is counted by kind.
            assertThat(counters.get(DriverCounter.ICMP_PORT_UNREACHABLE)).isOne();
            chunk.release();
        }
    }
}
