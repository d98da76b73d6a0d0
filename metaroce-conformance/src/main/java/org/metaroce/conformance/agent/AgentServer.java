// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.conformance.agent;

import java.io.BufferedReader;
import java.io.BufferedWriter;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketException;
import java.nio.charset.StandardCharsets;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The agent's control channel: a TCP server speaking JSON lines (specification 12.4.2). Each
 * connection gets a thread; commands of all connections are executed one at a time, so a backend
 * needs no locking of its own. Malformed lines get an error reply and the connection stays usable.
 */
public final class AgentServer implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(AgentServer.class);
    /** Longest request line accepted; longer lines are answered BAD_REQUEST and skipped. */
    static final int MAX_LINE_CHARS = 1 << 20;

    private final AgentBackend backend;
    private final ServerSocket server;
    private final Thread acceptor;
    private final Set<Socket> clients = ConcurrentHashMap.newKeySet();
    private volatile boolean closed;

    /**
     * Binds the control port and starts accepting.
     *
     * @param backend executes the commands; closed with the server
     * @param bind address to bind (loopback is the usual choice: the channel is not authenticated)
     * @param port TCP port, 0 for any
     */
    public AgentServer(final AgentBackend backend, final InetAddress bind, final int port) {
        this.backend = backend;
        try {
            server = new ServerSocket();
            server.setReuseAddress(true);
            server.bind(new InetSocketAddress(bind, port));
        } catch (final IOException ex) {
            throw new UncheckedIOException("cannot bind the agent control port " + bind + ":" + port, ex);
        }
        acceptor = new Thread(this::acceptLoop, "metaroce-agent-accept");
        acceptor.setDaemon(true);
        acceptor.start();
    }

    /** @return the bound control address */
    public InetSocketAddress address() {
        return (InetSocketAddress) server.getLocalSocketAddress();
    }

    private void acceptLoop() {
        while (!closed) {
            try {
                final Socket s = server.accept();
                s.setTcpNoDelay(true);
                clients.add(s);
                final Thread t = new Thread(() -> serve(s), "metaroce-agent-" + s.getPort());
                t.setDaemon(true);
                t.start();
            } catch (final IOException ex) {
                if (!closed) {
                    LOG.warn("agent accept failed", ex);
                }
            }
        }
    }

    private void serve(final Socket socket) {
        try (socket;
             BufferedReader in = new BufferedReader(new InputStreamReader(socket.getInputStream(),
                 StandardCharsets.UTF_8));
             BufferedWriter out = new BufferedWriter(new OutputStreamWriter(socket.getOutputStream(),
                 StandardCharsets.UTF_8))) {
            String line;
            while ((line = in.readLine()) != null) {
                if (line.isBlank()) {
                    continue;
                }
                out.write(Json.line(handle(line)));
                out.write('\n');
                out.flush();
            }
        } catch (final SocketException ex) {
            LOG.debug("control connection closed: {}", ex.getMessage());
        } catch (final IOException ex) {
            LOG.warn("control connection failed", ex);
        } finally {
            clients.remove(socket);
        }
    }

    /**
     * Executes one request line and builds its reply; never throws.
     *
     * @param line one request line
     * @return the reply object
     */
    ObjectNode handle(final String line) {
        final ObjectNode reply = Json.object();
        JsonNode id = null;
        try {
            if (line.length() > MAX_LINE_CHARS) {
                throw new AgentException(AgentException.BAD_REQUEST, "request line longer than " + MAX_LINE_CHARS
                    + " characters");
            }
            final ObjectNode request = Json.parseObject(line);
            id = request.get("id");
            if (id == null || !id.isIntegralNumber()) {
                throw new AgentException(AgentException.BAD_REQUEST, "every request needs an integer 'id'");
            }
            final String cmd = Json.requireText(request, "cmd");
            if (!AgentProtocol.COMMANDS.contains(cmd) && !AgentProtocol.EXTENSION_COMMANDS.contains(cmd)) {
                throw new AgentException(AgentException.UNSUPPORTED, "unknown command '" + cmd + "'");
            }
            final ObjectNode results = Json.object();
            synchronized (backend) {
                backend.execute(cmd, request, results);
            }
            reply.set("id", id);
            reply.put("ok", true);
            reply.setAll(results);
        } catch (final AgentException ex) {
            reply.removeAll();
            reply.set("id", id);
            reply.put("ok", false);
            reply.put("error", ex.code());
            reply.put("message", ex.getMessage());
            if (ex.status() != null) {
                reply.put("status", ex.status());
            }
        } catch (final RuntimeException ex) {
            LOG.warn("agent command failed unexpectedly: {}", line, ex);
            reply.removeAll();
            reply.set("id", id);
            reply.put("ok", false);
            reply.put("error", AgentException.FAILED);
            reply.put("message", String.valueOf(ex));
        }
        return reply;
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        try {
            server.close();
        } catch (final IOException ex) {
            LOG.debug("closing the control socket", ex);
        }
        for (final Socket s : clients) {
            try {
                s.close();
            } catch (final IOException ex) {
                LOG.debug("closing a control connection", ex);
            }
        }
        try {
            acceptor.join(5000);
        } catch (final InterruptedException ex) {
            Thread.currentThread().interrupt();
        }
        synchronized (backend) {
            backend.close();
        }
    }
}
