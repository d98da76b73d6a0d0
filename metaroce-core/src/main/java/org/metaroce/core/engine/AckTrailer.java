// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.engine;

import org.agrona.MutableDirectBuffer;
import org.metaroce.core.wire.ConnectHeader;
import org.metaroce.core.wire.WireConstants;

/**
 * The responder's ACK that rides on its queue pair's own request packet instead of leaving as a
 * datagram of its own [REL-071] (v1.0.15): armed for one poll when ATTACHED_ACK is in effect and
 * the coalesced ACK is due, taken by the first request packet of that poll that has room for it
 * [WIRE-073], and then sent as far as the {@link AckScheduler} is concerned, so that no bare ACK
 * follows. The ACK's contents are the {@link AckWriter}'s, written when the packet is.
 *
 * <p>State: whether an ACK waits for a request packet of the current poll.
 */
final class AckTrailer {
    private final AckScheduler acks;
    private final AckWriter writer;
    /** The coalesced ACK is due and may ride on the next request packet of this poll. */
    private boolean armed;

    AckTrailer(final AckScheduler acks, final AckWriter writer) {
        this.acks = acks;
        this.writer = writer;
    }

    /**
     * A poll is about to send the queue pair's requests: the coalesced ACK, if due now and the
     * capability is in effect, waits for the first of them [REL-071]. Never a NACK: only the
     * coalesced ACK is ever armed.
     */
    void arm(final long nowNs, final int capabilities) {
        // A held ACK rides on whatever request leaves first [REL-073]; otherwise only a due one [REL-071].
        armed = (capabilities & ConnectHeader.CAP_ATTACHED_ACK) != 0 && (acks.ackDue(nowNs)
            || (capabilities & ConnectHeader.CAP_DEFERRED_ACK) != 0 && acks.ackPending());
    }

    /** The poll's requests have gone: an ACK no request took leaves bare, as before. */
    void disarm() {
        armed = false;
    }

    /**
     * @return whether an ACK waits and a packet with this header and payload can carry it without
     *     growing beyond a full-sized WRITE_WITH_IMM packet of the path MTU [WIRE-073]
     */
    boolean fits(final int headerLength, final int payload, final int mtu) {
        return armed && headerLength + payload + WireConstants.ATTACHED_ACK_LENGTH
            <= WireConstants.LARGEST_DATA_HEADER_LENGTH + mtu;
    }

    /**
     * Writes the ACK's trailer at {@code trailerOffset} of the request packet leaving at
     * {@code nowNs}; the ACK is then sent [REL-071].
     */
    void write(final long nowNs, final PacketWriter w, final MutableDirectBuffer buffer, final int trailerOffset) {
        writer.attached(nowNs, w, buffer, trailerOffset, acks.triggerPsn(), acks.triggerTimestamp(),
            acks.triggerArrivalNs(), acks.triggerPathId(), acks.triggerAckFlags());
        acks.ackSent();
        armed = false;
    }
}
