// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.wire;

/** NACK reason codes (specification 3.5.7). */
public enum NackReason {
    /** The NACK PSN is beyond the responder's receive window; retransmit later. */
    PSN_WINDOW(0x01),
    /** The packet arrived trimmed; resend it now. */
    TRIMMED(0x02),
    /** Receiver not ready: no receive posted; retry after the RNR timer. */
    RNR(0x03),
    /** Invalid R_Key, bounds or permission: REM_ACCESS_ERR at the requester. */
    REMOTE_ACCESS(0x04),
    /** Malformed or unsupported request: REM_INV_REQ_ERR at the requester. */
    INVALID_REQUEST(0x05),
    /** The responder failed to perform the operation: REM_OP_ERR at the requester. */
    REMOTE_OPERATION(0x06),
    /** Go-back-N baseline only: resend from the cumulative PSN. */
    SEQUENCE_GAP(0x07);

    private static final NackReason[] BY_CODE = new NackReason[256];

    static {
        for (final NackReason r : values()) {
            BY_CODE[r.code] = r;
        }
    }

    private final int code;

    NackReason(final int code) {
        this.code = code;
    }

    /** @return the wire code */
    public int code() {
        return code;
    }

    /**
     * @param code wire code
     * @return the reason, or null for codes this version does not define [WIRE-064]
     */
    public static NackReason of(final int code) {
        return (code & ~0xFF) == 0 ? BY_CODE[code] : null;
    }
}
