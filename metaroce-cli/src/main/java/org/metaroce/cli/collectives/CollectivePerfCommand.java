// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.cli.collectives;

import java.io.PrintWriter;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;

import org.metaroce.cli.Capture;
import org.metaroce.collectives.Bootstrap;
import org.metaroce.collectives.CollectiveException;
import org.metaroce.collectives.CommConfig;
import org.metaroce.collectives.Communicator;
import org.metaroce.collectives.DataType;
import org.metaroce.collectives.LaunchEnv;
import org.metaroce.collectives.LocalCluster;
import org.metaroce.collectives.ReduceOp;
import org.metaroce.netty.DeviceConfig;
import org.metaroce.netty.ThreadingMode;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * An nccl-tests-style collective benchmark ({@code all_reduce_perf} and friends): a size sweep,
 * out-of-place and in-place, every result checked element by element. {@code --ranks N} runs N
 * ranks in this process over loopback; without it this process is one rank of a job launched by
 * torchrun, Open MPI or Slurm (or with RANK/WORLD_SIZE/MASTER_ADDR/MASTER_PORT set by hand), and
 * rank 0 prints.
 */
@Command(mixinStandardHelpOptions = true, sortOptions = false, usageHelpAutoWidth = true)
public final class CollectivePerfCommand implements Callable<Integer> {
    private final CollectiveKind kind;

    @Spec
    CommandSpec spec;

    @Option(names = {"-b", "--minbytes"}, defaultValue = "8", paramLabel = "BYTES",
        description = "Smallest size (K, M, G suffixes; default: ${DEFAULT-VALUE}).")
    String minBytes;

    @Option(names = {"-e", "--maxbytes"}, defaultValue = "32M", paramLabel = "BYTES",
        description = "Largest size (default: ${DEFAULT-VALUE}).")
    String maxBytes;

    @Option(names = {"-f", "--stepfactor"}, defaultValue = "2", paramLabel = "F",
        description = "Multiply the size by F each step (default: ${DEFAULT-VALUE}).")
    int stepFactor;

    @Option(names = {"-d", "--datatype"}, defaultValue = "float", paramLabel = "TYPE",
        description = "float, double, int32, int64, bfloat16 (bf16), half (fp16) or all (default: ${DEFAULT-VALUE}).")
    String datatype;

    @Option(names = {"-o", "--op"}, defaultValue = "sum", paramLabel = "OP",
        description = "sum, prod, min, max or all (default: ${DEFAULT-VALUE}; ignored without a reduction).")
    String op;

    @Option(names = {"-i", "--stepbytes"}, hidden = true, paramLabel = "BYTES",
        description = "nccl-tests' fixed increment: not supported (see the error).")
    String stepBytes;

    @Option(names = {"-n", "--iters"}, defaultValue = "20", paramLabel = "N",
        description = "Timed iterations per size, out of place and in place alternating (default: "
            + "${DEFAULT-VALUE}).")
    int iters;

    @Option(names = {"-w", "--warmup_iters"}, defaultValue = "5", paramLabel = "N",
        description = "Untimed iterations of each variant before timing; the JIT needs about ten 64 MiB "
            + "iterations on 2 cores (default: ${DEFAULT-VALUE}).")
    int warmup;

    @Option(names = {"-c", "--check"}, defaultValue = "1", paramLabel = "0|1",
        description = "Check every result element against a reference (default: ${DEFAULT-VALUE}).")
    int check;

    @Option(names = {"-r", "--root"}, defaultValue = "0", paramLabel = "RANK",
        description = "Root of broadcast (default: ${DEFAULT-VALUE}).")
    int root;

    @Option(names = "--ranks", paramLabel = "N",
        description = "Run N ranks in this process over loopback; without it, bootstrap from the launcher's "
            + "environment (RANK/WORLD_SIZE/MASTER_ADDR/MASTER_PORT, OMPI_COMM_WORLD_*, SLURM_*).")
    Integer ranks;

    @Option(names = "--rank", paramLabel = "R",
        description = "This process's rank (explicit launch, with --world-size and --master; overrides the "
            + "environment).")
    Integer rank;

    @Option(names = "--world-size", paramLabel = "N", description = "Number of ranks (explicit launch).")
    Integer worldSize;

    @Option(names = "--master", paramLabel = "HOST[:PORT]",
        description = "Rank 0's host and rendezvous port (explicit launch; port 29500 when omitted).")
    String master;

    @Option(names = "--chunk", defaultValue = "256K", paramLabel = "BYTES",
        description = "Pipelining chunk (one slot, one WRITE with immediate; default: ${DEFAULT-VALUE}).")
    String chunk;

    @Option(names = "--slots", defaultValue = "4", paramLabel = "N",
        description = "Slots each rank grants each peer (default: ${DEFAULT-VALUE}).")
    int slots;

    @Option(names = "--mtu", defaultValue = "4096", paramLabel = "BYTES",
        description = "Path MTU of the queue pairs: 256, 512, 1024, 2048, 4096 or 8192 (default: ${DEFAULT-VALUE}; "
            + "8192 was slower for all-reduce on loopback, docs/collectives.md).")
    int mtu;

    @Option(names = "--timeout", defaultValue = "60", paramLabel = "SECONDS",
        description = "Bound on setup and on each operation (default: ${DEFAULT-VALUE}).")
    int timeoutSeconds;

    @Option(names = "--driver", defaultValue = "auto", paramLabel = "auto|shared|dedicated|invoker",
        description = "With --ranks: one driver thread for every rank's device (shared), one each (dedicated), or "
            + "none: each rank's thread drives its own device (invoker); a launched rank has a driver thread "
            + "(shared or dedicated) or none (invoker); auto is invoker (the tool calls operations back to back, "
            + "the case INVOKER ranks are for) (default: ${DEFAULT-VALUE}).")
    String driverMode;

    @Option(names = "--wait", defaultValue = "auto", paramLabel = "auto|spin|backoff|park|block",
        description = "How a rank's thread waits for the network: busy spin, spin-yield-park backoff, park 50 us, "
            + "block (--driver invoker: yield the processor, then block in the device until a datagram arrives), "
            + "or auto: with --ranks, spin when every thread has a core; otherwise, and for launched ranks, INVOKER "
            + "ranks yield and then block in their devices and ranks with driver threads yield and then wait for "
            + "their driver's completions (default: ${DEFAULT-VALUE}).")
    String waitMode;

    @Option(names = "--one-shot", defaultValue = "4K", paramLabel = "BYTES",
        description = "All-reduce up to this size is one-shot (every rank sends to every other: one hop), above "
            + "it recursive doubling up to --small, then Rabenseifner up to --rabenseifner, then the ring; 0 = never "
            + "one-shot "
            + "(default: ${DEFAULT-VALUE}).")
    private String oneShot;

    @Option(names = "--small", defaultValue = "64K", paramLabel = "BYTES",
        description = "Up to this size the latency-optimised algorithms run: recursive doubling for all-reduce "
            + "above --one-shot (log2 n hops of the whole vector), binomial trees for broadcast and reduce; above it "
            + "the ring (2(n-1) hops of 1/n each) and chains (default: ${DEFAULT-VALUE}).")
    private String smallBytes;

    @Option(names = "--rabenseifner", defaultValue = "1G", paramLabel = "BYTES",
        description = "All-reduce above --small and up to this size runs Rabenseifner's algorithm (reduce-scatter "
            + "by recursive halving, all-gather by recursive doubling: 2 log2 n hops, the ring's bytes), above it "
            + "the ring (2(n-1) hops), on 4 ranks or more; 0 = never (default: ${DEFAULT-VALUE}).")
    private String rabenseifnerBytes;

    @Option(names = "--rabenseifner-above", defaultValue = "32K", paramLabel = "BYTES",
        description = "On 4 ranks or more, Rabenseifner's all-reduce also takes the sizes above this one and up "
            + "to --small from recursive doubling (default: ${DEFAULT-VALUE}).")
    private String rabenseifnerAboveBytes;

    @Option(names = "--jit-warmup", defaultValue = "5", paramLabel = "SECONDS",
        description = "Before the sweep, run its sizes (up to 1 MiB, or up to the first size whose transfers take "
            + "two chunks, 2 x chunk x ranks, if larger) for at least this long and until the JIT "
            + "compiler has been idle for 1 s, at most 15 s more; 0 = off (default: ${DEFAULT-VALUE}).")
    private double jitWarmupSeconds;

    @Option(names = "--baseline",
        description = "all_reduce_perf: before and after the sweep, time the wire baseline at the largest size (the "
            + "ring all-reduce's sends and receives without dependencies, reductions or copies, COLL-030) and print "
            + "the sweep's largest busbw as a ratio to it.")
    boolean baseline;

    @Option(names = "--cpu",
        description = "After each row (and baseline), print the CPU cores this process kept busy during the timed "
            + "iterations (out of place and in place alternate), and out-of-place busbw per busy core: a figure "
            + "that other load on the host does not skew as much as busbw (with --ranks it covers every rank).")
    boolean cpu;

    @Option(names = "--median",
        description = "After each row, print the median time of one iteration (the largest over the ranks; the median "
            + "of the means of pairs of consecutive iterations, since a rank's calls may alternate between a short and a "
            + "long one), which scheduling stalls on a loaded host do not drag up as they do the average.")
    boolean median;

    @Option(names = "--pin-ranks",
        description = "With --ranks: pin rank i's thread to the i-th CPU, round robin, of those this process may run "
            + "on, as MPI launchers bind ranks (4 ranks on 2 CPUs: 0, 1, 0, 1). Linux, JDK 22 or newer. Where ranks "
            + "outnumber cores the scheduler's placement otherwise decides a small collective's speed for tens of "
            + "milliseconds at a time.")
    boolean pinRanks;

    @Option(names = "--counters", description = "Print each rank's driver and endpoint counters at the end.")
    boolean counters;

    @Option(names = "--pcap", paramLabel = "FILE",
        description = "Record every MetaRoCE packet into a pcap file, one record per packet as on the wire, for "
            + "Wireshark with docs/wireshark/metaroce.lua. With --ranks each rank records what it sends (every packet "
            + "once); a rank of its own process records what it sends and receives, and '{rank}' in FILE is replaced "
            + "by its rank.")
    java.nio.file.Path pcap;

    @picocli.CommandLine.Mixin
    org.metaroce.cli.CaptureLimits captureLimits;

    /** @param command the tool's name (e.g. all_reduce_perf) */
    public CollectivePerfCommand(final String command) {
        this.kind = kindOf(command);
    }

    private static CollectiveKind kindOf(final String command) {
        for (final CollectiveKind k : CollectiveKind.values()) {
            if (k.command.equals(command)) {
                return k;
            }
        }
        throw new IllegalArgumentException("no collective tool " + command);
    }

    /**
     * @param command a tool name: all_reduce_perf, all_gather_perf, reduce_scatter_perf,
     *     broadcast_perf or all_to_all_perf
     * @return the tool's command line, to add as a subcommand of {@code metaroce}
     */
    public static CommandLine commandLine(final String command) {
        final CollectiveKind k = kindOf(command);
        final CommandLine sub = new CommandLine(new CollectivePerfCommand(command));
        sub.getCommandSpec().usageMessage().description(k.description());
        sub.getCommandSpec().usageMessage().footer("", "In one process: metaroce " + k.command + " --ranks 4 -b 8 -e 64M",
            "One rank per process: RANK=i WORLD_SIZE=n MASTER_ADDR=host MASTER_PORT=29500 metaroce " + k.command,
            "See docs/collectives.md.");
        return sub;
    }

    /**
     * How long a launched INVOKER rank keeps answering its peers after the closing barrier: 50 of
     * the devices' 10 ms retransmission floors [COLL-029].
     */
    private static final Duration LINGER = Duration.ofMillis(500);

    static long parseSize(final String s) {
        final String t = s.trim().toUpperCase(Locale.ROOT);
        long mult = 1;
        String digits = t;
        if (t.endsWith("K") || t.endsWith("M") || t.endsWith("G")) {
            mult = t.endsWith("K") ? 1L << 10 : t.endsWith("M") ? 1L << 20 : 1L << 30;
            digits = t.substring(0, t.length() - 1);
        }
        try {
            return Long.parseLong(digits) * mult;
        } catch (final NumberFormatException ex) {
            throw new IllegalArgumentException("'" + s + "' is not a size (e.g. 8, 64K, 32M, 1G)");
        }
    }

    private CommandLine.ParameterException bad(final String message) {
        return new CommandLine.ParameterException(spec.commandLine(), message);
    }

    @Override
    public Integer call() throws Exception {
        final Sweep sweep;
        final CommConfig config;
        try {
            final long b = parseSize(minBytes);
            final long e = parseSize(maxBytes);
            if (b < 0 || e < b || e > (1L << 30)) {
                throw bad("-b/-e: need 0 <= minbytes <= maxbytes <= 1G (got " + b + ", " + e + ")");
            }
            if (stepBytes != null) {
                throw bad("-i/--stepbytes (nccl-tests' fixed increment) is not supported: sizes grow by "
                    + "-f/--stepfactor (default 2), which covers 8 B to 1 GiB in 28 steps instead of millions; "
                    + "use -f 2 and -b/-e to choose the range");
            }
            if (stepFactor < 2) {
                throw bad("-f must be >= 2 (got " + stepFactor + ")");
            }
            if (iters < 1 || warmup < 0) {
                throw bad("-n must be >= 1 and -w >= 0");
            }
            final List<DataType> types = new ArrayList<>();
            if (datatype.equalsIgnoreCase("all")) {
                types.addAll(List.of(DataType.values()));
            } else {
                types.add(DataType.parse(datatype));
            }
            final List<ReduceOp> ops = new ArrayList<>();
            if (!kind.reduces) {
                ops.add(null);
            } else if (op.equalsIgnoreCase("all")) {
                ops.addAll(List.of(ReduceOp.values()));
            } else {
                ops.add(ReduceOp.parse(op));
            }
            config = new CommConfig().chunkBytes((int) parseSize(chunk)).slots(slots).pathMtu(mtu)
                .oneShotAllReduceBytes(parseSize(oneShot))
                .smallAllReduceBytes(parseSize(smallBytes))
                .rabenseifnerAllReduceBytes(parseSize(rabenseifnerBytes))
                .rabenseifnerAllReduceAboveBytes(parseSize(rabenseifnerAboveBytes))
                .operationTimeout(Duration.ofSeconds(timeoutSeconds)).setupTimeout(Duration.ofSeconds(timeoutSeconds));
            switch (waitMode) {
                case "spin" -> config.idleStrategy(null).spinWait(true);
                case "park" -> config.parkWait(true);
                case "block" -> config.blockWait(true);
                case "backoff" -> config.spinWait(false);
                case "auto" -> { }
                default -> throw bad("--wait must be auto, spin, backoff, park or block (got " + waitMode + ")");
            }
            if (!driverMode.equals("auto") && !driverMode.equals("shared") && !driverMode.equals("dedicated")
                && !driverMode.equals("invoker")) {
                throw bad("--driver must be auto, shared, dedicated or invoker (got " + driverMode + ")");
            }
            if (baseline && kind != CollectiveKind.ALL_REDUCE) {
                throw bad("--baseline is for all_reduce_perf");
            }
            if (jitWarmupSeconds < 0) {
                throw bad("--jit-warmup must be >= 0 (got " + jitWarmupSeconds + ")");
            }
            sweep = new Sweep(kind, b, e, stepFactor, types, ops, iters, warmup, check != 0, root, baseline, cpu,
                median, (long) (jitWarmupSeconds * 1e9), Runtime.getRuntime().availableProcessors());
        } catch (final IllegalArgumentException ex) {
            throw bad(ex.getMessage());
        }
        try {
            return execute(sweep, config);
        } catch (final CollectiveException ex) {
            final PrintWriter err = spec.commandLine().getErr();
            err.println(kind.command + ": " + ex.getMessage());
            err.flush();
            return 1;
        }
    }

    private int execute(final Sweep sweep, final CommConfig config) throws Exception {
        final PrintWriter out = spec.commandLine().getOut();
        final long wrong;
        if (ranks != null) {
            if (rank != null || worldSize != null || master != null) {
                throw bad("--ranks runs every rank in this process: it does not combine with --rank, --world-size "
                    + "or --master");
            }
            if (ranks < 1 || ranks > 64) {
                throw bad("--ranks must be in 1..64 (got " + ranks + ")");
            }
            if (root >= ranks) {
                throw bad("--root must be below --ranks");
            }
            if (pinRanks && !org.metaroce.netty.CpuAffinity.isAvailable()) {
                throw bad("--pin-ranks needs thread affinity, which this JVM lacks: "
                    + org.metaroce.netty.CpuAffinity.unavailabilityReason().orElse("unknown reason")
                    + "; run without --pin-ranks");
            }
            out.printf("# metaroce %s: %d ranks in this process over loopback%n", kind.command, ranks);
            // Where the host placed the CPUs decides how fast the ranks' bytes move between them
            // (docs/collectives.md, "The host's slow mode"): measured before and after the run.
            out.printf("# %s before the run%n", CrossCpuHop.describe());
            // INVOKER ranks by default: same rounds against Open MPI (4 ranks, 2 shared cores), 8 B
            // 462-515 us against 623-823 us with a driver thread per rank, 512 KiB 2.8-3.6 ms against
            // 4.0-4.6 ms, 32 MiB alike (docs/collectives.md).
            final Capture capture = pcap == null ? null : openCapture(pcap, true);
            final ThreadingMode mode = switch (driverMode) {
                case "dedicated" -> ThreadingMode.DEDICATED;
                case "invoker", "auto" -> ThreadingMode.INVOKER;
                default -> ThreadingMode.SHARED;
            };
            // Without a capture no template: the ranks get LocalCluster's defaults as before.
            final DeviceConfig template = capture == null ? null
                : capture.configure(LocalCluster.defaultDeviceConfig(mode));
            try (LocalCluster cluster = switch (mode) {
                case DEDICATED -> LocalCluster.startDedicated(ranks, config, template);
                case INVOKER -> LocalCluster.startInvoker(ranks, config, template);
                default -> LocalCluster.start(ranks, config, template);
            }) {
                if (pinRanks) {
                    out.printf("# rank threads pinned to CPUs %s%n", java.util.Arrays.toString(cluster.pinRanks()));
                }
                final List<Long> results = cluster.run(c -> sweep.run(c, c.rank() == 0 ? out : null),
                    Duration.ofHours(2));
                wrong = results.get(0);
                if (counters) {
                    for (int i = 0; i < cluster.size(); i++) {
                        printCounters(out, cluster.communicator(i));
                    }
                }
            } finally {
                closeCapture(capture); // after the devices: what they recorded last is in the file
            }
            out.printf("# %s after the run%n", CrossCpuHop.describe());
        } else {
            if (pinRanks) {
                throw bad("--pin-ranks pins the threads of ranks run with --ranks; a launched rank is bound by its "
                    + "launcher (mpirun --bind-to core, taskset, srun --cpu-bind)");
            }
            final LaunchEnv env;
            try {
                env = explicitLaunch() != null ? explicitLaunch() : LaunchEnv.fromEnvironment();
            } catch (final IllegalArgumentException ex) {
                throw bad(ex.getMessage() + " (or use --ranks N for ranks in this process)");
            }
            if (root >= env.worldSize()) {
                throw bad("--root must be below the world size " + env.worldSize());
            }
            final Capture capture = pcap == null ? null
                : openCapture(java.nio.file.Path.of(pcap.toString().replace("{rank}", String.valueOf(env.rank()))), false);
            // INVOKER by default here too: four launched ranks on 2 cores, 8-byte all-reduce, median
            // 120-130 us against 314-447 us with a driver thread each, as fast as ranks in one process
            // (docs/collectives.md).
            final boolean invoker = driverMode.equals("invoker") || driverMode.equals("auto");
            final java.util.function.Function<java.net.InetAddress, DeviceConfig> devices =
                invoker ? Bootstrap::invokerDeviceConfig : Bootstrap::defaultDeviceConfig;
            try (Communicator c = Bootstrap.connect(env, config,
                capture == null ? devices : bind -> capture.configure(devices.apply(bind)))) {
                if (c.rank() == 0) {
                    out.printf("# metaroce %s: %d ranks (%s launch, master %s:%d)%n", kind.command, c.size(),
                        env.launcher(), env.masterAddress(), env.masterPort());
                }
                wrong = sweep.run(c, c.rank() == 0 ? out : null);
                if (invoker) {
                    c.finish(LINGER);
                }
                if (c.rank() != 0) {
                    out.printf("rank %d: %d wrong%n", c.rank(), wrong);
                }
                if (counters) {
                    printCounters(out, c);
                }
            } finally {
                closeCapture(capture);
            }
        }
        out.flush();
        return wrong == 0 ? 0 : 1;
    }

    /** @return the capture --pcap asks for; {@code bothEnds}: every rank is a device of this process */
    private Capture openCapture(final java.nio.file.Path file, final boolean bothEnds) {
        try {
            return Capture.open(file, bothEnds, captureLimits.snapLength(), captureLimits.limitBytes());
        } catch (final RuntimeException ex) {
            throw bad(ex.getMessage()); // a file that cannot be written, a bad --pcap-snaplen or --pcap-limit
        }
    }

    private void closeCapture(final Capture capture) {
        if (capture != null) {
            capture.close(spec.commandLine().getErr());
        }
    }

    /** @return the launch given by --rank, --world-size and --master, or null when none is given */
    private LaunchEnv explicitLaunch() {
        if (rank == null && worldSize == null && master == null) {
            return null;
        }
        if (rank == null || worldSize == null || master == null) {
            throw new IllegalArgumentException("an explicit launch needs all of --rank, --world-size and --master");
        }
        final int colon = master.lastIndexOf(':');
        final String host = colon > 0 ? master.substring(0, colon) : master;
        final int port;
        try {
            port = colon > 0 ? Integer.parseInt(master.substring(colon + 1)) : LaunchEnv.DEFAULT_MASTER_PORT;
        } catch (final NumberFormatException ex) {
            throw new IllegalArgumentException("--master " + master + ": the port is not a number", ex);
        }
        return new LaunchEnv(rank, worldSize, host, port, "explicit");
    }

    private static void printCounters(final PrintWriter out, final Communicator c) {
        out.printf("# rank %d counters:%n#   driver: %s%n#   endpoint: %s%n#   collectives: %s%n", c.rank(),
            c.device().counters(), c.device().endpoint().counters(), c.counters());
    }

    /**
     * The sweep one rank runs; rank 0 prints. {@code cores} is the processors the process may use,
     * read before the ranks start: a rank pinned by {@code --pin-ranks} sees one.
     */
    record Sweep(CollectiveKind kind, long minBytes, long maxBytes, int factor, List<DataType> types,
                 List<ReduceOp> ops, int iters, int warmup, boolean check, int root, boolean baseline,
                 boolean cpu, boolean median, long jitWarmupNs, int cores) {
        /**
         * Timed iterations of a warm-up row at most: enough that the row's own code (its timing loop,
         * the sort of its timings) takes the paths a timed row's takes: java.util.Arrays sorts fewer
         * than 65 elements another way, and the median sorts one value per pair of iterations (at
         * 128 iterations, 64 values: the sort's recompilation at the end of the first timed row, -n
         * 200, gave the second row a mean of 62-67 us against a median of 40 in three rounds of three).
         */
        private static final int JIT_WARMUP_ITERS = 256;
        /**
         * Bytes a warm-up row moves per variant at most (fewer iterations for the largest sizes:
         * the small rows already profile the harness, and 128 iterations of 1 MiB made a round last
         * seconds on a loaded host).
         */
        private static final long JIT_WARMUP_ROW_BYTES = 8L << 20;
        private static final long JIT_QUIET_NS = 1_000_000_000L;
        private static final long JIT_EXTRA_NS = 15_000_000_000L;

        /** @return wrong elements over all ranks (the same on every rank) */
        long run(final Communicator c, final PrintWriter out) {
            final int n = c.size();
            final ByteBuffer stat = ByteBuffer.allocateDirect(16).order(ByteOrder.nativeOrder());
            if (out != null) {
                out.printf("#  chunk %d B x %d slots per peer, %d iterations after %d warmup, check %s, ranks %s "
                        + "(%s), %d cores%n", c.config().chunkBytes(), c.config().slots(), iters, warmup,
                    check ? "on" : "off", c.config().spinWaits() ? "spin"
                        : !c.config().blocksWhenIdle() ? "back off or park"
                        : c.device().threadingMode() == org.metaroce.netty.ThreadingMode.INVOKER
                            ? "block in their devices" : "wait on their completion doorbells",
                    c.device().threadingMode(), cores);
                out.printf("#  all-reduce one-shot up to %d B, recursive doubling up to %d B, Rabenseifner up to %d B "
                    + "(from above %d B on 4 ranks or more), then the ring; broadcast and reduce trees up to %d B, "
                    + "then chains%n",
                    c.config().oneShotAllReduceBytes(), c.config().smallAllReduceBytes(),
                    c.config().rabenseifnerAllReduceBytes(),
                    c.config().rabenseifnerAllReduceFromBytes(),
                    c.config().smallAllReduceBytes());
                out.println("#");
                // nccl-tests' columns, root included: the root rank of broadcast and reduce, -1 for the others.
                out.println("#                                                           out-of-place                       "
                    + "in-place");
                out.println("#       size         count      type   redop    root     time   algbw   busbw #wrong     time   "
                    + "algbw   busbw #wrong");
                out.println("#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  "
                    + "(GB/s)  (GB/s)");
                out.flush();
            }
            long totalWrong = 0;
            double busSum = 0;
            int rows = 0;
            double lastBusOop = 0;
            double lastBusIp = 0;
            long largest = minBytes;
            for (long size = minBytes; size <= maxBytes; size = Math.max(size * factor, size + 1)) {
                largest = size;
            }
            // The buffers of every row, of every type, allocated and registered before the JIT
            // warm-up, which uses them too. Allocated after it, they were zeroed (32 MiB each) by
            // one rank while the others waited in the first row's barrier with the warm-up's last
            // inline chunks unacknowledged: their tail probes ran code the warm-up never had, and
            // the JIT's deoptimisations gave the first rows means of 100-270 us against medians
            // of 50 (docs/collectives.md, "The first rows' tails").
            final ByteBuffer a = ByteBuffer.allocateDirect((int) Math.max(8, maxBytes)).order(ByteOrder.nativeOrder());
            final ByteBuffer b = ByteBuffer.allocateDirect((int) Math.max(8, maxBytes)).order(ByteOrder.nativeOrder());
            if (jitWarmupNs > 0) {
                jitWarmup(c, out, a, b);
            }
            final double baseBefore = baseline ? baseline(c, out, "before", largest) : 0;
            for (final DataType t : types) {
                for (final ReduceOp op : ops) {
                    for (long size = minBytes; size <= maxBytes; size = Math.max(size * factor, size + 1)) {
                        final int g = kind.granularity(n);
                        final long count = size / t.size() / g * g;
                        final double[][] both = measure(c, a, b, count, t, op, stat, warmup, iters);
                        final double[] oop = both[0];
                        final double[] ip = both[1];
                        totalWrong += (long) oop[1] + (long) ip[1];
                        final long bytes = count * t.size();
                        final double algOop = bytes / oop[0] / 1e3;
                        final double algIp = bytes / ip[0] / 1e3;
                        busSum += algOop * kind.busFactor(n);
                        lastBusOop = algOop * kind.busFactor(n);
                        lastBusIp = algIp * kind.busFactor(n);
                        rows++;
                        if (out != null) {
                            out.printf(Locale.ROOT, "%12d  %12d  %8s  %6s  %6d  %7.1f  %6.2f  %6.2f  %5d  %7.1f  %6.2f  "
                                    + "%6.2f  %5d%n", bytes, count, t.shortName(), op == null ? "none" : op.shortName(),
                                kind.rooted ? root : -1, oop[0],
                                algOop, algOop * kind.busFactor(n), (long) oop[1], ip[0], algIp,
                                algIp * kind.busFactor(n), (long) ip[1]);
                            if (median) {
                                out.printf(Locale.ROOT, "# median iteration: out-of-place %.1f us, in-place %.1f us%n",
                                    oop[3], ip[3]);
                            }
                            if (cpu && Double.isNaN(oop[2])) {
                                out.println("# cpu: n/a (timed for less than 200 ms: raise -n)");
                            } else if (cpu) {
                                out.printf(Locale.ROOT, "# cpu: %.2f cores busy, busbw per busy core %.3f GB/s%n",
                                    oop[2], algOop * kind.busFactor(n) / Math.max(1e-9, oop[2]));
                            }
                            out.flush();
                        }
                        if (size == 0) {
                            size = 1;
                        }
                    }
                }
            }
            if (baseline) {
                final double baseAfter = baseline(c, out, "after", largest);
                final double mean = (baseBefore + baseAfter) / 2;
                if (out != null) {
                    out.printf(Locale.ROOT, "# busbw / ring baseline busbw (mean %.2f GB/s) at %d B: out-of-place %.2f, "
                        + "in-place %.2f%n", mean, largest, lastBusOop / mean, lastBusIp / mean);
                }
            }
            if (out != null) {
                out.printf(Locale.ROOT, "# Out of bounds values : %d %s%n", totalWrong, totalWrong == 0 ? "OK"
                    : "FAILED");
                out.printf(Locale.ROOT, "# Avg bus bandwidth    : %.4f%n", rows == 0 ? 0 : busSum / rows);
                out.flush();
            }
            return totalWrong;
        }

        /**
         * @return cores kept busy: CPU time over wall time, or NaN for a window under 200 ms (the
         *     process CPU clock ticks too coarsely for shorter ones)
         */
        private static double cores(final long cpuNs, final long wallNs) {
            return wallNs < 200_000_000L ? Double.NaN : (double) cpuNs / wallNs;
        }

        /** @return CPU time of this process (every thread) in ns, or 0 where the JVM cannot tell */
        private static long processCpuNs() {
            final java.lang.management.OperatingSystemMXBean os = java.lang.management.ManagementFactory
                .getOperatingSystemMXBean();
            return os instanceof com.sun.management.OperatingSystemMXBean sun ? Math.max(0, sun.getProcessCpuTime()) : 0;
        }

        /**
         * Runs the sweep's rows up to {@link JitWarmup#topBytes} (1 MiB, or the first size whose
         * transfers all take two chunks if larger; at least the sweep's first size), each as a timed
         * row runs it but with at most {@value #JIT_WARMUP_ITERS} iterations (and at most
         * {@value #JIT_WARMUP_ROW_BYTES} bytes per variant), until the JIT is quiet on every
         * rank ({@link JitWarmup}). A round is the rows' whole procedure (barrier, both variants,
         * check, the all-reduces of the statistics) for every type and operator of the sweep, not
         * the operation alone: a round of bare operations left the code that only a row runs
         * unprofiled, and the first timed row then hit the JIT's uncommon traps in the engine's hot
         * methods (16 of them deoptimised within 40 ms, about 200 compilations after) and paid for
         * their recompilation on a 2-core host: 48 of its 1,000 iterations took 1-8 ms, its mean
         * 227 us against a median of 59 (docs/collectives.md, "The first row"). A compilation
         * started by a row runs beside the next row's timed iterations, on a core a rank needs.
         * The rows run on the sweep's own buffers {@code a} and {@code b}, registered once.
         */
        private void jitWarmup(final Communicator c, final PrintWriter out, final ByteBuffer a, final ByteBuffer b) {
            final long top = JitWarmup.topBytes(minBytes, maxBytes, factor, c.config().chunkBytes(), c.size());
            final ByteBuffer stat = ByteBuffer.allocateDirect(16).order(ByteOrder.nativeOrder());
            final ByteBuffer flag = ByteBuffer.allocateDirect(8).order(ByteOrder.nativeOrder());
            final int g = kind.granularity(c.size());
            final JitWarmup.Result r = JitWarmup.run(() -> {
                for (final DataType t : types) {
                    for (final ReduceOp op : ops) {
                        for (long size = minBytes; size <= top; size = Math.max(size * factor, size + 1)) {
                            final int timed = (int) Math.min(Math.min(iters, JIT_WARMUP_ITERS),
                                Math.max(2, JIT_WARMUP_ROW_BYTES / Math.max(1, size)));
                            measure(c, a, b, size / t.size() / g * g, t, op, stat, Math.min(warmup, 2), timed);
                        }
                    }
                }
            }, quiet -> {
                flag.putInt(0, quiet ? 1 : 0);
                c.allReduce(flag, 1, DataType.INT32, ReduceOp.MIN);
                return flag.getInt(0) == 1;
            }, JitWarmup::compilationMs, System::nanoTime, jitWarmupNs, JIT_QUIET_NS, jitWarmupNs + JIT_EXTRA_NS);
            if (out != null) {
                out.printf(Locale.ROOT, "# JIT warm-up: %d rounds of the sweep's rows up to %d B in %.1f s, %s%n",
                    r.rounds(), top, r.elapsedNs() / 1e9, r.quiet() ? "until the compiler was idle for 1 s"
                        : "stopped at --jit-warmup with the compiler still busy");
                out.flush();
            }
        }

        /** @return the wire baseline's busbw (GB/s) at the largest size, timed like a row (COLL-030) */
        private double baseline(final Communicator c, final PrintWriter out, final String when, final long bytes) {
            final int n = c.size();
            final ByteBuffer buf = ByteBuffer.allocateDirect((int) Math.max(8, bytes)).order(ByteOrder.nativeOrder());
            for (int i = 0; i < warmup; i++) {
                c.ringBaseline(buf, bytes);
            }
            c.barrier();
            final long cpuStart = processCpuNs();
            final long start = System.nanoTime();
            for (int i = 0; i < iters; i++) {
                c.ringBaseline(buf, bytes);
            }
            final ByteBuffer stat = ByteBuffer.allocateDirect(8).order(ByteOrder.nativeOrder());
            final double mine = (System.nanoTime() - start) / 1e3 / iters;
            final double cores = cores(processCpuNs() - cpuStart, (long) (mine * 1e3 * iters));
            stat.putDouble(0, mine);
            c.allReduce(stat, 1, DataType.FLOAT64, ReduceOp.MAX);
            final double us = stat.getDouble(0);
            final double busbw = bytes / us / 1e3 * 2.0 * (n - 1) / n;
            if (out != null) {
                out.printf(Locale.ROOT, "# ring baseline %s (same wire bytes as a ring all-reduce, no reduction, no copy): "
                    + "%d B  %.1f us  busbw %.2f GB/s%n", when, bytes, us, busbw);
                if (cpu && Double.isNaN(cores)) {
                    out.println("# cpu: n/a (timed for less than 200 ms: raise -n)");
                } else if (cpu) {
                    out.printf(Locale.ROOT, "# cpu: %.2f cores busy, busbw per busy core %.3f GB/s%n", cores,
                        busbw / Math.max(1e-9, cores));
                }
                out.flush();
            }
            return busbw;
        }

        /**
         * Times out-of-place and in-place iterations in alternation ({@link PairedTiming}), then
         * checks each variant once.
         *
         * @param warmupIters untimed iterations of each variant first
         * @param timedIters timed iterations of each variant
         * @return for out of place and in place: {max mean time per iteration over ranks in us,
         *     wrong elements over ranks, cores busy during the timed iterations, max median in us}
         */
        private double[][] measure(final Communicator c, final ByteBuffer a, final ByteBuffer b, final long count,
                                   final DataType t, final ReduceOp op, final ByteBuffer stat, final int warmupIters,
                                   final int timedIters) {
            final int n = c.size();
            final int r = c.rank();
            final long block = count / kind.granularity(n);
            c.barrier();
            final PairedTiming.Result timing = PairedTiming.run(warmupIters, timedIters,
                inPlace -> once(c, a, b, count, t, op, inPlace), System::nanoTime, Sweep::processCpuNs);
            final double cores = cores(timing.cpuNs(), timing.windowNs());
            final double[][] result = new double[2][];
            for (int v = 0; v < 2; v++) {
                final boolean inPlace = v == 1;
                long wrong = 0;
                if (check && count > 0) {
                    prepare(a, b, count, block, t, op, inPlace, r);
                    once(c, a, b, count, t, op, inPlace);
                    wrong = verify(a, b, count, block, t, op, inPlace, r, n);
                }
                stat.putDouble(0, inPlace ? timing.inPlaceMeanUs() : timing.outOfPlaceMeanUs());
                c.allReduce(stat, 1, DataType.FLOAT64, ReduceOp.MAX);
                final double time = stat.getDouble(0);
                stat.putLong(0, wrong);
                c.allReduce(stat, 1, DataType.INT64, ReduceOp.SUM);
                final long wrongTotal = stat.getLong(0);
                stat.putDouble(0, inPlace ? timing.inPlaceMedianUs() : timing.outOfPlaceMedianUs());
                c.allReduce(stat, 1, DataType.FLOAT64, ReduceOp.MAX);
                result[v] = new double[] {time, wrongTotal, cores, stat.getDouble(0)};
            }
            return result;
        }

        private static ByteBuffer slice(final ByteBuffer buf, final long from, final long bytes) {
            return buf.duplicate().position((int) from).limit((int) (from + bytes)).slice()
                .order(ByteOrder.nativeOrder());
        }

        private void once(final Communicator c, final ByteBuffer a, final ByteBuffer b, final long count,
                          final DataType t, final ReduceOp op, final boolean inPlace) {
            final int n = c.size();
            final long es = t.size();
            final long block = count / kind.granularity(n);
            switch (kind) {
                case ALL_REDUCE -> c.allReduce(a, inPlace ? a : b, count, t, op);
                case ALL_GATHER -> c.allGather(inPlace ? slice(b, c.rank() * block * es, block * es) : a, b, block, t);
                case REDUCE_SCATTER -> c.reduceScatter(a, inPlace ? slice(a, c.rank() * block * es, block * es) : b,
                    block, t, op);
                case BROADCAST -> c.broadcast(a, inPlace ? a : b, count, t, root);
                case ALL_TO_ALL -> c.allToAll(a, inPlace ? a : b, block, t);
                default -> throw new IllegalStateException(kind.toString());
            }
        }

        private void prepare(final ByteBuffer a, final ByteBuffer b, final long count, final long block,
                             final DataType t, final ReduceOp op, final boolean inPlace, final int r) {
            final ReduceOp vop = op == null ? ReduceOp.SUM : op;
            switch (kind) {
                case ALL_REDUCE, REDUCE_SCATTER, ALL_TO_ALL -> CheckData.fill(a, t, r, 0, count, vop);
                case ALL_GATHER -> {
                    if (inPlace) {
                        CheckData.fill(slice(b, r * block * t.size(), block * t.size()), t, r, 0, block, vop);
                    } else {
                        CheckData.fill(a, t, r, 0, block, vop);
                    }
                }
                case BROADCAST -> {
                    if (r == root) {
                        CheckData.fill(a, t, r, 0, count, vop);
                    } else {
                        CheckData.fill(a, t, 99, 0, count, vop); // garbage the root's data must replace
                    }
                }
                default -> throw new IllegalStateException(kind.toString());
            }
        }

        private long verify(final ByteBuffer a, final ByteBuffer b, final long count, final long block,
                            final DataType t, final ReduceOp op, final boolean inPlace, final int r, final int n) {
            final ReduceOp vop = op == null ? ReduceOp.SUM : op;
            long wrong = 0;
            switch (kind) {
                case ALL_REDUCE -> {
                    final ByteBuffer out = inPlace ? a : b;
                    for (long i = 0; i < count; i++) {
                        wrong += CheckData.get(out, t, i) != CheckData.reduced(n, i, t, op) ? 1 : 0;
                    }
                }
                case REDUCE_SCATTER -> {
                    final ByteBuffer out = inPlace ? slice(a, r * block * t.size(), block * t.size()) : b;
                    for (long i = 0; i < block; i++) {
                        wrong += CheckData.get(out, t, i) != CheckData.reduced(n, r * block + i, t, op) ? 1 : 0;
                    }
                }
                case ALL_GATHER -> {
                    for (int q = 0; q < n; q++) {
                        for (long i = 0; i < block; i++) {
                            wrong += CheckData.get(b, t, q * block + i) != CheckData.value(q, i, vop, t) ? 1 : 0;
                        }
                    }
                }
                case BROADCAST -> {
                    final ByteBuffer out = inPlace ? a : b;
                    for (long i = 0; i < count; i++) {
                        wrong += CheckData.get(out, t, i) != CheckData.value(root, i, vop, t) ? 1 : 0;
                    }
                }
                case ALL_TO_ALL -> {
                    final ByteBuffer out = inPlace ? a : b;
                    for (int q = 0; q < n; q++) {
                        for (long i = 0; i < block; i++) {
                            wrong += CheckData.get(out, t, q * block + i) != CheckData.value(q, r * block + i, vop, t) ? 1
                                : 0;
                        }
                    }
                }
                default -> throw new IllegalStateException(kind.toString());
            }
            return wrong;
        }
    }
}
