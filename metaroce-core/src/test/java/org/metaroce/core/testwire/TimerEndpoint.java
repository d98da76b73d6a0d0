// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.testwire;

import org.agrona.DirectBuffer;
import org.metaroce.core.engine.DatagramEndpoint;
import org.metaroce.core.engine.TransmitSink;

/**
 * Fake endpoint for wire tests: at its first poll it arms a deadline {@code delayNs} ahead; when
 * polled at or after it, it sends one datagram (PSN 0) to its peer and disarms. Proves the wire
 * advances virtual time to endpoint deadlines, not only to deliveries.
 */
final class TimerEndpoint implements DatagramEndpoint {
    private final int peer;
    private final long delayNs;
    private boolean armed;
    private long deadlineNs = Long.MAX_VALUE;
    long armedAtNs = -1;
    long firedAtNs = -1;
    int polls;

    TimerEndpoint(final int peer, final long delayNs) {
        this.peer = peer;
        this.delayNs = delayNs;
    }

    @Override
    public void onDatagram(final long nowNs, final DirectBuffer buffer, final int offset, final int length,
                           final int peerId, final int ecn) {
    }

    @Override
    public int poll(final long nowNs, final TransmitSink sink) {
        polls++;
        if (!armed) {
            armed = true;
            armedAtNs = nowNs;
            deadlineNs = nowNs + delayNs;
            return 0;
        }
        if (nowNs >= deadlineNs) {
            final int offset = sink.claim(PingEndpoint.MIN_LENGTH);
            PingEndpoint.write(sink.buffer(), offset, PingEndpoint.MIN_LENGTH, 0);
            sink.commit(offset, PingEndpoint.MIN_LENGTH, peer, 1);
            firedAtNs = nowNs;
            deadlineNs = Long.MAX_VALUE;
            return 1;
        }
        return 0;
    }

    @Override
    public long nextDeadlineNs() {
        return deadlineNs;
    }
}
