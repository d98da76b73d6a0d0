// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.bench.compare;

/**
 * What one run of a cell measured.
 *
 * @param value the headline figure: Gb/s delivered (bandwidth), median round trip in µs
 *     (ping-pong), M packets/s (engine)
 * @param p99 99th percentile round trip in µs (ping-pong), else NaN
 * @param allocBytesPerOp bytes allocated per operation (message, round trip, 64 KiB WRITE), from
 *     JMH's GC profiler
 */
public record Figure(double value, double p99, double allocBytesPerOp) {
}
