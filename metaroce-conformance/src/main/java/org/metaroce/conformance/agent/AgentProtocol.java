// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.conformance.agent;

import java.util.List;

/**
 * Names of the agent contract, version 1 (specification 12.4.2). Every request is one JSON object
 * on one line with an integer {@code id} and a {@code cmd}; every reply is one line with the same
 * {@code id} and {@code ok}, plus results, or {@code error} and {@code message}.
 */
public final class AgentProtocol {
    /** Contract version this suite speaks [CONF-009]. */
    public static final int VERSION = 1;

    public static final String HELLO = "hello";
    public static final String RESET = "reset";
    public static final String REG_MR = "reg_mr";
    public static final String DEREG_MR = "dereg_mr";
    public static final String WRITE_MEM = "write_mem";
    public static final String READ_MEM = "read_mem";
    public static final String LISTEN = "listen";
    public static final String ACCEPTED = "accepted";
    public static final String CONNECT = "connect";
    public static final String QP_STATE = "qp_state";
    public static final String POST_RECV = "post_recv";
    public static final String POST_SEND = "post_send";
    public static final String POLL_CQ = "poll_cq";
    public static final String DISCONNECT = "disconnect";
    public static final String COUNTERS = "counters";
    public static final String EVENTS = "events";
    /** Extension {@code memory}: memory in use after a collection [CONF-019]. */
    public static final String MEMORY = "memory";

    /**
     * Extensions of version 1 this suite knows [CONF-019]: {@code cc} (QP options
     * {@code capabilities}, {@code cc_algorithm}, {@code congestion_window}) and {@code memory}
     * (command {@code memory}). An agent lists those it implements in its hello reply.
     */
    public static final List<String> EXTENSIONS = List.of("cc", "memory");

    /** Commands the extensions add. */
    public static final List<String> EXTENSION_COMMANDS = List.of(MEMORY);

    /** Every command of version 1, in the order the annex lists them. */
    public static final List<String> COMMANDS = List.of(HELLO, RESET, REG_MR, DEREG_MR, WRITE_MEM, READ_MEM,
        LISTEN, ACCEPTED, CONNECT, QP_STATE, POST_RECV, POST_SEND, POLL_CQ, DISCONNECT, COUNTERS,
        EVENTS);

    /** Optional features an agent declares in its hello reply [CONF-002]. */
    public static final List<String> FEATURES = List.of("GO_BACK_N", "RECEIVER_CREDIT", "ECN", "DCQCN", "FIXED",
        "REPS", "IPV6", "SENDER_COUNT", "ATTACHED_ACK", "DEFERRED_ACK");

    private AgentProtocol() {
    }
}
