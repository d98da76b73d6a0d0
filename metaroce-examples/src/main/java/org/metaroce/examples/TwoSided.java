// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.examples;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.FutureTask;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Function;

import org.metaroce.core.wire.WireConstants;

/**
 * Runs the two sides of an example: both in this JVM over loopback (no arguments), or one side
 * per process ({@code server [PORT]}, {@code client HOST [PORT]}). Each side owns its device on
 * its own thread (INVOKER mode), as two processes would.
 */
public final class TwoSided {
    /** Longest a loopback run may take, server and client together. */
    static final long RUN_TIMEOUT_S = 60;

    /**
     * An example's server: binds, reports where it listens, serves one client, returns what it saw.
     *
     * @param <T> what it returns
     */
    @FunctionalInterface
    public interface Server<T> {
        /**
         * @param bind the address and port to listen on (port 0: any)
         * @param listening told where the server listens, once it does
         * @return what the server saw
         * @throws Exception if serving fails
         */
        T run(InetSocketAddress bind, Consumer<InetSocketAddress> listening) throws Exception;
    }

    /**
     * An example's client: connects to the server and does its part.
     *
     * @param <C> what it returns
     */
    @FunctionalInterface
    public interface Client<C> {
        /**
         * @param server the server's address
         * @return what the client saw
         * @throws Exception if the client fails
         */
        C run(InetSocketAddress server) throws Exception;
    }

    /**
     * What both sides returned.
     *
     * @param server the server's result
     * @param client the client's result
     * @param <T> the server's result type
     * @param <C> the client's result type
     */
    public record Outcome<T, C>(T server, C client) {
    }

    private TwoSided() {
    }

    /**
     * Runs the server on a thread of its own, bound to 127.0.0.1 on an ephemeral port, and the
     * client on this thread once the server listens.
     *
     * @param server the server side
     * @param client the client side
     * @param <T> the server's result type
     * @param <C> the client's result type
     * @return what both returned
     * @throws Exception the first side's failure
     */
    public static <T, C> Outcome<T, C> onLoopback(final Server<T> server, final Client<C> client) throws Exception {
        final CompletableFuture<InetSocketAddress> listening = new CompletableFuture<>();
        final FutureTask<T> serving = new FutureTask<>(() -> {
            try {
                return server.run(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), listening::complete);
            } catch (final Throwable t) {
                // A server that fails before it listens must not leave the client waiting.
                listening.completeExceptionally(t);
                throw t;
            }
        });
        final Thread serverThread = new Thread(serving, "example-server");
        // A server left waiting by a failed client must not keep the JVM alive.
        serverThread.setDaemon(true);
        serverThread.start();
        final C clientResult;
        try {
            clientResult = client.run(listening.get(RUN_TIMEOUT_S, TimeUnit.SECONDS));
        } catch (final ExecutionException ex) {
            throw unwrap(ex);
        } catch (final Exception ex) {
            serverThread.interrupt();
            throw ex;
        }
        try {
            return new Outcome<>(serving.get(RUN_TIMEOUT_S, TimeUnit.SECONDS), clientResult);
        } catch (final ExecutionException ex) {
            throw unwrap(ex);
        }
    }

    /**
     * The examples' command line: no arguments runs both sides on loopback; {@code server [PORT]}
     * listens on every address on PORT (default 4796, MetaRoCE's UDP port); {@code client HOST
     * [PORT]} connects to it. Prints what each side run here reports.
     */
    static <T, C> void main(final String[] args, final Server<T> server, final Function<T, String> serverReport,
                            final Client<C> client, final Function<C, String> clientReport) throws Exception {
        if (args.length == 0) {
            final Outcome<T, C> outcome = onLoopback(server, client);
            System.out.println("server: " + serverReport.apply(outcome.server()));
            System.out.println("client: " + clientReport.apply(outcome.client()));
        } else if (args[0].equals("server") && args.length <= 2) {
            final int port = args.length == 2 ? Integer.parseInt(args[1]) : WireConstants.DEFAULT_UDP_PORT;
            final T seen = server.run(new InetSocketAddress(port), at -> System.out.println("listening on " + at));
            System.out.println("server: " + serverReport.apply(seen));
        } else if (args[0].equals("client") && (args.length == 2 || args.length == 3)) {
            final int port = args.length == 3 ? Integer.parseInt(args[2]) : WireConstants.DEFAULT_UDP_PORT;
            System.out.println("client: " + clientReport.apply(client.run(new InetSocketAddress(args[1], port))));
        } else {
            throw new IllegalArgumentException("usage: (no arguments) | server [PORT] | client HOST [PORT]");
        }
    }

    private static Exception unwrap(final ExecutionException ex) {
        final Throwable cause = ex.getCause();
        return cause instanceof Exception e ? e : new IllegalStateException(cause);
    }
}
