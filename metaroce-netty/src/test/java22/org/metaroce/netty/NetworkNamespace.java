// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.netty;

import static java.lang.foreign.ValueLayout.JAVA_INT;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * A network namespace of its own for a test (root only): {@code ip netns add}, its {@code lo} up,
 * nftables rules and qdiscs inside it, and {@link #enter()} to move the calling thread into it
 * ({@code setns}, which affects only that thread: sockets it opens afterwards live in the
 * namespace). Faults put here touch nobody else's loopback. {@link #close()} deletes it, and with
 * it every rule.
 */
final class NetworkNamespace implements AutoCloseable {
    private static final int CLONE_NEWNET = 0x40000000;
    private static final int O_RDONLY = 0;

    final String name;

    /** @return why a namespace cannot be made here, or null when it can */
    static String unavailableReason() {
        if (!"root".equals(System.getProperty("user.name"))) {
            return "needs root (network namespaces and nftables); running as " + System.getProperty("user.name");
        }
        for (final String tool : new String[] {"ip", "nft"}) {
            try {
                if (run(tool, "-V").exit != 0) {
                    return tool + " -V failed";
                }
            } catch (final IOException ex) {
                return "no " + tool + " command: " + ex.getMessage();
            }
        }
        return null;
    }

    NetworkNamespace(final String prefix) throws IOException {
        name = prefix + String.format(Locale.ROOT, "%06x", ThreadLocalRandom.current().nextInt(1 << 24));
        must("ip", "netns", "add", name);
        try {
            must("ip", "netns", "exec", name, "ip", "link", "set", "lo", "up");
        } catch (final IOException ex) {
            close();
            throw ex;
        }
    }

    /** Runs {@code nft} with {@code args} inside the namespace. */
    void nft(final String... args) throws IOException {
        inside("nft", args);
    }

    /** Runs {@code tc} with {@code args} inside the namespace (e.g. a qdisc on its {@code lo}). */
    void tc(final String... args) throws IOException {
        inside("tc", args);
    }

    /** @return why {@code tc} cannot be used here, or null when it can */
    static String tcUnavailableReason() {
        try {
            return run("tc", "-V").exit == 0 ? null : "tc -V failed";
        } catch (final IOException ex) {
            return "no tc command: " + ex.getMessage();
        }
    }

    private void inside(final String tool, final String... args) throws IOException {
        final List<String> command = new ArrayList<>(List.of("ip", "netns", "exec", name, tool));
        command.addAll(List.of(args));
        must(command.toArray(new String[0]));
    }

    /** Code that runs inside the namespace. */
    interface Body {
        void run() throws Throwable;
    }

    /**
     * Runs {@code body} on a thread of its own moved into the namespace (sockets it opens, and
     * threads it starts, live there) and waits for it.
     */
    void runInside(final String threadName, final long timeoutSeconds, final Body body) throws Exception {
        final java.util.concurrent.CompletableFuture<Void> done = new java.util.concurrent.CompletableFuture<>();
        final Thread owner = new Thread(() -> {
            try {
                enter();
                body.run();
                done.complete(null);
            } catch (final Throwable t) {
                done.completeExceptionally(t);
            }
        }, threadName);
        owner.start();
        try {
            done.get(timeoutSeconds, TimeUnit.SECONDS);
        } catch (final java.util.concurrent.ExecutionException ex) {
            if (ex.getCause() instanceof Error e) {
                throw e;
            }
            throw ex.getCause() instanceof Exception e ? e : ex;
        }
    }

    /** Moves the calling thread into the namespace (for good: use a thread of its own). */
    void enter() throws Throwable {
        final Linker linker = Linker.nativeLinker();
        final MethodHandle open = linker.downcallHandle(linker.defaultLookup().find("open").orElseThrow(),
            FunctionDescriptor.of(JAVA_INT, ValueLayout.ADDRESS, JAVA_INT));
        final MethodHandle setns = linker.downcallHandle(linker.defaultLookup().find("setns").orElseThrow(),
            FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT));
        try (Arena arena = Arena.ofConfined()) {
            final int fd = (int) open.invokeExact(arena.allocateFrom("/var/run/netns/" + name), O_RDONLY);
            if (fd < 0) {
                throw new IOException("cannot open /var/run/netns/" + name);
            }
            if ((int) setns.invokeExact(fd, CLONE_NEWNET) != 0) {
                throw new IOException("setns into " + name + " failed");
            }
        }
    }

    @Override
    public void close() {
        try {
            run("ip", "netns", "del", name);
        } catch (final IOException ex) {
            System.err.println("cannot delete network namespace " + name + ": " + ex);
        }
    }

    private record Result(int exit, String output) {
    }

    private static void must(final String... command) throws IOException {
        final Result r = run(command);
        if (r.exit != 0) {
            throw new IOException(String.join(" ", command) + " failed (exit " + r.exit + "): " + r.output);
        }
    }

    private static Result run(final String... command) throws IOException {
        final Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        try {
            if (!p.waitFor(10, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new IOException(String.join(" ", command) + " did not finish in 10 s");
            }
            return new Result(p.exitValue(), new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8));
        } catch (final InterruptedException ex) {
            Thread.currentThread().interrupt();
            throw new IOException(ex);
        }
    }
}
