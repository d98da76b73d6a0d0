// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.conformance.agent;

import java.util.HexFormat;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.StreamReadFeature;
import com.fasterxml.jackson.core.json.JsonReadFeature;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * Strict JSON for the control channel: one object per line, no trailing tokens, no comments or
 * other leniencies, and typed argument accessors that name what is wrong.
 */
public final class Json {
    /** The shared mapper (thread-safe once configured). */
    public static final ObjectMapper MAPPER = JsonMapper.builder()
        .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
        .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION)
        .disable(JsonReadFeature.ALLOW_JAVA_COMMENTS)
        .build();

    private static final HexFormat HEX = HexFormat.of();

    private Json() {
    }

    /** @return a new empty object */
    public static ObjectNode object() {
        return MAPPER.createObjectNode();
    }

    /**
     * Parses one line that must hold exactly one JSON object.
     *
     * @param line the line
     * @return the object
     * @throws AgentException BAD_REQUEST when the line is not one JSON object
     */
    public static ObjectNode parseObject(final String line) {
        final JsonNode node;
        try {
            node = MAPPER.readTree(line);
        } catch (final JsonProcessingException ex) {
            throw new AgentException(AgentException.BAD_REQUEST, "not valid JSON: " + ex.getOriginalMessage());
        }
        if (!(node instanceof ObjectNode o)) {
            throw new AgentException(AgentException.BAD_REQUEST, "a request must be a JSON object, got "
                + (node == null ? "nothing" : node.getNodeType()));
        }
        return o;
    }

    /** @return the object as one line of JSON */
    public static String line(final JsonNode node) {
        try {
            return MAPPER.writeValueAsString(node);
        } catch (final JsonProcessingException ex) {
            throw new IllegalStateException("cannot serialise " + node, ex);
        }
    }

    /** @return a required integer argument (long range) */
    public static long requireLong(final ObjectNode o, final String field) {
        final JsonNode n = o.get(field);
        if (n == null || n.isNull()) {
            throw new AgentException(AgentException.BAD_REQUEST, "missing argument '" + field + "'");
        }
        if (n.isTextual()) {
            return parseUnsigned(field, n.asText());
        }
        if (!n.isIntegralNumber() || !n.canConvertToLong()) {
            throw new AgentException(AgentException.BAD_REQUEST, "argument '" + field + "' must be an integer, got "
                + n);
        }
        return n.longValue();
    }

    /** @return an optional integer argument, or {@code dflt} */
    public static long optLong(final ObjectNode o, final String field, final long dflt) {
        return o.hasNonNull(field) ? requireLong(o, field) : dflt;
    }

    /** @return a required int argument within [min, max] */
    public static int requireInt(final ObjectNode o, final String field, final long min, final long max) {
        final long v = requireLong(o, field);
        if (v < min || v > max) {
            throw new AgentException(AgentException.BAD_REQUEST, "argument '" + field + "' must be in " + min + ".."
                + max + ", got " + v);
        }
        return (int) v;
    }

    /** @return an optional int argument within [min, max], or {@code dflt} */
    public static int optInt(final ObjectNode o, final String field, final long min, final long max, final int dflt) {
        return o.hasNonNull(field) ? requireInt(o, field, min, max) : dflt;
    }

    /** @return a required string argument */
    public static String requireText(final ObjectNode o, final String field) {
        final JsonNode n = o.get(field);
        if (n == null || !n.isTextual()) {
            throw new AgentException(AgentException.BAD_REQUEST, "argument '" + field + "' must be a string");
        }
        return n.asText();
    }

    /** @return an optional string argument, or {@code dflt} */
    public static String optText(final ObjectNode o, final String field, final String dflt) {
        return o.hasNonNull(field) ? requireText(o, field) : dflt;
    }

    /** @return bytes from a lowercase or uppercase hex string argument */
    public static byte[] requireHex(final ObjectNode o, final String field) {
        final String s = requireText(o, field);
        try {
            return HEX.parseHex(s);
        } catch (final IllegalArgumentException ex) {
            throw new AgentException(AgentException.BAD_REQUEST, "argument '" + field + "' is not hex: "
                + ex.getMessage());
        }
    }

    /** @return lowercase hex of {@code bytes} */
    public static String hex(final byte[] bytes) {
        return HEX.formatHex(bytes);
    }

    /**
     * Unsigned 64-bit values (addresses) travel as decimal strings so that no JSON reader loses
     * precision above 2^53 [CONF-010].
     *
     * @param value the value, taken as unsigned
     * @return its decimal text
     */
    public static String unsigned(final long value) {
        return Long.toUnsignedString(value);
    }

    private static long parseUnsigned(final String field, final String text) {
        try {
            return text.startsWith("0x") ? Long.parseUnsignedLong(text.substring(2), 16)
                : Long.parseUnsignedLong(text);
        } catch (final NumberFormatException ex) {
            throw new AgentException(AgentException.BAD_REQUEST, "argument '" + field
                + "' must be an unsigned integer, got \"" + text + "\"");
        }
    }
}
