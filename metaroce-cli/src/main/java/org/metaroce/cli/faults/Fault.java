// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.cli.faults;

import java.util.Locale;

/**
 * One fault a trial puts on a run: random loss in a direction for the whole run, or, once the
 * client reports its first second of measurement, a stall (SIGSTOP then SIGCONT) of one end, a
 * blackhole of the link, or the death (SIGKILL) of the server; or a soak: loss both ways for a long
 * run over many queue pairs, with Netty's leak detector at PARANOID and the live heap of both ends
 * measured early and late in the run.
 *
 * @param kind what
 * @param direction for LOSS: which host's input drops (client→server: the server's)
 * @param end for STALL: which end is stopped
 * @param lossPercent for LOSS: percentage of datagrams dropped
 * @param seconds for STALL and BLACKHOLE: how long; for SOAK: the client's measured seconds
 * @param qps for SOAK: queue pairs of the run (else 0: the tool's default)
 */
public record Fault(Kind kind, Direction direction, End end, double lossPercent, double seconds, int qps) {
    /** What the fault does. */
    public enum Kind { NONE, LOSS, STALL, BLACKHOLE, KILL, SOAK }

    /** Which datagrams are lost. */
    public enum Direction {
        CLIENT_TO_SERVER("c->s"), SERVER_TO_CLIENT("s->c"), BOTH("both");

        /** Short label of the table. */
        public final String label;

        Direction(final String label) {
            this.label = label;
        }
    }

    /** Which end. */
    public enum End { SERVER, CLIENT }

    /** @return no fault */
    public static Fault none() {
        return new Fault(Kind.NONE, Direction.BOTH, End.SERVER, 0, 0, 0);
    }

    /** @return {@code percent}% loss in {@code direction} for the whole run */
    public static Fault loss(final Direction direction, final double percent) {
        return percent == 0 ? none() : new Fault(Kind.LOSS, direction, End.SERVER, percent, 0, 0);
    }

    /** @return {@code end} stopped for {@code seconds} mid-run */
    public static Fault stall(final End end, final double seconds) {
        return new Fault(Kind.STALL, Direction.BOTH, end, 0, seconds, 0);
    }

    /** @return every datagram in both directions dropped for {@code seconds} mid-run */
    public static Fault blackhole(final double seconds) {
        return new Fault(Kind.BLACKHOLE, Direction.BOTH, End.SERVER, 0, seconds, 0);
    }

    /** @return the server killed (SIGKILL) mid-run */
    public static Fault killServer() {
        return new Fault(Kind.KILL, Direction.BOTH, End.SERVER, 0, 0, 0);
    }

    /**
     * @return a soak: {@code percent}% loss both ways for {@code seconds} of measurement over
     *     {@code qps} queue pairs, leak detection PARANOID, heap measured early and late
     */
    public static Fault soak(final double percent, final double seconds, final int qps) {
        return new Fault(Kind.SOAK, Direction.BOTH, End.SERVER, percent, seconds, qps);
    }

    /** @return drop probability in 1/1000 (nft's granularity) */
    int permille() {
        return (int) Math.round(lossPercent * 10);
    }

    /** @return whether the fault waits for the run to be under way */
    boolean midRun() {
        return kind == Kind.STALL || kind == Kind.BLACKHOLE || kind == Kind.KILL;
    }

    /** @return the label of the table, e.g. "loss 1% c->s", "stall server 3s" */
    public String label() {
        return switch (kind) {
            case NONE -> "no fault";
            case LOSS -> "loss " + number(lossPercent) + "% " + direction.label;
            case STALL -> "stall " + end.name().toLowerCase(Locale.ROOT) + " " + number(seconds) + "s";
            case BLACKHOLE -> "blackhole " + number(seconds) + "s";
            case KILL -> "kill -9 server";
            case SOAK -> "soak " + qps + " QPs " + number(seconds) + "s loss " + number(lossPercent) + "% both";
        };
    }

    static String number(final double v) {
        return v == Math.rint(v) ? Long.toString((long) v) : Double.toString(v);
    }
}
