// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.bench.loopback;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;

/**
 * A connected pair of non-blocking NIO socket channels on 127.0.0.1 (one TCP stream), with
 * TCP_NODELAY and the kernel's default (auto-tuned) buffers: what a user picking TCP gets.
 */
final class TcpEnds {
    private TcpEnds() {
    }

    /** @return {client, server} */
    static SocketChannel[] connect() {
        try (ServerSocketChannel listener = ServerSocketChannel.open()) {
            listener.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
            final SocketChannel client = SocketChannel.open(listener.getLocalAddress());
            final SocketChannel server = listener.accept();
            for (final SocketChannel c : new SocketChannel[] {client, server}) {
                c.setOption(StandardSocketOptions.TCP_NODELAY, true);
                c.configureBlocking(false);
            }
            return new SocketChannel[] {client, server};
        } catch (final IOException ex) {
            throw new UncheckedIOException("cannot open a TCP connection on 127.0.0.1", ex);
        }
    }

    static void close(final SocketChannel c) {
        try {
            c.close();
        } catch (final IOException ex) {
            // Best effort at shutdown.
        }
    }
}
