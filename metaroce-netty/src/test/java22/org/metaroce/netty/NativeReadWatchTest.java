// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.netty;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.DatagramChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import org.agrona.DirectBuffer;
import org.junit.jupiter.api.Test;
import org.metaroce.netty.linux.NativeUdp;

/**
 * A native endpoint socket is in its epoll set only while its owner waits: not before the first
 * {@link NativeUdpSocket#awaitReadable}, from then on, and no longer after
 * {@link NativeUdpSocket#UNWATCH_AFTER_READS} reads without a wait (each datagram queued to a
 * socket in an epoll set costs the sender's system call the epoll callback). The kernel's own view
 * is checked: {@code /proc/self/fdinfo} of every epoll descriptor of the process lists the
 * descriptors it watches ({@code tfd:}). A wait still ends for a datagram that arrived before the
 * socket joined the set.
 */
class NativeReadWatchTest {
    private static final long WAIT_NS = TimeUnit.SECONDS.toNanos(5);

    @Test
    void theSocketJoinsItsEpollSetAtTheFirstWaitAndLeavesItWhileTheOwnerSpins() throws Exception {
        assumeTrue(NativeUdp.isAvailable(), () -> "native transport unavailable: " + NativeUdp.unavailabilityReason());
        final InetAddress lo = InetAddress.getLoopbackAddress();
        final Counting receiver = new Counting();
        final NativeUdpSocket socket = new NativeUdpSocket(new SocketOptions(new InetSocketAddress(lo, 0), 1 << 16,
            1 << 16, 0), receiver, 8, 2048, false, new DriverCounters(1));
        try (socket; DatagramChannel peer = DatagramChannel.open().bind(new InetSocketAddress(lo, 0))) {
            final int fd = socket.linuxSocket().fd();
            assertThat(watchedByAnEpoll(fd)).as("watched before any wait").isFalse();
            assertThat(socket.watchingReads()).isFalse();

            // A datagram that came before the socket joined the set ends the first wait at once.
            peer.send(ByteBuffer.wrap(new byte[] {1, 2, 3}), socket.localAddress());
            final long started = System.nanoTime();
            socket.awaitReadable(WAIT_NS);
            assertThat(System.nanoTime() - started).as("wait for a datagram already queued")
                .isLessThan(WAIT_NS / 2);
            assertThat(watchedByAnEpoll(fd)).as("watched after a wait").isTrue();
            assertThat(socket.receive(8)).isEqualTo(1);

            // Reads without a wait: the socket stays in the set up to the limit, then leaves it.
            for (int i = 1; i < NativeUdpSocket.UNWATCH_AFTER_READS - 1; i++) {
                assertThat(socket.receive(8)).isZero();
            }
            assertThat(watchedByAnEpoll(fd)).as("watched before the limit").isTrue();
            assertThat(socket.receive(8)).isZero();
            assertThat(socket.watchingReads()).isFalse();
            assertThat(watchedByAnEpoll(fd)).as("watched after " + NativeUdpSocket.UNWATCH_AFTER_READS
                + " reads without a wait").isFalse();

            // Back in the set at the next wait, which again sees what arrived meanwhile.
            peer.send(ByteBuffer.wrap(new byte[] {4}), socket.localAddress());
            final long again = System.nanoTime();
            socket.awaitReadable(WAIT_NS);
            assertThat(System.nanoTime() - again).isLessThan(WAIT_NS / 2);
            assertThat(watchedByAnEpoll(fd)).isTrue();
            assertThat(socket.receive(8)).isEqualTo(1);
            assertThat(receiver.datagrams).isEqualTo(2);
        }
    }

    /** @return whether any epoll instance of this process watches descriptor {@code fd} */
    private static boolean watchedByAnEpoll(final int fd) throws IOException {
        try (Stream<Path> fds = Files.list(Path.of("/proc/self/fd"))) {
            return fds.anyMatch(link -> {
                try {
                    if (!Files.readSymbolicLink(link).toString().contains("eventpoll")) {
                        return false;
                    }
                    final Path info = Path.of("/proc/self/fdinfo", link.getFileName().toString());
                    return Files.readAllLines(info).stream()
                        .anyMatch(line -> line.trim().matches("tfd:\\s+" + fd + "\\s.*"));
                } catch (final IOException ex) {
                    return false; // closed meanwhile (another test's descriptor)
                }
            });
        }
    }

    /** Counts what it is given. */
    private static final class Counting implements DatagramReceiver {
        int datagrams;

        @Override
        public boolean onDatagram(final DirectBuffer data, final int offset, final int length,
                                  final SourceAddress source, final int ecn, final int segmentBytes) {
            datagrams++;
            return true;
        }

        @Override
        public void onBatchEnd() {
        }
    }
}
