// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.netty;

import org.agrona.DirectBuffer;

/**
 * Picks received datagrams for a device to drop, for tests that need one particular packet lost
 * (a message's first transmission, say) where {@link InboundFaults} drops a random share. Asked
 * on the device's owning thread for every datagram its endpoint socket reads (each GRO segment
 * alone), before any {@link InboundFaults}; a dropped datagram is counted as
 * {@link DriverCounter#FAULT_DROPPED} and goes no further. For tests and experiments; leave unset
 * in production.
 */
@FunctionalInterface
public interface InboundDropRule {
    /**
     * @param datagram the received bytes (valid only during the call)
     * @param offset where the UDP payload starts in {@code datagram}
     * @param length bytes of UDP payload
     * @return whether to drop the datagram
     */
    boolean drop(DirectBuffer datagram, int offset, int length);
}
