// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.cli;

import java.io.PrintWriter;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

import org.metaroce.netty.DeviceConfig;
import org.metaroce.netty.MetaRoceDevice;
import org.metaroce.netty.SharedDriver;
import org.metaroce.netty.Transport;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * One perftest-style tool: {@code metaroce <tool>} runs the server, {@code metaroce <tool> HOST}
 * the client, {@code metaroce <tool> --loopback} both in this process.
 */
@Command(mixinStandardHelpOptions = true, sortOptions = false, usageHelpAutoWidth = true)
final class PerfCommand implements Callable<Integer> {
    /** Largest message (and slot) size: 1 GiB. */
    static final int MAX_SIZE = 1 << 30;
    /** Default {@code --margin} in duration mode: long enough for the JIT to compile the data path. */
    static final long DEFAULT_MARGIN_NS = 1_000_000_000L;

    private final TestKind kind;

    @Spec
    CommandSpec spec;

    @Parameters(index = "0", arity = "0..1", paramLabel = "SERVER",
        description = "Address of the server (client mode). Without it this process is the server.")
    String serverHost;

    @Option(names = {"-p", "--port"}, defaultValue = "4796", paramLabel = "PORT",
        description = "UDP endpoint port of the server (default: ${DEFAULT-VALUE}).")
    int port;

    @Option(names = "--loopback",
        description = "Run server and client in this process: two devices on 127.0.0.1, ephemeral ports.")
    boolean loopback;

    @Option(names = {"-s", "--size"}, paramLabel = "BYTES",
        description = "Message size in bytes (default: 65536 for bandwidth tests, 64 for latency tests, "
            + "8 for atomic_lat).")
    Integer size;

    @ArgGroup(exclusive = true, multiplicity = "0..1")
    RunLength runLength;

    /** -n and -D exclude each other. */
    static final class RunLength {
        @Option(names = {"-n", "--iters"}, required = true, paramLabel = "N",
            description = "Measured iterations per queue pair (default: 5000 for bandwidth tests, 1000 for "
                + "latency tests).")
        Long iterations;

        @Option(names = {"-D", "--duration"}, required = true, paramLabel = "SECONDS",
            description = "Measure for this many seconds instead of a number of iterations.")
        Double duration;
    }

    @Option(names = "--margin", paramLabel = "SECONDS",
        description = "With -D: run this long after the warm-up iterations and discard what it measured, as "
            + "perftest's --margin does, so the JIT's warm-up stays out of the averages (default: 1; 0 = none).")
    Double margin;

    @Option(names = {"-w", "--warmup"}, paramLabel = "N",
        description = "Iterations per queue pair run before measuring, to warm up the JIT (default: 1000; 0 = none).")
    Long warmup;

    @Option(names = {"-q", "--qp"}, defaultValue = "1", paramLabel = "N",
        description = "Number of queue pairs (bandwidth tests; default: ${DEFAULT-VALUE}).")
    int qps;

    @Option(names = {"-m", "--mtu"}, paramLabel = "BYTES",
        description = "Path MTU: 256, 512, 1024, 2048, 4096 or 8192 (default: the largest up to 4096 whose "
            + "datagrams fit the link towards the server without IP fragmentation; the two ends use the smaller "
            + "of their values).")
    Integer mtu;

    @Option(names = "--paths", defaultValue = "4", paramLabel = "N",
        description = "Entropy paths per queue pair: UDP source ports the packets are sprayed over "
            + "(default: ${DEFAULT-VALUE}).")
    int paths;

    @Option(names = {"-t", "--tx-depth"}, paramLabel = "N",
        description = "Outstanding work requests per queue pair (default: 128 for bandwidth tests, "
            + "1 for latency tests).")
    Integer txDepth;

    @Option(names = {"-r", "--rx-depth"}, defaultValue = "512", paramLabel = "N",
        description = "Receives the send_bw server keeps posted per queue pair (default: ${DEFAULT-VALUE}).")
    int rxDepth;

    @Option(names = "--verify", description = "Fill the source with a deterministic pattern and check every "
        + "byte of the destination after the run (every answer of the latency tests).")
    boolean verify;

    @Option(names = "--json", description = "Print the result as one JSON object instead of tables.")
    boolean json;

    @Option(names = "--transport", defaultValue = "auto", paramLabel = "native|epoll|nio|auto",
        description = "Datagram transport (default: ${DEFAULT-VALUE}: native on Linux with JDK 22+, else epoll when "
            + "available, else nio; a fallback from native is logged with its reason).")
    String transport;

    @Option(names = "--mode", defaultValue = "invoker", paramLabel = "invoker|dedicated|shared",
        description = "Threading mode of the driver: invoker (the benchmark thread drives its device; "
            + "lowest latency), dedicated (a driver thread per device), shared (one driver thread for all "
            + "devices). Default: ${DEFAULT-VALUE}.")
    String mode;

    @Option(names = "--idle", paramLabel = "spin|backoff|block",
        description = "How threads wait for work: spin, backoff (spin, yield, then park up to 100 us) or block "
            + "(drivers block in epoll_wait/select; a benchmark thread that drives one INVOKER device blocks in its "
            + "awaitWork, up to 1 ms at a time; others park up to 1 ms). Default: latency tests "
            + "spin when the busy threads fit the processors; bandwidth tests spin only when a processor stays free "
            + "for the kernel's packet processing; otherwise backoff.")
    String idle;

    @Option(names = "--loopback-threads", paramLabel = "1|2",
        description = "With --loopback in invoker mode: 1 thread drives both ends, 2 one each "
            + "(default: 2 on machines with 2 or more processors).")
    Integer loopbackThreads;

    @Option(names = "--bind", paramLabel = "ADDRESS",
        description = "Local address to bind (default: 0.0.0.0, or :: for an IPv6 server address).")
    String bind;

    @Option(names = {"-u", "--qp-timeout"}, defaultValue = "14", paramLabel = "EXP",
        description = "Queue pair timeout as perftest's (and its default): the retransmission timer's floor is "
            + "4.096 us x 2^EXP (default: ${DEFAULT-VALUE}, 67 ms; 1..20). Loss recovery does not wait for it (tail "
            + "probes and time-based detection act within round trips); it only decides when a silence is worth a "
            + "blind retransmission. How long a silent peer is waited for is --retry-timeout. Before a queue "
            + "pair's first RTT sample the timer waits at least 250 ms.")
    int qpTimeoutExponent;

    @Option(names = "--retry-timeout", defaultValue = "15", paramLabel = "SECONDS",
        description = "RETRY_TIMEOUT: how long a queue pair keeps retrying without progress, and waits for a silent "
            + "peer, before it fails with RETRY_EXC_ERR (default: ${DEFAULT-VALUE}; 0 = the retry count alone "
            + "decides, as in verbs, and a stall of about a second ends the run). A peer stopped for less "
            + "(a GC pause, a busy host) is waited for; one dead for longer is given up on within this + 0.1 s.")
    double retryTimeout;

    @Option(names = "--cc", paramLabel = "default|fixed|dcqcn|credit",
        description = "Congestion control of the data queue pairs (CC_ALGORITHM, spec section 8). Default: the "
            + "endpoint's, which is DEFAULT with ECN where the transport reads the ECN field (native), and FIXED "
            + "with a CC_FALLBACK where it does not [CC-034]. dcqcn needs ECN (native transport on both ends); "
            + "credit offers the RECEIVER_CREDIT capability. The result table shows what ran.")
    String cc;

    @Option(names = {"-F", "--CPU-freq"}, description = "Accepted as perftest accepts it. perftest counts CPU "
        + "cycles and -F lets it run when the frequency varies; MetaRoCE times with the monotonic clock, so there "
        + "is nothing to check.")
    boolean cpuFrequencyIgnored;

    @Option(names = "--report_gbits", description = "Accepted as perftest accepts it: bandwidth is always reported "
        + "in Gb/s.")
    boolean reportGbits;

    @Option(names = "--output", paramLabel = "bandwidth|message_rate|latency",
        description = "Print only this figure, as perftest does for scripts: bandwidth (average Gb/s) or "
            + "message_rate (Mpps) for bandwidth tests, latency (typical usec) for latency tests.")
    String output;

    @Option(names = {"-I", "--inline_size"}, paramLabel = "BYTES", hidden = true)
    Integer inlineSize;

    @Option(names = {"-l", "--post_list"}, paramLabel = "N", hidden = true)
    Integer postList;

    @Option(names = {"-a", "--all"}, hidden = true)
    boolean allSizes;

    @Option(names = "--run_infinitely", hidden = true)
    boolean runInfinitely;

    /** Whether the client printed the table's header when its connections came up. */
    private volatile boolean headerPrinted;

    @Option(names = "--timeout", defaultValue = "3", paramLabel = "SECONDS",
        description = "Connect timeout: give up when the server does not answer (default: ${DEFAULT-VALUE}).")
    double timeout;

    @Option(names = "--gso", negatable = true, defaultValue = "true", fallbackValue = "true",
        description = "UDP segmentation offload on the send path (epoll; default: on).")
    boolean gso;

    @Option(names = "--burst", paramLabel = "PACKETS",
        description = "Packets a queue pair sends on one path before it picks the next (burst spraying, MP-020; "
            + "1 = per-packet spraying). Default with GSO: what one segmented send holds (15 at MTU 4096, 7 at "
            + "8192, at most 16), else 1.")
    Integer burst;

    @Option(names = "--gro", negatable = true,
        description = "UDP receive offload on the endpoint socket (default: on with the native transport, off with "
            + "epoll and nio).")
    Boolean gro;

    @Option(names = {"-A", "--atomic-type"}, defaultValue = "FETCH_AND_ADD", paramLabel = "CMP_AND_SWAP|FETCH_AND_ADD",
        description = "atomic_lat: the operation (default: ${DEFAULT-VALUE}).")
    String atomicType;

    @Option(names = "--progress", negatable = true, defaultValue = "true", fallbackValue = "true",
        description = "Print a progress line on stderr once per second during long runs (default: on).")
    boolean progress;

    @Option(names = "--counters",
        description = "At the end, also when the run failed, print the counters of each end's driver, endpoint, wire "
            + "and connection manager on stderr (with --json as --counters-json does).")
    boolean counters;

    // A separate flag, not --counters=json: an optional value would swallow a SERVER after --counters.
    @Option(names = "--counters-json",
        description = "Print the counters as --counters does, as one JSON line per end: "
            + "{\"counters\":\"client\",\"outcome\":\"ok|failed\",\"retransmits\":N,\"endpoint\":{...},...}.")
    boolean countersJson;

    @Option(names = "--pcap", paramLabel = "FILE",
        description = "Record every MetaRoCE packet of this end (with --loopback: of both ends) into a pcap file, one "
            + "record per packet as on the wire, for Wireshark with docs/wireshark/metaroce.lua.")
    java.nio.file.Path pcap;

    @picocli.CommandLine.Mixin
    CaptureLimits captureLimits;

    PerfCommand(final TestKind kind) {
        this.kind = kind;
    }

    TestKind kind() {
        return kind;
    }

    // ------------------------------------------------------------------ validation

    private ParameterException bad(final String message) {
        return new ParameterException(spec.commandLine(), message);
    }

    private static boolean validMtu(final int mtu) {
        return mtu >= 256 && mtu <= 8192 && Integer.bitCount(mtu) == 1;
    }

    BenchConfig resolve() {
        if (loopback && serverHost != null) {
            throw bad("--loopback runs both ends in this process: do not give a SERVER address");
        }
        refuseUnsupportedPerftestOptions();
        final int resolvedSize = size != null ? size : kind.defaultSize();
        if (resolvedSize < 1 || resolvedSize > MAX_SIZE) {
            throw bad("-s/--size must be in 1.." + MAX_SIZE + " bytes (got " + resolvedSize + ")");
        }
        if (kind == TestKind.ATOMIC_LAT && resolvedSize != 8) {
            throw bad("-s/--size: atomic_lat works on 8-byte operands (got " + resolvedSize + ")");
        }
        long iterations = kind.defaultIterations();
        long durationNs = 0;
        if (runLength != null && runLength.iterations != null) {
            iterations = runLength.iterations;
            if (iterations < 1) {
                throw bad("-n/--iters must be at least 1 (got " + iterations + ")");
            }
        } else if (runLength != null && runLength.duration != null) {
            final double d = runLength.duration;
            if (!(d > 0) || d > 1_000_000) {
                throw bad("-D/--duration must be a positive number of seconds (got " + d + ")");
            }
            iterations = -1;
            durationNs = (long) (d * 1e9);
        }
        long marginNs = 0;
        if (margin != null) {
            if (durationNs == 0) {
                throw bad("--margin applies to duration mode only: give -D/--duration too");
            }
            if (!(margin >= 0) || margin > 3600) {
                throw bad("--margin must be between 0 and 3600 seconds (got " + margin + ")");
            }
            marginNs = (long) (margin * 1e9);
        } else if (durationNs > 0) {
            marginNs = DEFAULT_MARGIN_NS;
        }
        final long resolvedWarmup = warmup != null ? warmup : 1000;
        if (resolvedWarmup < 0) {
            throw bad("-w/--warmup must be >= 0 (got " + resolvedWarmup + ")");
        }
        if (qps < 1 || qps > 256) {
            throw bad("-q/--qp must be in 1..256 (got " + qps + ")");
        }
        if (qps != 1 && !kind.bandwidth) {
            throw bad("-q/--qp applies to bandwidth tests; " + kind.command + " uses one queue pair");
        }
        if (qps != 1 && kind.raw) {
            throw bad("-q/--qp: " + kind.command + " has no queue pairs");
        }
        if (mtu != null && !validMtu(mtu)) {
            throw bad("--mtu must be one of 256, 512, 1024, 2048, 4096, 8192 (got " + mtu + ")");
        }
        if (paths < 1 || paths > 255) {
            throw bad("--paths must be in 1..255 (got " + paths + ")");
        }
        final int depth = txDepth != null ? txDepth : kind.defaultTxDepth();
        if (depth < 1 || depth > 1024) {
            throw bad("-t/--tx-depth must be in 1..1024 (got " + depth + ")");
        }
        if (rxDepth < 1 || rxDepth > 16384) {
            throw bad("-r/--rx-depth must be in 1..16384 (got " + rxDepth + ")");
        }
        if (verify && kind.raw) {
            throw bad("--verify: " + kind.command + " sends plain datagrams without a protocol; nothing to verify");
        }
        if ((long) qps * resolvedSize > MAX_SIZE) {
            throw bad("-s/--size x -q/--qp must not exceed " + MAX_SIZE + " bytes (got "
                + (long) qps * resolvedSize + ")");
        }
        final int serverPortMin = serverHost == null && !loopback ? 0 : 1;
        if (port < serverPortMin || port > 65535) {
            throw bad("-p/--port must be in " + serverPortMin + "..65535 (got " + port + ")");
        }
        if (!(retryTimeout >= 0 && retryTimeout <= 3600)) {
            throw bad("--retry-timeout must be 0..3600 seconds (got " + retryTimeout + ")");
        }
        final org.metaroce.core.congestion.CongestionControlAlgorithm resolvedCc;
        if (cc == null) {
            resolvedCc = null;
        } else {
            resolvedCc = switch (cc.toLowerCase(Locale.ROOT)) {
                case "default" -> org.metaroce.core.congestion.CongestionControlAlgorithm.DEFAULT;
                case "fixed" -> org.metaroce.core.congestion.CongestionControlAlgorithm.FIXED;
                case "dcqcn" -> org.metaroce.core.congestion.CongestionControlAlgorithm.DCQCN;
                case "credit" -> org.metaroce.core.congestion.CongestionControlAlgorithm.RECEIVER_CREDIT;
                default -> throw bad("--cc must be default, fixed, dcqcn or credit (got " + cc + ")");
            };
        }
        if (qpTimeoutExponent < 1 || qpTimeoutExponent > 20) {
            throw bad("--qp-timeout must be in 1..20 (got " + qpTimeoutExponent + ")");
        }
        if (!(timeout > 0) || timeout > 3600) {
            throw bad("--timeout must be in (0, 3600] seconds (got " + timeout + ")");
        }
        final Transport resolvedTransport;
        try {
            resolvedTransport = Transport.parse(transport);
        } catch (final IllegalArgumentException ex) {
            throw bad("--transport must be native, epoll, nio or auto (got " + transport + ")");
        }
        if (resolvedTransport == Transport.NATIVE && !org.metaroce.netty.linux.NativeUdp.isAvailable()) {
            throw bad("--transport native: " + org.metaroce.netty.linux.NativeUdp.unavailabilityReason().orElse("")
                + " (or use --transport epoll, nio or auto)");
        }
        final BenchConfig.Mode resolvedMode;
        try {
            resolvedMode = BenchConfig.Mode.valueOf(mode.toLowerCase(Locale.ROOT));
        } catch (final IllegalArgumentException ex) {
            throw bad("--mode must be invoker, dedicated or shared (got " + mode + ")");
        }
        final int cores = Runtime.getRuntime().availableProcessors();
        final int threads = loopbackThreads != null ? loopbackThreads : cores >= 2 ? 2 : 1;
        if (threads < 1 || threads > 2) {
            throw bad("--loopback-threads must be 1 or 2 (got " + threads + ")");
        }
        final int busyThreads = switch (resolvedMode) {
            case invoker -> loopback ? threads : 1;
            case dedicated -> (loopback ? 2 : 1) + 1;
            case shared -> 2;
        };
        final BenchConfig.Idle resolvedIdle;
        if (idle == null) {
            // Latency tests spin while the busy threads fit the cores. Bandwidth tests also need a
            // core for the kernel's packet processing (on loopback it runs in softirq on the same
            // CPUs): with every core spinning, write_bw --loopback on 2 cores fell from ~13 to
            // ~6 Gb/s, so they spin only when a core stays free.
            final boolean spin = kind.bandwidth ? busyThreads < cores : busyThreads <= cores;
            resolvedIdle = spin ? BenchConfig.Idle.spin : BenchConfig.Idle.backoff;
        } else {
            try {
                resolvedIdle = BenchConfig.Idle.valueOf(idle.toLowerCase(Locale.ROOT));
            } catch (final IllegalArgumentException ex) {
                throw bad("--idle must be spin, backoff or block (got " + idle + ")");
            }
        }
        if (kind != TestKind.ATOMIC_LAT && spec.commandLine().getParseResult() != null
            && spec.commandLine().getParseResult().hasMatchedOption("--atomic-type")) {
            throw bad("-A/--atomic-type applies to atomic_lat only; " + kind.command + " does not use it");
        }
        final boolean compareSwap;
        switch (atomicType.toUpperCase(Locale.ROOT)) {
            case "FETCH_AND_ADD" -> compareSwap = false;
            case "CMP_AND_SWAP" -> compareSwap = true;
            default -> throw bad("-A/--atomic-type must be CMP_AND_SWAP or FETCH_AND_ADD (got " + atomicType + ")");
        }
        InetSocketAddress server = null;
        InetAddress serverAddress = null;
        if (serverHost != null) {
            try {
                serverAddress = InetAddress.getByName(serverHost);
            } catch (final UnknownHostException ex) {
                throw bad("SERVER: unknown host " + serverHost);
            }
            server = new InetSocketAddress(serverAddress, port);
        }
        InetAddress bindAddress;
        try {
            if (bind != null) {
                bindAddress = InetAddress.getByName(bind);
            } else if (loopback) {
                bindAddress = InetAddress.getByName("127.0.0.1");
            } else if (serverAddress instanceof java.net.Inet6Address) {
                bindAddress = InetAddress.getByName("::");
            } else {
                bindAddress = InetAddress.getByName("0.0.0.0");
            }
        } catch (final UnknownHostException ex) {
            throw bad("--bind: unknown address " + bind);
        }
        final Transport concrete;
        try {
            concrete = resolvedTransport.resolve();
        } catch (final IllegalStateException ex) {
            throw new BenchException(ex.getMessage());
        }
        if (burst != null && (burst < 1 || burst > 64)) {
            throw bad("--burst must be 1..64 packets (got " + burst + ")");
        }
        // No IP fragmentation [ENC-021]: size packets to the link towards the server (the server
        // offers the preferred size and the client's smaller value wins in the negotiation).
        final int resolvedMtu = mtu != null ? mtu
            : serverAddress != null ? LinkMtu.towards(serverAddress) : LinkMtu.PREFERRED;
        // With GSO a burst is what one segmented send holds, so that no burst leaves a lone datagram.
        final int resolvedBurst = burst != null ? burst : gso ? DeviceConfig.packetsPerGsoWrite(resolvedMtu) : 1;
        return new BenchConfig(kind, resolvedSize, iterations, durationNs, marginNs, resolvedWarmup, qps, resolvedMtu, paths, depth,
            rxDepth, verify, json, concrete, resolvedMode, resolvedIdle, bindAddress, server, port, loopback, threads,
            (long) (timeout * 1e9), gso, resolvedBurst, gro, compareSwap, progress, counters || countersJson,
            countersJson || counters && json,
            4096L << qpTimeoutExponent, (long) (retryTimeout * 1e9), resolvedCc, pcap == null ? null
                : Capture.open(pcap, loopback, captureLimits.snapLength(), captureLimits.limitBytes()));
    }

    /**
     * perftest options that have no meaning here get a one-line refusal with the reason and what to
     * do instead, rather than "Unknown option" or a silent no-op.
     */
    private void refuseUnsupportedPerftestOptions() {
        if (inlineSize != null) {
            throw bad("-I/--inline_size is not supported: inline sends save a NIC the DMA read of a small payload; "
                + "here the driver copies every payload from registered memory into the datagram anyway");
        }
        if (postList != null) {
            throw bad("-l/--post_list is not supported: a post list saves a NIC doorbell per work request; here a "
                + "post is a method call on the owning thread and the driver batches sends per duty cycle (GSO)");
        }
        if (allSizes) {
            throw bad("-a/--all is not supported: a server serves one message size per run; run once per size "
                + "with -s (docs/perftest.md has a loop over 2..8388608)");
        }
        if (runInfinitely) {
            throw bad("--run_infinitely is not supported: use -D with a long duration; --progress (on by default) "
                + "prints the rate every second");
        }
        if (output != null) {
            final String o = output.toLowerCase(Locale.ROOT);
            final boolean fits = kind.bandwidth ? o.equals("bandwidth") || o.equals("message_rate")
                : o.equals("latency");
            if (!fits) {
                throw bad("--output for " + kind.command + " must be "
                    + (kind.bandwidth ? "bandwidth or message_rate" : "latency") + " (got " + output + ")");
            }
        }
    }

    // ------------------------------------------------------------------ running

    @Override
    public Integer call() {
        final BenchConfig config = resolve();
        try {
            return callWith(config);
        } finally {
            if (config.capture() != null) {
                config.capture().close(spec.commandLine().getErr());
            }
        }
    }

    private Integer callWith(final BenchConfig config) {
        // The benchmark threads drive their devices in INVOKER mode and so run Netty's send and
        // receive paths: on a FastThreadLocalThread Netty's object pools (Recycler) work from fast
        // thread-locals instead of missing, which cut the echo side's allocation to about a third.
        final java.util.concurrent.atomic.AtomicReference<Object> outcome = new java.util.concurrent.atomic.AtomicReference<>();
        final Thread runner = new io.netty.util.concurrent.FastThreadLocalThread(() -> {
            try {
                outcome.set(run(config));
            } catch (final Throwable t) {
                outcome.set(t);
            }
        }, "metaroce-" + kind.name().toLowerCase(java.util.Locale.ROOT));
        runner.start();
        try {
            runner.join();
        } catch (final InterruptedException ex) {
            Thread.currentThread().interrupt();
            throw new BenchException("interrupted");
        }
        final Object result = outcome.get();
        if (result instanceof RuntimeException ex) {
            throw ex;
        }
        if (result instanceof Error e) {
            throw e;
        }
        if (result instanceof Throwable t) {
            throw new BenchException(t.toString(), t);
        }
        return (Integer) result;
    }

    private Integer run(final BenchConfig config) {
        final PrintWriter out = spec.commandLine().getOut();
        final PrintWriter err = spec.commandLine().getErr();
        final Report report;
        if (config.loopback()) {
            report = runLoopback(config, err);
        } else if (config.server() == null) {
            runServer(config, out);
            return 0;
        } else {
            report = runClient(config, err);
        }
        if (output != null) {
            report.printOnly(output.toLowerCase(Locale.ROOT), out);
        } else if (config.json()) {
            report.printJson(out);
        } else if (headerPrinted) {
            report.printResults(out);
        } else {
            report.printTable(out);
        }
        if ("FAILED".equals(report.verify)) {
            throw new BenchException("verification FAILED: " + report.verifyDetail);
        }
        return 0;
    }

    /**
     * The table's header goes out when the connections are up, before a warm-up that may take many
     * seconds, as perftest prints its parameters first; the results follow at the end.
     */
    private void announce(final ClientAgent client) {
        if (output == null && !client.config.json()) {
            final PrintWriter out = spec.commandLine().getOut();
            client.onStart(() -> {
                client.report().printHeader(out);
                headerPrinted = true;
            });
        }
    }

    private static void rethrow(final Agent agent) {
        final Throwable t = agent.failure();
        if (t instanceof RuntimeException r) {
            throw r;
        }
        if (t instanceof Error e) {
            throw e;
        }
        if (t != null) {
            throw new BenchException(t.toString(), t);
        }
    }

    private Report runClient(final BenchConfig config, final PrintWriter err) {
        final SharedDriver shared = config.mode() == BenchConfig.Mode.shared
            ? new SharedDriver(config.transport(), Runner.driverIdle(config.idle())) : null;
        try (Side side = new Side(config, "client", config.bind(), 0, Runner.driverIdle(config.idle()), shared)) {
            final ClientAgent client = new ClientAgent(side, config, config.server(), err);
            announce(client);
            client.diagnostics(err);
            Runner.drive(config.mode() == BenchConfig.Mode.invoker ? List.of(side.device) : List.of(),
                List.of(client), config.idle(), new AtomicBoolean());
            rethrow(client);
            return client.report();
        } finally {
            if (shared != null) {
                shared.close();
            }
        }
    }

    private void runServer(final BenchConfig config, final PrintWriter out) {
        final SharedDriver shared = config.mode() == BenchConfig.Mode.shared
            ? new SharedDriver(config.transport(), Runner.driverIdle(config.idle())) : null;
        try (Side side = new Side(config, "server", config.bind(), config.port(), Runner.driverIdle(config.idle()),
            shared)) {
            final ServerAgent server = new ServerAgent(side, config, out, config.json());
            server.diagnostics(spec.commandLine().getErr());
            if (!config.json()) {
                server.printWaiting();
            }
            Runner.drive(config.mode() == BenchConfig.Mode.invoker ? List.of(side.device) : List.of(),
                List.of(server), config.idle(), new AtomicBoolean());
            rethrow(server);
            if (config.json()) {
                server.report().printJson(out);
            }
            if ("FAILED".equals(server.outcome())) {
                throw new BenchException("verification FAILED: " + server.report().verifyDetail);
            }
        } finally {
            if (shared != null) {
                shared.close();
            }
        }
    }

    private Report runLoopback(final BenchConfig config, final PrintWriter err) {
        final PrintWriter quiet = new PrintWriter(java.io.Writer.nullWriter());
        final AtomicBoolean abort = new AtomicBoolean();
        final BenchConfig.Mode mode = config.mode();
        if (mode == BenchConfig.Mode.invoker && config.loopbackThreads() == 2) {
            return runLoopbackTwoThreads(config, err, quiet, abort);
        }
        final SharedDriver shared = mode == BenchConfig.Mode.shared
            ? new SharedDriver(config.transport(), Runner.driverIdle(config.idle())) : null;
        Side serverSide = null;
        Side clientSide = null;
        try {
            serverSide = new Side(config, "server", config.bind(), 0, Runner.driverIdle(config.idle()), shared);
            final ServerAgent server = new ServerAgent(serverSide, config, quiet, true);
            clientSide = new Side(config, "client", config.bind(), 0, Runner.driverIdle(config.idle()), shared);
            final ClientAgent client = new ClientAgent(clientSide, config, serverSide.address(), err);
            announce(client);
            server.diagnostics(err);
            client.diagnostics(err);
            final List<MetaRoceDevice> owned = new ArrayList<>();
            if (mode == BenchConfig.Mode.invoker) {
                owned.add(serverSide.device);
                owned.add(clientSide.device);
            }
            Runner.drive(owned, List.of(client, server), config.idle(), abort);
            rethrow(client);
            rethrow(server);
            return client.report();
        } finally {
            closeAll(clientSide, serverSide);
            if (shared != null) {
                shared.close();
            }
        }
    }

    private Report runLoopbackTwoThreads(final BenchConfig config, final PrintWriter err, final PrintWriter quiet,
                                         final AtomicBoolean abort) {
        final CompletableFuture<InetSocketAddress> address = new CompletableFuture<>();
        final AtomicReference<Throwable> serverFailure = new AtomicReference<>();
        final Thread serverThread = new io.netty.util.concurrent.FastThreadLocalThread(() -> {
            try (Side side = new Side(config, "server", config.bind(), 0, null, null)) {
                final ServerAgent server = new ServerAgent(side, config, quiet, true);
                server.diagnostics(err);
                address.complete(side.address());
                Runner.drive(List.of(side.device), List.of(server), config.idle(), abort);
                if (server.failure() != null) {
                    serverFailure.set(server.failure());
                    abort.set(true);
                }
            } catch (final Throwable t) {
                serverFailure.compareAndSet(null, t);
                address.completeExceptionally(t);
                abort.set(true);
            }
        }, "metaroce-server");
        serverThread.setDaemon(true);
        serverThread.start();
        try {
            final InetSocketAddress serverAddress;
            try {
                serverAddress = address.get(30, TimeUnit.SECONDS);
            } catch (final ExecutionException ex) {
                throw ex.getCause() instanceof RuntimeException r ? r : new BenchException(ex.getCause().toString());
            } catch (final TimeoutException ex) {
                throw new BenchException("the loopback server did not start within 30 s");
            } catch (final InterruptedException ex) {
                Thread.currentThread().interrupt();
                throw new BenchException("interrupted");
            }
            try (Side side = new Side(config, "client", config.bind(), 0, null, null)) {
                final ClientAgent client = new ClientAgent(side, config, serverAddress, err);
            announce(client);
                client.diagnostics(err);
                Runner.drive(List.of(side.device), List.of(client), config.idle(), abort);
                if (client.failure() != null) {
                    abort.set(true);
                }
                rethrow(client);
                join(serverThread);
                final Throwable s = serverFailure.get();
                if (s != null) {
                    throw s instanceof RuntimeException r ? r : new BenchException("server failed: " + s, s);
                }
                return client.report();
            }
        } finally {
            abort.set(true);
            join(serverThread);
        }
    }

    private static void join(final Thread t) {
        try {
            t.join(TimeUnit.SECONDS.toMillis(10));
        } catch (final InterruptedException ex) {
            Thread.currentThread().interrupt();
        }
    }

    private static void closeAll(final Side... sides) {
        for (final Side s : sides) {
            if (s != null) {
                try {
                    s.close();
                } catch (final RuntimeException ex) {
                    // Best effort.
                }
            }
        }
    }
}
