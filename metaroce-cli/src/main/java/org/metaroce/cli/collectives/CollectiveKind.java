// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.cli.collectives;

/** The nccl-tests-style tools: one per collective, with the bus bandwidth factor nccl-tests uses. */
enum CollectiveKind {
    ALL_REDUCE("all_reduce_perf", true, false),
    ALL_GATHER("all_gather_perf", false, false),
    REDUCE_SCATTER("reduce_scatter_perf", true, false),
    BROADCAST("broadcast_perf", false, true),
    ALL_TO_ALL("all_to_all_perf", false, false);

    final String command;
    final boolean reduces;
    final boolean rooted;

    CollectiveKind(final String command, final boolean reduces, final boolean rooted) {
        this.command = command;
        this.reduces = reduces;
        this.rooted = rooted;
    }

    /** @return busbw / algbw for {@code n} ranks (nccl-tests' PERFORMANCE.md) */
    double busFactor(final int n) {
        return switch (this) {
            case ALL_REDUCE -> 2.0 * (n - 1) / n;
            case ALL_GATHER, REDUCE_SCATTER, ALL_TO_ALL -> (double) (n - 1) / n;
            case BROADCAST -> 1.0;
        };
    }

    /** @return elements per rank the size must be a multiple of */
    int granularity(final int n) {
        return this == ALL_REDUCE || this == BROADCAST ? 1 : n;
    }

    String description() {
        return switch (this) {
            case ALL_REDUCE -> "All-reduce bandwidth (nccl-tests style): size = bytes per rank; busbw = algbw x 2(n-1)/n.";
            case ALL_GATHER -> "All-gather bandwidth: size = bytes gathered per rank (n blocks); busbw = algbw x (n-1)/n.";
            case REDUCE_SCATTER -> "Reduce-scatter bandwidth: size = bytes reduced per rank (n blocks); busbw = algbw x "
                + "(n-1)/n.";
            case BROADCAST -> "Broadcast bandwidth from rank 0 (--root): busbw = algbw.";
            case ALL_TO_ALL -> "All-to-all bandwidth: size = bytes sent per rank (n blocks); busbw = algbw x (n-1)/n.";
        };
    }
}
