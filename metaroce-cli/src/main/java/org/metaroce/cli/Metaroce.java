// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.cli;

import java.io.PrintWriter;

import org.metaroce.cli.collectives.CollectivePerfCommand;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.IVersionProvider;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * The {@code metaroce} command: perftest-style tools over MetaRoCE (RDMA over UDP) and raw UDP
 * baselines through the same driver.
 *
 * <p>Exit codes: 0 success, 1 the run failed (unreachable server, error completion, failed
 * verification), 2 bad arguments.
 */
@Command(name = "metaroce", mixinStandardHelpOptions = true, versionProvider = Metaroce.Version.class,
    description = {"perftest-style tools for MetaRoCE, the open RDMA transport over UDP.", "",
        "Run a tool without an address to be the server, with the server's address to be the client, "
            + "or with --loopback for both ends in one process."},
    footer = {"", "Example: metaroce write_bw --loopback", "See docs/perftest.md for the options and the output."})
public final class Metaroce implements Runnable {
    @Spec
    CommandSpec spec;

    @Override
    public void run() {
        throw new ParameterException(spec.commandLine(), "missing tool: one of " + String.join(", ",
            spec.commandLine().getSubcommands().keySet()));
    }

    /** @return the command line with every tool as a subcommand */
    public static CommandLine commandLine() {
        final CommandLine cl = new CommandLine(new Metaroce());
        for (final TestKind kind : TestKind.values()) {
            final CommandLine sub = new CommandLine(new PerfCommand(kind));
            final CommandSpec spec = sub.getCommandSpec();
            spec.usageMessage().description(description(kind));
            spec.usageMessage().footer("", "Server: metaroce " + kind.command + "    Client: metaroce " + kind.command
                + " SERVER    Both ends here: metaroce " + kind.command + " --loopback");
            cl.addSubcommand(kind.command, sub);
        }
        cl.addSubcommand("agent", new org.metaroce.cli.conformance.AgentCommand());
        cl.addSubcommand("conformance", new org.metaroce.cli.conformance.ConformanceCommand());
        cl.addSubcommand("proxy", new org.metaroce.cli.conformance.ProxyCommand());
        cl.addSubcommand("all_reduce_perf", CollectivePerfCommand.commandLine("all_reduce_perf"));
        cl.addSubcommand("all_gather_perf", CollectivePerfCommand.commandLine("all_gather_perf"));
        cl.addSubcommand("reduce_scatter_perf", CollectivePerfCommand.commandLine("reduce_scatter_perf"));
        cl.addSubcommand("broadcast_perf", CollectivePerfCommand.commandLine("broadcast_perf"));
        cl.addSubcommand("all_to_all_perf", CollectivePerfCommand.commandLine("all_to_all_perf"));
        cl.addSubcommand("sim", new CommandLine(new org.metaroce.cli.sim.SimCommand()));
        cl.addSubcommand("faults", new CommandLine(new org.metaroce.cli.faults.FaultsCommand()));
        cl.addSubcommand("incast", new CommandLine(new org.metaroce.cli.incast.IncastCommand()));
        cl.addSubcommand("stat", new CommandLine(new org.metaroce.cli.stat.StatCommand()));
        cl.addSubcommand("trace", new CommandLine(new org.metaroce.cli.stat.TraceCommand()));
        // One line that names the problem and where the options are, instead of the whole usage
        // (up to 130 lines) that scrolled the error away.
        cl.setParameterExceptionHandler((ex, args) -> {
            final CommandLine at = ex.getCommandLine();
            final PrintWriter err = at.getErr();
            err.println(at.getCommandSpec().qualifiedName() + ": " + ex.getMessage());
            CommandLine.UnmatchedArgumentException.printSuggestions(ex, err);
            err.println("Try '" + at.getCommandSpec().qualifiedName() + " --help' for the options.");
            err.flush();
            return 2;
        });
        cl.setExecutionExceptionHandler((ex, commandLine, parseResult) -> {
            final PrintWriter err = commandLine.getErr();
            if (ex instanceof BenchException) {
                err.println(commandLine.getCommandSpec().qualifiedName() + ": " + ex.getMessage());
            } else {
                err.println(commandLine.getCommandSpec().qualifiedName() + ": unexpected error: " + ex);
                ex.printStackTrace(err);
            }
            err.flush();
            return 1;
        });
        return cl;
    }

    private static String[] description(final TestKind kind) {
        final String what = switch (kind) {
            case WRITE_BW -> "RDMA WRITE bandwidth: the client writes into the server's memory, tx-depth "
                + "work requests outstanding per queue pair.";
            case READ_BW -> "RDMA READ bandwidth: the client reads the server's memory.";
            case SEND_BW -> "SEND bandwidth: the client sends into receives the server keeps posted.";
            case WRITE_LAT -> "RDMA WRITE latency: WRITE_WITH_IMM ping-pong, half the round trip reported. "
                + "(MetaRoCE places packets out of order, so the last byte is no completion signal: the "
                + "immediate's receive completion is.)";
            case READ_LAT -> "RDMA READ latency: one READ at a time, post to completion.";
            case SEND_LAT -> "SEND latency: ping-pong, half the round trip reported.";
            case ATOMIC_LAT -> "Atomic latency: one FETCH_ADD (or CMP_SWAP with -A) at a time.";
            case RAW_UDP_BW -> "Baseline: plain datagrams of --mtu payload bytes through the same driver "
                + "(transport, batching, GSO, threads, idle strategy) without the protocol; the bandwidth is "
                + "what the server received.";
            case RAW_UDP_LAT -> "Baseline: ping-pong of plain datagrams through the same driver without the "
                + "protocol, half the round trip reported.";
        };
        return new String[] {what};
    }

    public static void main(final String[] args) {
        tuneNettyAllocator();
        System.exit(commandLine().execute(args));
    }

    /** Largest buffer Netty's per-thread pool caches, unless the user chose a value. */
    static final String MAX_CACHED_BUFFER_CAPACITY = "io.netty.allocator.maxCachedBufferCapacity";

    /**
     * A device's receive buffer (recvmmsg batch of 32 slots of 8320 B, 266 KB) is larger than the
     * 32 KiB Netty's pooled allocator caches per thread by default, so every batch went through the
     * shared arena's locked allocate and free. Caching up to 512 KiB per thread raised write_bw on
     * loopback by about 5% (three paired runs). Must run before Netty's allocator class loads.
     */
    static void tuneNettyAllocator() {
        if (System.getProperty(MAX_CACHED_BUFFER_CAPACITY) == null) {
            System.setProperty(MAX_CACHED_BUFFER_CAPACITY, Integer.toString(512 * 1024));
        }
    }

    /** The version of the jar's manifest. */
    static final class Version implements IVersionProvider {
        @Override
        public String[] getVersion() {
            final String v = Metaroce.class.getPackage().getImplementationVersion();
            return new String[] {"metaroce " + (v != null ? v : "(development build)")};
        }
    }
}
