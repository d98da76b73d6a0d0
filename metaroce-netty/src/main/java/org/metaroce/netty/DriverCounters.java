// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.netty;

import java.util.concurrent.atomic.AtomicLongArray;

/**
 * A device's driver counters, plus datagrams sent per send socket. Written by the owning thread
 * with ordered stores, readable from any thread.
 */
public final class DriverCounters {
    private final AtomicLongArray values = new AtomicLongArray(DriverCounter.count());
    private final AtomicLongArray perSocket;

    DriverCounters(final int entropyPortCount) {
        // One slot per entropy socket, then one for the endpoint socket.
        perSocket = new AtomicLongArray(entropyPortCount + 1);
    }

    void increment(final DriverCounter counter) {
        final int i = counter.ordinal();
        values.lazySet(i, values.get(i) + 1);
    }

    void add(final DriverCounter counter, final long delta) {
        final int i = counter.ordinal();
        values.lazySet(i, values.get(i) + delta);
    }

    /**
     * Counts one send that did not go: its failure's own counter, and {@link DriverCounter#SEND_ERRORS}
     * unless the buffer was only full ({@link SendFailure#WOULD_BLOCK}: nothing is lost).
     */
    void sendFailed(final SendFailure failure) {
        increment(DriverCounter.of(failure));
        if (failure != SendFailure.WOULD_BLOCK) {
            increment(DriverCounter.SEND_ERRORS);
        }
    }

    void addSent(final int socketIndex, final long datagrams) {
        perSocket.lazySet(socketIndex, perSocket.get(socketIndex) + datagrams);
    }

    /**
     * @param counter which counter
     * @return its current value
     */
    public long get(final DriverCounter counter) {
        return values.get(counter.ordinal());
    }

    /**
     * @param entropyIndex index into {@link MetaRoceDevice#entropyPorts()}
     * @return datagrams sent from that entropy port
     */
    public long sentFromEntropyPort(final int entropyIndex) {
        if (entropyIndex < 0 || entropyIndex >= perSocket.length() - 1) {
            throw new IndexOutOfBoundsException("entropy index " + entropyIndex + " of " + (perSocket.length() - 1));
        }
        return perSocket.get(entropyIndex);
    }

    /** @return datagrams sent from the endpoint port (connection-manager packets and entropy fallbacks) */
    public long sentFromEndpointPort() {
        return perSocket.get(perSocket.length() - 1);
    }

    @Override
    public String toString() {
        final StringBuilder sb = new StringBuilder("DriverCounters{");
        boolean first = true;
        for (int i = 0; i < DriverCounter.count(); i++) {
            final long v = values.get(i);
            if (v != 0) {
                sb.append(first ? "" : ", ").append(DriverCounter.ofOrdinal(i)).append('=').append(v);
                first = false;
            }
        }
        sb.append(first ? "" : ", ").append("perSocket=").append(perSocket);
        return sb.append('}').toString();
    }
}
