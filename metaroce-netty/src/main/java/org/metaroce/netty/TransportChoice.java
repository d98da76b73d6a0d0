// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.netty;

/**
 * Which transport and which receive path a device runs, from its configuration, and what the
 * transport lets it do with ECN; decided once, before any socket opens, so that a combination no
 * transport can serve fails with the configuration in its message.
 */
final class TransportChoice {
    private TransportChoice() {
    }

    /**
     * A SHARED device uses its driver's transport (one event loop serves every device on it);
     * otherwise AUTO resolves to NATIVE where it can, unless the configuration asks for Netty's
     * BATCHED receive path: then to the best Netty transport.
     *
     * @throws IllegalStateException if the configured transport is unavailable
     */
    static Transport transport(final DeviceConfig config) {
        if (config.threadingMode() == ThreadingMode.SHARED) {
            return config.sharedDriver().transport();
        }
        if (config.transport() == Transport.AUTO && config.receivePath() == ReceivePath.BATCHED) {
            return Transport.epollAvailable() ? Transport.EPOLL : Transport.NIO;
        }
        return config.transport().resolve();
    }

    /**
     * The receive path: on the native transport always POLLED (its sockets read GRO batches and
     * are waited on with their own epoll, so neither GRO nor a blocking idle strategy needs Netty);
     * on a Netty transport what the configuration resolves to.
     *
     * @param transport the resolved transport
     * @param blockingIdle whether the threading mode idles in the event loop
     * @throws IllegalArgumentException if the transport cannot serve the configured path
     */
    static ReceivePath receivePath(final DeviceConfig config, final Transport transport, final boolean blockingIdle) {
        if (transport == Transport.NATIVE) {
            if (config.receivePath() == ReceivePath.BATCHED) {
                throw new IllegalArgumentException("cannot open device " + config + ": receivePath BATCHED needs a "
                    + "Netty transport (epoll or nio); the native transport reads every socket itself (POLLED)");
            }
            return ReceivePath.POLLED;
        }
        try {
            return config.resolveReceivePath(blockingIdle);
        } catch (final IllegalArgumentException ex) {
            throw new IllegalArgumentException("cannot open device " + config + ": " + ex.getMessage(), ex);
        }
    }

    /**
     * @return whether a device on {@code transport} reads the ECN field of received datagrams and
     *     marks what it sends ECT(0): the native transport only [ENC-016]
     */
    static boolean readsEcn(final Transport transport) {
        return transport == Transport.NATIVE;
    }
}
