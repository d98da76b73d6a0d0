// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.bench.loopback;

/**
 * One-way bulk transfer over loopback between the benchmark thread (the sender, which also drives
 * its end of the transport) and a {@link PeerThread} (the receiver). Messages have a fixed size.
 */
public interface StreamHarness extends AutoCloseable {
    /**
     * Hands one message to the transport; while the transport has no room, runs the sender's duty
     * cycle (and reaps completions) and retries. Sender thread only.
     */
    void send();

    /**
     * @return bytes that reached the other end so far (received by the peer, or acknowledged by it
     *     where the transport acknowledges: RDMA operations); any thread
     */
    long deliveredBytes();

    /** @return bytes per message */
    int messageBytes();

    /**
     * Runs the sender's duty cycle until {@code messages} more messages than were sent have been
     * delivered, or fails after the anti-hang guard. Used for the verified self-check.
     *
     * @param messages messages to send and wait for
     * @throws IllegalStateException if they were not delivered in time or did not arrive intact
     */
    void sendAndAwait(int messages);

    /** Stops both ends and releases their resources. */
    @Override
    void close();
}
