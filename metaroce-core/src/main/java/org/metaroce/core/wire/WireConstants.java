// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.wire;

/** Sizes, limits and defaults fixed by specification section 3. */
public final class WireConstants {
    /** Default UDP destination port (spec section 2): distinct from RoCEv2's 4791 and UET's 4793. */
    public static final int DEFAULT_UDP_PORT = 4796;
    /** The only protocol version this implementation speaks [WIRE-011]. */
    public static final int VERSION = 1;
    /** Length of the base header in bytes. */
    public static final int BASE_HEADER_LENGTH = 24;
    /** Length of the CRC-32C trailer in bytes [WIRE-040]. */
    public static final int INTEGRITY_CHECK_LENGTH = 4;
    /** Largest payload a data packet may carry [WIRE-022]. */
    public static final int MAX_DATA_PAYLOAD = 8192;
    /** Largest private data a connection-manager packet may carry [WIRE-022]. */
    public static final int MAX_PRIVATE_DATA = 256;
    /** Largest message a single work request may move [WIRE-031]. */
    public static final long MAX_MESSAGE_LENGTH = 1L << 31;
    /** Destination QPN of the connection manager [WIRE-010]. */
    public static final int CONNECTION_MANAGER_QPN = 0;
    /** Largest valid queue pair number (24 bits). */
    public static final int MAX_QPN = 0xFF_FFFF;
    /** Number of PSNs after the cumulative PSN that an ACK's bitmap covers [WIRE-060]. */
    public static final int SACK_BITMAP_BITS = 64;
    /** Credit value meaning "no receiver-credit limit". */
    public static final int CREDIT_UNLIMITED = 0xFFFF_FFFF;

    /** Extension header lengths in bytes. */
    public static final int MSG_HEADER_LENGTH = 16;
    public static final int RETH_HEADER_LENGTH = 16;
    public static final int IMM_HEADER_LENGTH = 4;
    public static final int ATOMIC_HEADER_LENGTH = 28;
    public static final int AACK_HEADER_LENGTH = 8;
    public static final int ACK_HEADER_LENGTH = 32;
    public static final int NACK_HEADER_LENGTH = 8;
    /** The Triggering PSN that starts an attached ACK's trailer [WIRE-071] (v1.0.15). */
    public static final int TRIGGER_PSN_LENGTH = 4;
    /** The attached ACK trailer: Triggering PSN and an ACK header [WIRE-071] (v1.0.15). */
    public static final int ATTACHED_ACK_LENGTH = TRIGGER_PSN_LENGTH + ACK_HEADER_LENGTH;
    /**
     * The largest header of a packet with payload (WRITE_WITH_IMM): a packet with an attached ACK
     * takes no more than header + PMTU of this size [WIRE-073], [ENC-020].
     */
    public static final int LARGEST_DATA_HEADER_LENGTH = 60;
    public static final int CM_HEADER_LENGTH = 48;
    /** Length of the stateless cookie carried in the CM header. */
    public static final int COOKIE_LENGTH = 20;

    /** The longest header of any opcode (CM packets). */
    public static final int MAX_HEADER_LENGTH = BASE_HEADER_LENGTH + CM_HEADER_LENGTH;

    private WireConstants() {
    }

    /**
     * Whether {@code mtu} is a path MTU the specification allows (256 to 8192, powers of two).
     *
     * @param mtu payload bytes per packet
     * @return true when allowed
     */
    public static boolean isValidPathMtu(final int mtu) {
        return mtu >= 256 && mtu <= MAX_DATA_PAYLOAD && Integer.bitCount(mtu) == 1;
    }
}
