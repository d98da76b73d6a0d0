// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.conformance.agent;

import java.io.BufferedReader;
import java.io.BufferedWriter;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;

import com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * The suite's end of the control channel: sends one command at a time and waits for its reply.
 */
public final class AgentClient implements AutoCloseable {
    private final Socket socket;
    private final BufferedReader in;
    private final BufferedWriter out;
    private final int replyTimeoutMs;
    private long nextId = 1;

    /**
     * Connects to an agent.
     *
     * @param address the agent's control address
     * @param replyTimeoutMs how long to wait for each reply beyond the command's own wait
     */
    public AgentClient(final InetSocketAddress address, final int replyTimeoutMs) {
        this.replyTimeoutMs = replyTimeoutMs;
        try {
            socket = new Socket();
            socket.connect(address, replyTimeoutMs);
            socket.setTcpNoDelay(true);
            in = new BufferedReader(new InputStreamReader(socket.getInputStream(), StandardCharsets.UTF_8));
            out = new BufferedWriter(new OutputStreamWriter(socket.getOutputStream(), StandardCharsets.UTF_8));
        } catch (final IOException ex) {
            throw new UncheckedIOException("cannot reach the agent at " + address, ex);
        }
    }

    /** @return a request object for {@code cmd}, to add arguments to and pass to {@link #call} */
    public static ObjectNode request(final String cmd) {
        final ObjectNode o = Json.object();
        o.put("cmd", cmd);
        return o;
    }

    /**
     * Sends a request and returns the successful reply.
     *
     * @param request from {@link #request}, with arguments
     * @return the reply
     * @throws AgentException with the agent's error code when it answered ok=false, or TIMEOUT
     */
    public synchronized ObjectNode call(final ObjectNode request) {
        final long id = nextId++;
        request.put("id", id);
        final long waitMs = request.hasNonNull("timeout_ms") ? request.get("timeout_ms").asLong() : 0;
        try {
            socket.setSoTimeout((int) Math.min(Integer.MAX_VALUE, replyTimeoutMs + waitMs));
            out.write(Json.line(request));
            out.write('\n');
            out.flush();
            ObjectNode reply;
            do {
                // Replies to requests that timed out earlier arrive late: skip them.
                final String line = in.readLine();
                if (line == null) {
                    throw new AgentException(AgentException.FAILED, "the agent closed the control channel");
                }
                reply = Json.parseObject(line);
            } while (reply.path("id").asLong(-1) < id);
            if (reply.path("id").asLong(-1) != id) {
                throw new AgentException(AgentException.FAILED, "reply id " + reply.get("id") + " for request " + id);
            }
            if (!reply.path("ok").asBoolean(false)) {
                throw new AgentException(reply.path("error").asText(AgentException.FAILED),
                    request.path("cmd").asText() + ": " + reply.path("message").asText(),
                    reply.hasNonNull("status") ? reply.get("status").asText() : null);
            }
            return reply;
        } catch (final SocketTimeoutException ex) {
            throw new AgentException(AgentException.TIMEOUT, "no reply from the agent to " + request.path("cmd")
                .asText());
        } catch (final IOException ex) {
            throw new UncheckedIOException("control channel failed", ex);
        }
    }

    @Override
    public void close() {
        try {
            socket.close();
        } catch (final IOException ex) {
            // Closing: nothing to do with the error.
        }
    }
}
