// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.cli.faults;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * Two hosts on one machine: a server and a client network namespace joined by a veth pair, with
 * addresses 10.203.N.1 (server) and 10.203.N.2 (client) that exist only inside them. Faults put in
 * a namespace (nftables rules, see {@link InputFilter}) touch only the traffic between the two, and
 * rules others put on the root namespace's {@code lo} do not touch it. Closing deletes both
 * namespaces, and with them the veth pair and every nftables table in them.
 */
public final class TwoHosts implements AutoCloseable {
    static final long COMMAND_TIMEOUT_S = 10;

    /** The server's namespace, interface and address. */
    public final String serverNs;
    public final String serverIf;
    public final String serverAddress;
    /** The client's namespace, interface and address. */
    public final String clientNs;
    public final String clientIf;
    public final String clientAddress;

    /** What a command printed and returned. */
    public record Output(int exit, String out, String err) {
        @Override
        public String toString() {
            return "exit " + exit + (out.isBlank() ? "" : "\n--- stdout\n" + out) + (err.isBlank() ? "" : "\n--- stderr\n" + err);
        }
    }

    /**
     * Creates the namespaces and the link.
     *
     * @throws IOException when a command cannot be started or fails (what was made is deleted)
     */
    public TwoHosts() throws IOException {
        final ThreadLocalRandom r = ThreadLocalRandom.current();
        final String id = String.format(Locale.ROOT, "%06x", r.nextInt(1 << 24));
        final int subnet = 1 + r.nextInt(254);
        serverNs = "mrfS-" + id;
        clientNs = "mrfC-" + id;
        serverIf = "mrfS" + id;
        clientIf = "mrfC" + id;
        serverAddress = "10.203." + subnet + ".1";
        clientAddress = "10.203." + subnet + ".2";
        try {
            must("ip", "netns", "add", serverNs);
            must("ip", "netns", "add", clientNs);
            must("ip", "link", "add", serverIf, "type", "veth", "peer", "name", clientIf);
            must("ip", "link", "set", serverIf, "netns", serverNs);
            must("ip", "link", "set", clientIf, "netns", clientNs);
            must("ip", "-n", serverNs, "addr", "add", serverAddress + "/24", "dev", serverIf);
            must("ip", "-n", clientNs, "addr", "add", clientAddress + "/24", "dev", clientIf);
            for (final String[] nsIf : new String[][] {{serverNs, serverIf}, {clientNs, clientIf}}) {
                must("ip", "-n", nsIf[0], "link", "set", "lo", "up");
                must("ip", "-n", nsIf[0], "link", "set", nsIf[1], "up");
            }
        } catch (final IOException | RuntimeException ex) {
            close();
            throw ex;
        }
    }

    /**
     * @return null when this machine can run two hosts with nftables faults (root, {@code ip netns},
     *     {@code nft} in a namespace), else why not
     */
    public static String unavailableReason() {
        try {
            if (!run("id", "-u").out().trim().equals("0")) {
                return "needs root (network namespaces and nftables)";
            }
            try (TwoHosts probe = new TwoHosts()) {
                final Output nft = run("ip", "netns", "exec", probe.serverNs, "nft", "list", "ruleset");
                if (nft.exit() != 0) {
                    return "nft does not work in a network namespace: " + nft;
                }
            }
            return null;
        } catch (final IOException | RuntimeException ex) {
            return "needs iproute2 (ip netns) and nftables (nft): " + ex.getMessage();
        }
    }

    /** Runs a short command to completion (bounded), capturing its output. */
    public static Output run(final String... command) throws IOException {
        return run(COMMAND_TIMEOUT_S, command);
    }

    /**
     * Runs a command to completion, capturing its output; one that outlives {@code timeoutS} is
     * destroyed and reported with exit code -1.
     */
    public static Output run(final long timeoutS, final String... command) throws IOException {
        final Path out = Files.createTempFile("mrf", ".out");
        final Path err = Files.createTempFile("mrf", ".err");
        try {
            final Process p = new ProcessBuilder(command).redirectOutput(out.toFile()).redirectError(err.toFile())
                .start();
            try {
                if (!p.waitFor(timeoutS, TimeUnit.SECONDS)) {
                    p.destroyForcibly();
                    p.waitFor(5, TimeUnit.SECONDS);
                    return new Output(-1, read(out), read(err) + "\n(timed out after " + timeoutS + " s)");
                }
            } catch (final InterruptedException ex) {
                p.destroyForcibly();
                Thread.currentThread().interrupt();
                throw new IOException("interrupted: " + String.join(" ", command), ex);
            }
            return new Output(p.exitValue(), read(out), read(err));
        } finally {
            Files.deleteIfExists(out);
            Files.deleteIfExists(err);
        }
    }

    /** Runs a command that must succeed. */
    public static void must(final String... command) throws IOException {
        final Output r = run(command);
        if (r.exit() != 0) {
            throw new IOException(String.join(" ", command) + " failed: " + r);
        }
    }

    /** Sets the MTU of both ends of the veth pair (jumbo frames, as an RDMA fabric has). */
    public void linkMtu(final int mtu) throws IOException {
        must("ip", "-n", serverNs, "link", "set", serverIf, "mtu", Integer.toString(mtu));
        must("ip", "-n", clientNs, "link", "set", clientIf, "mtu", Integer.toString(mtu));
    }

    /** Runs {@code nft args...} inside namespace {@code ns}, capturing its output. */
    public static Output nft(final String ns, final String... args) throws IOException {
        final String[] command = new String[args.length + 5];
        command[0] = "ip";
        command[1] = "netns";
        command[2] = "exec";
        command[3] = ns;
        command[4] = "nft";
        System.arraycopy(args, 0, command, 5, args.length);
        return run(command);
    }

    /** Runs {@code nft args...} inside namespace {@code ns}; it must succeed. */
    public static void mustNft(final String ns, final String... args) throws IOException {
        final Output r = nft(ns, args);
        if (r.exit() != 0) {
            throw new IOException("nft " + String.join(" ", args) + " in " + ns + " failed: " + r);
        }
    }

    /** @return {@code command} run inside namespace {@code ns} */
    public static List<String> inNamespace(final String ns, final List<String> command) {
        final List<String> c = new ArrayList<>(List.of("ip", "netns", "exec", ns));
        c.addAll(command);
        return c;
    }

    static String read(final Path p) {
        try {
            return Files.readString(p, StandardCharsets.UTF_8);
        } catch (final IOException ex) {
            return "(unreadable: " + ex + ")";
        }
    }

    /**
     * Datagrams the kernels of both hosts dropped because a receiving socket's buffer was full
     * (UDP {@code RcvbufErrors} of each namespace): loss as real as a drop rule's, which a run on a
     * loaded machine can meet without any fault injected.
     *
     * @return the sum over both namespaces since they were created
     */
    public long receiveBufferErrors() throws IOException {
        long sum = 0;
        for (final String ns : new String[] {serverNs, clientNs}) {
            final Output r = run("ip", "netns", "exec", ns, "cat", "/proc/net/snmp");
            final String[] lines = r.out().split("\n");
            for (int i = 0; i + 1 < lines.length; i++) {
                if (lines[i].startsWith("Udp: ") && lines[i + 1].startsWith("Udp: ")) {
                    final List<String> names = List.of(lines[i].trim().split("\\s+"));
                    final String[] values = lines[i + 1].trim().split("\\s+");
                    final int at = names.indexOf("RcvbufErrors");
                    if (at > 0 && at < values.length) {
                        sum += Long.parseLong(values[at]);
                    }
                    break;
                }
            }
        }
        return sum;
    }

    /** Deletes both namespaces (each takes its veth end, its nftables tables and its sockets along). */
    @Override
    public void close() {
        for (final String ns : new String[] {serverNs, clientNs}) {
            try {
                if (run("ip", "netns", "list").out().contains(ns)) {
                    run("ip", "netns", "del", ns);
                }
            } catch (final IOException ex) {
                // Best effort: also runs from a shutdown hook.
            }
        }
        try {
            // Setup failed before the move into the namespaces: the pair is still here.
            if (run("ip", "link", "show", serverIf).exit() == 0) {
                run("ip", "link", "del", serverIf);
            }
        } catch (final IOException ex) {
            // Best effort.
        }
    }
}
