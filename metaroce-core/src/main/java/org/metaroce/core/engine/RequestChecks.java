// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.engine;

import org.agrona.DirectBuffer;
import org.metaroce.core.verbs.MemoryAccessResult;
import org.metaroce.core.verbs.MemoryRegion;
import org.metaroce.core.verbs.ProtectionDomain;
import org.metaroce.core.verbs.WcOpcode;
import org.metaroce.core.wire.Flags;
import org.metaroce.core.wire.ImmediateHeader;
import org.metaroce.core.wire.MessageHeader;
import org.metaroce.core.wire.NackReason;
import org.metaroce.core.wire.Opcode;

/**
 * The checks of specification 6.3 a request packet passes before anything of it is placed: its
 * segmentation [OPS-002, OPS-005], its remote key and range [MEM-009] and, for a SEND or
 * WRITE_WITH_IMM, the receive it consumes [OPS-012, OPS-014, OPS-015, OPS-042]. Each check answers
 * what failed; the {@link Responder} sends the NACK and fails the queue pair [REL-007], so this
 * class sees neither the window nor the queue pair.
 *
 * <p>State: the last region an rkey resolved to, since consecutive packets of a message carry the
 * same rkey.
 */
final class RequestChecks {
    private MemoryRegion cachedRegion;
    private int cachedRkey;

    /**
     * Whether a data packet is a packet the segmentation rule could have produced: Message Offset a
     * multiple of the PMTU, Payload Length min(PMTU, Message Length - Message Offset), and LAST
     * exactly on the packet that ends the message [OPS-002, OPS-005].
     */
    static boolean segmentedAsSpecified(final int mtu, final long messageOffset, final long messageLength,
                                        final int payloadLength, final int flags) {
        final boolean last = (flags & Flags.LAST) != 0;
        return messageOffset % mtu == 0 && payloadLength == Math.min(mtu, messageLength - messageOffset)
            && last == (messageOffset + payloadLength == messageLength);
    }

    /**
     * Resolves and checks an rkey for a remote access to [va, va+length): the region must be live,
     * belong to {@code pd}, allow the access and contain the whole range [MEM-009].
     *
     * @return the region, or null when the access is refused (NACK REMOTE_ACCESS)
     */
    MemoryRegion remote(final ProtectionDomain pd, final int rkey, final long va, final long length,
                        final int access) {
        MemoryRegion mr = cachedRegion;
        if (mr == null || cachedRkey != rkey || !mr.isValid()) {
            mr = pd.lookupRkey(rkey);
            cachedRegion = mr;
            cachedRkey = rkey;
        }
        final int result = mr == null ? MemoryAccessResult.INVALID_KEY : mr.checkRemote(va, length, access);
        return result == MemoryAccessResult.OK ? mr : null;
    }

    /**
     * Matches a SEND or WRITE_WITH_IMM packet to the receive its RSN named: the first packet of a
     * message claims the receive (MSN, length, last PSN, completion opcode, immediate data), later
     * ones must agree with it [OPS-014, OPS-042], and a SEND's message must fit buffers that pass
     * the local checks [OPS-012, OPS-015] (the receive records which failed, for its completion).
     *
     * @param mtu the path MTU, which gives the message's last PSN
     * @return null when the packet may be placed, else the NACK that refuses it: INVALID_REQUEST for
     *     an RSN conflict, REMOTE_OPERATION for a message that does not fit
     */
    static NackReason matchReceive(final RecvWqe recv, final Opcode opcode, final DirectBuffer buffer,
                                   final int offset, final int psn, final long messageOffset,
                                   final long messageLength, final int mtu) {
        final int msn = MessageHeader.msn(buffer, offset + opcode.msgOffset());
        if (recv.matched && (recv.msn != msn || recv.messageLength != messageLength)) {
            // The receive WR already belongs to another message, or this packet contradicts its
            // message's length: an RSN conflict [OPS-014, OPS-042].
            return NackReason.INVALID_REQUEST;
        }
        if (!recv.matched) {
            recv.matched = true;
            recv.msn = msn;
            recv.messageLength = messageLength;
            final long lastIndex = messageLength == 0 ? 0 : (messageLength - 1) / mtu;
            recv.lastPsn = psn + (int) (lastIndex - messageOffset / mtu);
            recv.opcode = opcode == Opcode.WRITE_WITH_IMM ? WcOpcode.RECV_RDMA_WITH_IMM : WcOpcode.RECV;
            if (opcode.immOffset() != Opcode.ABSENT) {
                recv.hasImm = true;
                recv.immData = ImmediateHeader.immediateData(buffer, offset + opcode.immOffset());
            }
        }
        if (opcode != Opcode.WRITE_WITH_IMM) {
            final boolean tooSmall = messageLength > recv.capacity;
            if (tooSmall || recv.checkRegions() != 0) {
                // The message does not fit the posted buffer (LOC_LEN_ERR, OPS-012) or a buffer fails
                // the local checks (LOC_PROT_ERR, OPS-015): the requester learns REM_OP_ERR and
                // nothing is placed.
                recv.tooSmall = tooSmall;
                recv.protectionError = !tooSmall;
                return NackReason.REMOTE_OPERATION;
            }
        }
        return null;
    }

    /** The counter of a fatal NACK sent for {@code reason}. */
    static EndpointCounter nackCounter(final NackReason reason) {
        return switch (reason) {
            case INVALID_REQUEST -> EndpointCounter.NACKS_OUT_INVALID_REQUEST;
            case REMOTE_ACCESS -> EndpointCounter.NACKS_OUT_REMOTE_ACCESS;
            case REMOTE_OPERATION -> EndpointCounter.NACKS_OUT_REMOTE_OPERATION;
            default -> throw new IllegalArgumentException("not a fatal NACK: " + reason);
        };
    }

    /** Forgets the cached region (modify to RESET), so that nothing keeps a deregistered region. */
    void forget() {
        cachedRegion = null;
    }
}
