// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.testwire;

/**
 * One line of a {@link Trace}: something that happened to one packet. Records compare by value,
 * so two runs' traces can be compared with {@code equals} to prove determinism.
 *
 * @param timeNs virtual time of the event (delivery time for {@link PacketFate#DELIVERED}, send
 *        time otherwise)
 * @param sentNs virtual time the packet was committed
 * @param packetId 1-based number of the packet in send order on this wire; copies share it
 * @param from sending node id
 * @param to receiving node id
 * @param length UDP payload length
 * @param opcode opcode byte as sent, {@link PacketMatcher#NO_OPCODE} if absent
 * @param psn PSN as sent, {@link PacketMatcher#NO_PSN} if absent
 * @param entropy the entropy (UDP source port) the sender committed
 * @param fate what happened
 */
public record TraceEvent(long timeNs, long sentNs, long packetId, int from, int to, int length, int opcode,
                         int psn, int entropy, PacketFate fate) {
    @Override
    public String toString() {
        final String op = opcode == PacketMatcher.NO_OPCODE ? "--" : String.format("%02x", opcode);
        return String.format("%,15d ns  #%-7d %d->%d len=%-5d op=0x%s psn=%-11d ent=%-5d %s",
            timeNs, packetId, from, to, length, op, psn, entropy, fate);
    }
}
