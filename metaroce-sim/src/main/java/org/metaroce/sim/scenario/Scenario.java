// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.sim.scenario;

import java.util.Locale;

/** The named experiments of the simulator. */
public enum Scenario {
    /** N−1 senders write into one receiver at once. */
    INCAST("N:1 incast into host 0"),
    /** Every host sends to one other host, a random derangement. */
    PERMUTATION("random permutation"),
    /** Every host writes to every other host. */
    ALLTOALL("all-to-all"),
    /** Ring all-reduce across all hosts, ranks alternating leaves, on a 2:1 oversubscribed leaf-spine. */
    ALLREDUCE("ring all-reduce"),
    /** Web-search flow sizes with Poisson arrivals at 50% load. */
    WEBSEARCH("web-search background at 50% load"),
    /** Host 0 sends to every other host, with 1% random loss on host 0's link (every flow crosses it). */
    LOSS("fan-out from host 0 with 1% loss on its link");

    private final String description;

    Scenario(final String description) {
        this.description = description;
    }

    /** @return what the scenario runs */
    public String description() {
        return description;
    }

    /** @return the command-line name */
    public String cliName() {
        return name().toLowerCase(Locale.ROOT);
    }

    /**
     * @param name command-line name
     * @return the scenario
     */
    public static Scenario parse(final String name) {
        for (final Scenario s : values()) {
            if (s.cliName().equals(name)) {
                return s;
            }
        }
        final StringBuilder sb = new StringBuilder();
        for (final Scenario s : values()) {
            sb.append(sb.length() == 0 ? "" : ", ").append(s.cliName());
        }
        throw new IllegalArgumentException("unknown scenario '" + name + "': one of " + sb);
    }
}
