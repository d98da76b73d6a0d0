/*
 * SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
 * SPDX-License-Identifier: Apache-2.0
 *
 * How long one cache line takes to move between two CPUs of this host: two threads, pinned to the
 * first two CPUs this process may run on, hand a counter back and forth; prints the median of five
 * trials in ns per one-way hop. On a virtual machine the figure says where the host placed the
 * vCPUs: on the 2-vCPU machines of this project about 35 ns (siblings or one core complex) or
 * 170-220 ns (far apart), and in the second placement the kernel's UDP loopback moves about a
 * third as much (docs/collectives.md, "The host's slow mode"). compare.sh prints it around each
 * contender so that rounds in different placements are not compared.
 *
 * Build: cc -O2 -pthread -o cross_cpu_hop cross_cpu_hop.c
 * Run:   ./cross_cpu_hop            -> "cross-CPU hop 36 ns (CPUs 0 and 1)"
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define HOPS 400000L
#define TRIALS 5

static _Atomic long turn __attribute__((aligned(64)));
static int cpus[2];

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static int pin(int cpu) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    return pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}

/* Takes the odd turns: waits for i, answers i + 1. */
static void *answer(void *unused) {
    (void) unused;
    if (pin(cpus[1]) != 0) {
        return (void *) 1;
    }
    for (long i = 1; i < HOPS; i += 2) {
        while (atomic_load_explicit(&turn, memory_order_acquire) != i) {
        }
        atomic_store_explicit(&turn, i + 1, memory_order_release);
    }
    return NULL;
}

static int by_value(const void *a, const void *b) {
    double x = *(const double *) a, y = *(const double *) b;
    return (x > y) - (x < y);
}

int main(void) {
    cpu_set_t allowed;
    if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) {
        perror("sched_getaffinity");
        return 1;
    }
    int found = 0;
    for (int c = 0; c < CPU_SETSIZE && found < 2; c++) {
        if (CPU_ISSET(c, &allowed)) {
            cpus[found++] = c;
        }
    }
    if (found < 2) {
        printf("cross-CPU hop: n/a (one CPU)\n");
        return 0;
    }
    double ns[TRIALS];
    for (int t = 0; t < TRIALS; t++) {
        atomic_store(&turn, 0);
        pthread_t other;
        if (pin(cpus[0]) != 0 || pthread_create(&other, NULL, answer, NULL) != 0) {
            fprintf(stderr, "cross_cpu_hop: cannot pin or start the second thread\n");
            return 1;
        }
        double start = now();
        for (long i = 0; i < HOPS; i += 2) {
            while (atomic_load_explicit(&turn, memory_order_acquire) != i) {
            }
            atomic_store_explicit(&turn, i + 1, memory_order_release);
        }
        double end = now();
        void *failed;
        pthread_join(other, &failed);
        if (failed != NULL) {
            fprintf(stderr, "cross_cpu_hop: cannot pin the second thread to CPU %d\n", cpus[1]);
            return 1;
        }
        ns[t] = (end - start) / HOPS * 1e9;
    }
    qsort(ns, TRIALS, sizeof ns[0], by_value);
    printf("cross-CPU hop %.0f ns (CPUs %d and %d)\n", ns[TRIALS / 2], cpus[0], cpus[1]);
    return 0;
}
