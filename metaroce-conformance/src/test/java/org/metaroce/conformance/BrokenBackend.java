// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.conformance;

import java.util.function.UnaryOperator;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.metaroce.conformance.agent.AgentBackend;
import org.metaroce.conformance.agent.AgentProtocol;
import org.metaroce.conformance.agent.Json;

/**
 * An agent-level mutant: the reference backend with its completions rewritten, as an
 * implementation with broken completion handling would report them.
 */
final class BrokenBackend implements AgentBackend {
    private final AgentBackend inner;
    private final UnaryOperator<ArrayNode> completions;
    private final java.util.function.Consumer<ObjectNode> requests;
    private java.util.function.BiConsumer<String, ObjectNode> replies = (c, r) -> { };

    BrokenBackend(final AgentBackend inner, final UnaryOperator<ArrayNode> completions) {
        this(inner, completions, r -> { });
    }

    /**
     * @param requests rewrites each request before the reference sees it: an implementation that
     *     ignores a QP option (or honours a different one) behaves as the reference given the
     *     rewritten request
     */
    BrokenBackend(final AgentBackend inner, final UnaryOperator<ArrayNode> completions,
                  final java.util.function.Consumer<ObjectNode> requests) {
        this.inner = inner;
        this.completions = completions;
        this.requests = requests;
    }

    /** Rewrites replies (after the reference answered): an implementation that reports differently. */
    BrokenBackend replies(final java.util.function.BiConsumer<String, ObjectNode> rewrite) {
        this.replies = rewrite;
        return this;
    }

    /** Reuses rkeys: every region gets the rkey of the first one registered [MEM-004]. */
    static java.util.function.BiConsumer<String, ObjectNode> reusesRkeys() {
        final long[] first = {-1};
        return (cmd, reply) -> {
            if (cmd.equals(AgentProtocol.REG_MR)) {
                if (first[0] < 0) {
                    first[0] = reply.get("rkey").asLong();
                }
                reply.put("rkey", first[0]);
            }
        };
    }

    /** @return completions passed through unchanged */
    static UnaryOperator<ArrayNode> sameCompletions() {
        return list -> list;
    }

    /** Signals every send WR: an implementation that completes unsignaled WRs [OPS-037]. */
    static java.util.function.Consumer<ObjectNode> signalsEverything() {
        return r -> {
            if (r.path("cmd").asText().equals(AgentProtocol.POST_SEND)) {
                final ArrayNode f = r.withArray("flags");
                boolean has = false;
                for (final JsonNode n : f) {
                    has |= n.asText().equals("SIGNALED");
                }
                if (!has) {
                    f.add("SIGNALED");
                }
            }
        };
    }

    /** Runs FIXED where DEFAULT is asked for: a requester that ignores delay feedback. */
    static java.util.function.Consumer<ObjectNode> fixedForDefault() {
        return r -> {
            if (r.path("cc_algorithm").asText("").equals("DEFAULT")) {
                r.put("cc_algorithm", "FIXED");
            }
        };
    }

    /**
     * No congestion window at all: a QP opened without CC options runs FIXED with the largest
     * window, so only the responder's Credit limits it (what the library's own default, FIXED at
     * the receive window, amounts to) [CC-001, CC-008, CC-010, CC-013].
     */
    static java.util.function.Consumer<ObjectNode> noCongestionWindow() {
        return r -> {
            final String cmd = r.path("cmd").asText();
            if ((cmd.equals(AgentProtocol.LISTEN) || cmd.equals(AgentProtocol.CONNECT)) && !r.hasNonNull("cc_algorithm")) {
                r.put("cc_algorithm", "FIXED");
                r.put("congestion_window", org.metaroce.core.verbs.QpAttributes.MAX_CONGESTION_WINDOW);
            }
        };
    }

    /** Drops a QP option: the implementation ignores it and uses its default. */
    static java.util.function.Consumer<ObjectNode> ignoresOption(final String option) {
        return r -> r.remove(option);
    }

    /** Does not flush on error: WR_FLUSH_ERR completions never appear. */
    static UnaryOperator<ArrayNode> noFlush() {
        return list -> {
            final ArrayNode out = Json.MAPPER.createArrayNode();
            for (final JsonNode n : list) {
                if (!n.get("status").asText().equals("WR_FLUSH_ERR")) {
                    out.add(n);
                }
            }
            return out;
        };
    }

    /** Completes twice: every successful completion is reported two times. */
    static UnaryOperator<ArrayNode> completesTwice() {
        return list -> {
            final ArrayNode out = Json.MAPPER.createArrayNode();
            for (final JsonNode n : list) {
                out.add(n);
                if (n.get("status").asText().equals("SUCCESS")) {
                    out.add(n.deepCopy());
                }
            }
            return out;
        };
    }

    @Override
    public void execute(final String command, final ObjectNode request, final ObjectNode reply) {
        requests.accept(request);
        inner.execute(command, request, reply);
        replies.accept(command, reply);
        if (command.equals(AgentProtocol.POLL_CQ)) {
            reply.set("completions", completions.apply((ArrayNode) reply.get("completions")));
        }
    }

    @Override
    public void close() {
        inner.close();
    }
}
