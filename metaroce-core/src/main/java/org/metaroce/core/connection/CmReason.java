// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.connection;

/** Reason codes of CONNECT_REJECT and DISCONNECT_* packets (specification 9.6). */
public final class CmReason {
    /** Orderly disconnect. */
    public static final int NORMAL = 0x00;
    /** No listener for the Service ID. */
    public static final int NO_LISTENER = 0x01;
    /** The listening application refused. */
    public static final int REJECTED_BY_APPLICATION = 0x02;
    /** No QP or connection slot available. */
    public static final int NO_RESOURCES = 0x03;
    /** Illegal or unacceptable parameters. */
    public static final int BAD_PARAMETERS = 0x04;
    /** Cookie older than COOKIE_LIFETIME. */
    public static final int STALE_COOKIE = 0x05;
    /** The sender's QP entered ERR. */
    public static final int QP_ERROR = 0x06;
    /** The sender saw the peer reconnect with a new Transaction ID. */
    public static final int PEER_RESTARTED = 0x07;

    private static final String[] NAMES = {
        "NORMAL", "NO_LISTENER", "REJECTED_BY_APPLICATION", "NO_RESOURCES", "BAD_PARAMETERS",
        "STALE_COOKIE", "QP_ERROR", "PEER_RESTARTED",
    };

    private CmReason() {
    }

    /**
     * @param reason a reason code (0..255)
     * @return its name, or {@code UNKNOWN(0x..)} for codes this version does not define [CM-018]
     */
    public static String name(final int reason) {
        return reason >= 0 && reason < NAMES.length ? NAMES[reason] : String.format("UNKNOWN(0x%02x)", reason);
    }
}
