// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.conformance.agent;

/**
 * A command the agent could not carry out, with the error code of the agent contract
 * (specification 12.4.2, [CONF-011]).
 */
public final class AgentException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /** The agent does not offer the command or a feature it needs (CONF-012): the case is SKIPPED. */
    public static final String UNSUPPORTED = "UNSUPPORTED";
    /** The request is malformed (unknown command, missing or invalid argument). */
    public static final String BAD_REQUEST = "BAD_REQUEST";
    /** The request names an object (mr, qp) that does not exist. */
    public static final String NOT_FOUND = "NOT_FOUND";
    /** The operation was attempted and failed; message says how. */
    public static final String FAILED = "FAILED";
    /** A waiting command did not see what it waited for in time. */
    public static final String TIMEOUT = "TIMEOUT";
    /** The agent speaks another contract version. */
    public static final String VERSION = "VERSION";

    private final String code;
    /** The refusal code of a refused post (QP-015, QP-016), or null [CONF-021]. */
    private final String status;

    /**
     * @param code one of the constants of this class
     * @param message what went wrong, for people
     */
    public AgentException(final String code, final String message) {
        this(code, message, null);
    }

    /**
     * @param code one of the constants of this class
     * @param message what went wrong, for people
     * @param status the refusal code of a refused post ({@code INVALID_QP_STATE}, {@code QUEUE_FULL},
     *     {@code INVALID_ARGUMENT}), sent as the reply's {@code status} [CONF-021]; null for none
     */
    public AgentException(final String code, final String message, final String status) {
        super(message);
        this.code = code;
        this.status = status;
    }

    /** @return the refusal code of a refused post, or null */
    public String status() {
        return status;
    }

    /** @return the error code */
    public String code() {
        return code;
    }
}
