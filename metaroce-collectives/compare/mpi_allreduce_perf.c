/*
 * MPI_Allreduce timing in the shape of metaroce all_reduce_perf, for side-by-side comparison
 * (compare.sh): float32 sum, sizes -b..-e multiplied by -f, -w untimed then -n timed iterations per
 * size, out-of-place and in-place in alternating blocks of ceil(n / 10) iterations as the metaroce
 * tool does (PairedTiming); time = the slowest rank's mean per iteration (us), median next to it
 * (the median over pairs of consecutive iterations of their mean, as in the metaroce tool);
 * every result element checked after the timed iterations (same check data pattern: rank r element
 * i = r + i % 7, so the sum is exact in float).
 *
 * Build: mpicc -O2 -o mpi_allreduce_perf mpi_allreduce_perf.c
 * Run:   mpirun -np 4 --mca btl tcp,self ./mpi_allreduce_perf -b 8 -e 64M -f 4 -n 20 -w 5
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static long parse_size(const char *s) {
    char *end;
    long v = strtol(s, &end, 10);
    if (*end == 'K' || *end == 'k') v <<= 10;
    else if (*end == 'M' || *end == 'm') v <<= 20;
    else if (*end == 'G' || *end == 'g') v <<= 30;
    return v;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *) a, y = *(const double *) b;
    return x < y ? -1 : x > y;
}

static void fill(float *buf, long count, int rank) {
    for (long i = 0; i < count; i++) buf[i] = (float) (rank + i % 7);
}

static long check(const float *buf, long count, int ranks) {
    long wrong = 0;
    for (long i = 0; i < count; i++) {
        float expect = (float) (ranks * (ranks - 1) / 2 + ranks * (i % 7));
        wrong += buf[i] != expect;
    }
    return wrong;
}

int main(int argc, char **argv) {
    long minb = 8, maxb = 32 << 20, factor = 2;
    int iters = 20, warmup = 5;
    MPI_Init(&argc, &argv);
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "-b")) minb = parse_size(argv[i + 1]);
        else if (!strcmp(argv[i], "-e")) maxb = parse_size(argv[i + 1]);
        else if (!strcmp(argv[i], "-f")) factor = atol(argv[i + 1]);
        else if (!strcmp(argv[i], "-n")) iters = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "-w")) warmup = atoi(argv[i + 1]);
    }
    int rank, ranks;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    float *a = malloc(maxb + 8), *b = malloc(maxb + 8);
    double *times[2] = {malloc(sizeof(double) * iters), malloc(sizeof(double) * iters)};
    if (rank == 0) {
        printf("# MPI_Allreduce float sum, %d ranks, %d iterations after %d warmup, check on\n", ranks, iters, warmup);
        printf("#       size    count   oop time (us)  oop median   ip time (us)   ip median  #wrong\n");
    }
    long total_wrong = 0;
    for (long size = minb; size <= maxb; size *= factor) {
        long count = size / 4;
        fill(a, count, rank);
        fill(b, count, rank);
        for (int i = 0; i < warmup; i++) {
            MPI_Allreduce(a, b, (int) count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
            MPI_Allreduce(MPI_IN_PLACE, b, (int) count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        double sum[2] = {0, 0};
        /* Ten blocks of each variant: the wait for a rank that left the previous call late is
         * charged to the first call of a block only (PairedTiming.java says why). */
        int block = (iters + 9) / 10;
        for (int done = 0; done < iters; done += block) {
            int end = done + block < iters ? done + block : iters;
            for (int v = 0; v < 2; v++) {
                for (int i = done; i < end; i++) {
                    double t = MPI_Wtime();
                    if (v == 0) MPI_Allreduce(a, b, (int) count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
                    else MPI_Allreduce(MPI_IN_PLACE, b, (int) count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
                    t = (MPI_Wtime() - t) * 1e6;
                    times[v][i] = t;
                    sum[v] += t;
                }
            }
        }
        /* The median over pairs of consecutive iterations of their mean, as PairedTiming.medianUs. */
        double mean[2] = {sum[0] / iters, sum[1] / iters}, med[2];
        for (int v = 0; v < 2; v++) {
            if (iters == 1) {
                med[v] = times[v][0];
                continue;
            }
            int pairs = iters / 2;
            for (int i = 0; i < pairs; i++) times[v][i] = (times[v][2 * i] + times[v][2 * i + 1]) / 2;
            qsort(times[v], pairs, sizeof(double), cmp_double);
            med[v] = times[v][pairs / 2];
        }
        double meanmax[2], medmax[2];
        MPI_Reduce(mean, meanmax, 2, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
        MPI_Reduce(med, medmax, 2, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
        /* Checked runs, outside the timing: out of place, then in place. */
        fill(a, count, rank);
        MPI_Allreduce(a, b, (int) count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        long wrong = check(b, count, ranks);
        fill(b, count, rank);
        MPI_Allreduce(MPI_IN_PLACE, b, (int) count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        wrong += check(b, count, ranks);
        long wrong_total = 0;
        MPI_Reduce(&wrong, &wrong_total, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
        total_wrong += wrong_total;
        if (rank == 0) {
            printf("%12ld %8ld %15.1f %11.1f %14.1f %11.1f %7ld\n", size, count, meanmax[0], medmax[0], meanmax[1],
                   medmax[1], wrong_total);
            fflush(stdout);
        }
    }
    MPI_Finalize();
    return total_wrong != 0;
}
