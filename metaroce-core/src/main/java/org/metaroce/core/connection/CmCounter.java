// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.connection;

/**
 * What the connection manager counts [GEN-002]. Drop reasons use the names of specification
 * section 9 where it names them ({@code CM_MISMATCH}, {@code CM_UNEXPECTED}, {@code BAD_COOKIE}).
 */
public enum CmCounter {
    /** Connection-manager packets handed to the connection manager. */
    PACKETS_IN,
    /** Connection-manager packets emitted (first transmissions, answers and retransmissions). */
    PACKETS_OUT,
    /** Retransmissions by the timer of [CM-022]. */
    RETRANSMITS,
    /** CONNECT_CHALLENGEs sent. */
    CHALLENGES_SENT,
    /** CONNECT_REJECTs sent (stateless and by the application). */
    REJECTS_SENT,
    /** Cookies whose MAC verified under neither secret [CM-010] step 4. */
    BAD_COOKIE,
    /** Cookies that verified but were older than COOKIE_LIFETIME [CM-010] step 5. */
    STALE_COOKIE,
    /** Packets for an existing handshake or connection with a mismatching identity [CM-003]. */
    CM_MISMATCH,
    /** Packets not valid in the receiver's handshake state [CM-003]. */
    CM_UNEXPECTED,
    /** Packets whose destination QPN names no connection of this manager. */
    UNKNOWN_QPN,
    /** Answers to unverified sources suppressed by the rate limit [SEC-008]. */
    ANSWERS_RATE_LIMITED,
    /** Answers dropped because the bounded answer queue was full before the next poll. */
    ANSWERS_QUEUE_FULL,
    /** Verified requests refused with NO_RESOURCES because the handshake table was full [SEC-009]. */
    HANDSHAKE_TABLE_FULL,
    /** Verified requests refused with NO_RESOURCES because their host had its share of the handshake table [CM-040]. */
    HOST_HANDSHAKES_FULL,
    /** Cookie secret rotations [CM-017]. */
    SECRET_ROTATIONS,
    /** Server connections established by the first request packet rather than READY_TO_USE [CM-013]. */
    COMM_EST,
    /** Established connections ended because keepalive declared the peer dead [CM-030]. */
    PEERS_DEAD
}
