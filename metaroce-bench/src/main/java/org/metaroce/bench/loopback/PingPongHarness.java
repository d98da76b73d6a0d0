// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.bench.loopback;

/**
 * Ping-pong over loopback: the benchmark thread sends one message and waits (driving its end) for
 * the echo a {@link PeerThread} sends back.
 */
public interface PingPongHarness extends AutoCloseable {
    /**
     * One round trip: ping, then spin on the sender's duty cycle until the pong is back.
     *
     * @throws IllegalStateException if the pong does not come within the anti-hang guard, or
     *     (while verifying) differs from the ping
     */
    void roundTrip();

    /** Stops both ends and releases their resources. */
    @Override
    void close();
}
