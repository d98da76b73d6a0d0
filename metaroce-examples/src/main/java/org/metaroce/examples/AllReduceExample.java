// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.examples;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.FloatBuffer;
import java.time.Duration;
import java.util.List;

import org.metaroce.collectives.Bootstrap;
import org.metaroce.collectives.CommConfig;
import org.metaroce.collectives.Communicator;
import org.metaroce.collectives.DataType;
import org.metaroce.collectives.LocalCluster;
import org.metaroce.collectives.ReduceOp;

/**
 * A sum all-reduce of float32 vectors with metaroce-collectives: every rank contributes a vector,
 * every rank ends with the element-wise sum. Rank {@code r} contributes {@code r + 1 + (i % 7)} at
 * index {@code i}, so the sum over {@code n} ranks is {@code n(n+1)/2 + n(i % 7)}, exact in float32.
 *
 * <p>Without arguments, {@link #RANKS} ranks run in this JVM over loopback, each on its own thread
 * driving its own device (INVOKER mode: no driver threads). With the argument {@code env}, this
 * process is one rank of a job started by torchrun, Open MPI or Slurm (RANK, WORLD_SIZE,
 * MASTER_ADDR, MASTER_PORT or the launcher's equivalents).
 */
public final class AllReduceExample {
    /** Ranks in the one-JVM run. */
    public static final int RANKS = 4;
    /**
     * Elements per vector: 400 KB of float32, above the small-message threshold (64 KiB), so the
     * ring algorithm runs (reduce-scatter, then all-gather, pipelined in chunks).
     */
    public static final int COUNT = 100_000;

    private AllReduceExample() {
    }

    /**
     * One rank's part: fills its vector and all-reduces it in place.
     *
     * @param comm the rank's communicator
     * @return the reduced vector
     */
    public static float[] rank(final Communicator comm) {
        // Collectives take direct buffers in native byte order.
        final ByteBuffer buffer = ByteBuffer.allocateDirect(Float.BYTES * COUNT).order(ByteOrder.nativeOrder());
        final FloatBuffer values = buffer.asFloatBuffer();
        for (int i = 0; i < COUNT; i++) {
            values.put(i, comm.rank() + 1 + (i % 7));
        }
        comm.allReduce(buffer, COUNT, DataType.FLOAT32, ReduceOp.SUM);
        final float[] sum = new float[COUNT];
        values.get(0, sum);
        return sum;
    }

    /**
     * @param ranks the number of ranks
     * @param i an index
     * @return what every rank must hold at {@code i} after the all-reduce
     */
    public static float expected(final int ranks, final int i) {
        return ranks * (ranks + 1) / 2f + ranks * (i % 7);
    }

    /**
     * @return every rank's reduced vector, by rank, with {@link #RANKS} ranks in this JVM over loopback
     * @throws Exception if a rank fails
     */
    public static List<float[]> runOnLoopback() throws Exception {
        try (LocalCluster cluster = LocalCluster.startInvoker(RANKS, new CommConfig(), null)) {
            return cluster.run(AllReduceExample::rank, Duration.ofSeconds(60));
        }
    }

    /**
     * @param ranks the number of ranks that contributed
     * @param sum one rank's reduced vector
     * @return the first wrong element, as text, or null when every element is right
     */
    public static String mismatch(final int ranks, final float[] sum) {
        for (int i = 0; i < sum.length; i++) {
            if (sum[i] != expected(ranks, i)) {
                return "holds " + sum[i] + " at index " + i + ", expected " + expected(ranks, i);
            }
        }
        return null;
    }

    /**
     * @param args none ({@link #RANKS} ranks on loopback) or {@code env} (one rank of a launched job)
     * @throws Exception if the example fails
     */
    public static void main(final String[] args) throws Exception {
        if (args.length == 0) {
            final List<float[]> sums = runOnLoopback();
            for (int r = 0; r < sums.size(); r++) {
                report(r, sums.size(), sums.get(r));
            }
        } else if (args.length == 1 && args[0].equals("env")) {
            try (Communicator comm = Bootstrap.fromEnvironment(new CommConfig())) {
                report(comm.rank(), comm.size(), rank(comm));
            }
        } else {
            throw new IllegalArgumentException("usage: (no arguments) | env");
        }
    }

    private static void report(final int rank, final int ranks, final float[] sum) {
        final String wrong = mismatch(ranks, sum);
        System.out.println("rank " + rank + " of " + ranks + ": " + (wrong == null
            ? "all " + sum.length + " sums right" : wrong));
    }
}
