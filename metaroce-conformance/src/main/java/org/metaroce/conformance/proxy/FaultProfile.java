// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.conformance.proxy;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * What the fault proxy does to packets, per direction, all decisions drawn from a seeded random
 * source so that a run is reproducible from its seed.
 *
 * @param lossPercent chance that a packet starts a loss burst
 * @param burst packets dropped per loss event (at least 1)
 * @param reorderPercent chance that a packet is held back {@code reorderMs} so later ones overtake it
 * @param reorderMs how long a reordered packet is held
 * @param duplicatePercent chance that a packet is sent twice
 * @param corruptPercent chance that one byte in [corruptFrom, corruptTo) is flipped
 * @param corruptFrom first byte offset that may be corrupted
 * @param corruptTo end (exclusive) of the corruptible range; past the datagram's end it is clipped
 * @param delayMs fixed one-way delay
 * @param jitterMs extra delay drawn uniformly from [0, jitterMs]
 * @param blackholes windows [start, end) in ms since the proxy started in which everything is dropped
 * @param ratePps policing rate in packets per second (0 = unlimited); excess is dropped
 */
public record FaultProfile(double lossPercent, int burst, double reorderPercent, double reorderMs,
                           double duplicatePercent, double corruptPercent, int corruptFrom, int corruptTo,
                           double delayMs, double jitterMs, List<long[]> blackholes, long ratePps) {
    /** A profile that forwards everything unchanged. */
    public static final FaultProfile NONE = new FaultProfile(0, 1, 0, 1, 0, 0, 0, Integer.MAX_VALUE, 0, 0, List.of(),
        0);

    public FaultProfile {
        check("loss", lossPercent);
        check("reorder", reorderPercent);
        check("dup", duplicatePercent);
        check("corrupt", corruptPercent);
        if (burst < 1 || corruptFrom < 0 || corruptTo < corruptFrom || delayMs < 0 || jitterMs < 0 || reorderMs < 0
            || ratePps < 0) {
            throw new IllegalArgumentException("invalid fault profile: burst >= 1, 0 <= corrupt range, delays and "
                + "rate >= 0");
        }
        for (final long[] w : blackholes) {
            if (w.length != 2 || w[0] < 0 || w[1] < w[0]) {
                throw new IllegalArgumentException("blackhole windows are start-end in ms with start <= end");
            }
        }
        blackholes = List.copyOf(blackholes);
    }

    private static void check(final String name, final double p) {
        if (p < 0 || p > 100) {
            throw new IllegalArgumentException(name + " must be a percentage in 0..100, got " + p);
        }
    }

    /**
     * Parses {@code key=value} pairs separated by commas: {@code loss=5,burst=3,reorder=2,reorder-ms=1,
     * dup=1,corrupt=1@24-56,delay=2,jitter=1,blackhole=1000-1500,rate=10000}; blackhole may repeat.
     *
     * @param spec the profile text ("" or "none" for no faults)
     * @return the profile
     * @throws IllegalArgumentException naming the bad part
     */
    public static FaultProfile parse(final String spec) {
        double loss = 0;
        int burst = 1;
        double reorder = 0;
        double reorderMs = 1;
        double dup = 0;
        double corrupt = 0;
        int from = 0;
        int to = Integer.MAX_VALUE;
        double delay = 0;
        double jitter = 0;
        final List<long[]> holes = new ArrayList<>();
        long rate = 0;
        if (spec == null || spec.isBlank() || spec.equalsIgnoreCase("none")) {
            return NONE;
        }
        for (final String part : spec.split(",")) {
            final int eq = part.indexOf('=');
            if (eq < 0) {
                throw new IllegalArgumentException("fault '" + part + "' is not key=value");
            }
            final String key = part.substring(0, eq).trim().toLowerCase(Locale.ROOT);
            final String value = part.substring(eq + 1).trim();
            try {
                switch (key) {
                    case "loss" -> loss = Double.parseDouble(value);
                    case "burst" -> burst = Integer.parseInt(value);
                    case "reorder" -> reorder = Double.parseDouble(value);
                    case "reorder-ms" -> reorderMs = Double.parseDouble(value);
                    case "dup" -> dup = Double.parseDouble(value);
                    case "corrupt" -> {
                        final int at = value.indexOf('@');
                        corrupt = Double.parseDouble(at < 0 ? value : value.substring(0, at));
                        if (at >= 0) {
                            final String[] r = value.substring(at + 1).split("-");
                            from = Integer.parseInt(r[0]);
                            to = Integer.parseInt(r[1]);
                        }
                    }
                    case "delay" -> delay = Double.parseDouble(value);
                    case "jitter" -> jitter = Double.parseDouble(value);
                    case "blackhole" -> {
                        final String[] r = value.split("-");
                        holes.add(new long[] {Long.parseLong(r[0]), Long.parseLong(r[1])});
                    }
                    case "rate" -> rate = Long.parseLong(value);
                    default -> throw new IllegalArgumentException("unknown fault '" + key + "' (known: loss, burst, "
                        + "reorder, reorder-ms, dup, corrupt, delay, jitter, blackhole, rate)");
                }
            } catch (final NumberFormatException | ArrayIndexOutOfBoundsException ex) {
                throw new IllegalArgumentException("bad value in fault '" + part + "'", ex);
            }
        }
        return new FaultProfile(loss, burst, reorder, reorderMs, dup, corrupt, from, to, delay, jitter, holes, rate);
    }
}
