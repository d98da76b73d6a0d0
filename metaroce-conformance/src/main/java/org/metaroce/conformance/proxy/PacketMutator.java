// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.conformance.proxy;

import java.util.List;

/**
 * Rewrites packets in flight (after the fault profile): tests use it to build deliberately broken
 * peers out of a correct one (a shim in front of the reference agent).
 */
@FunctionalInterface
public interface PacketMutator {
    /** Forwards everything unchanged. */
    PacketMutator NONE = (toTarget, datagram) -> List.of(datagram);

    /**
     * @param toTarget true for packets from the client towards the target, false for the way back
     * @param datagram the packet (may be modified in place)
     * @return the datagrams to forward instead (empty to drop)
     */
    List<byte[]> apply(boolean toTarget, byte[] datagram);
}
