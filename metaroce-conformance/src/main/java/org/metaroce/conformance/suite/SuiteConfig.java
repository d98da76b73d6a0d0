// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.conformance.suite;

import java.net.InetSocketAddress;
import java.util.List;
import java.util.Set;

/**
 * How to run the suite.
 *
 * @param agent the agent's control address
 * @param target where the lower tester sends (null: the endpoint the agent declares)
 * @param bind the lower tester's local address (port 0)
 * @param strict whether SHOULD cases run and count [CONF-003]
 * @param seed seed of every random choice the suite makes
 * @param sections section filters (prefix of the section title or case ID), empty for all
 * @param caseIds case IDs to run, empty for all
 * @param deviations requirement IDs the IUT declares it does not meet [CONF-004]
 * @param caseTimeoutMs anti-hang guard per case
 */
public record SuiteConfig(InetSocketAddress agent, InetSocketAddress target, InetSocketAddress bind, boolean strict,
                          long seed, List<String> sections, List<String> caseIds, Set<String> deviations,
                          long caseTimeoutMs) {
    /** @return a default configuration for an agent at {@code agent} */
    public static SuiteConfig of(final InetSocketAddress agent, final long seed) {
        return new SuiteConfig(agent, null, new InetSocketAddress(agent.getAddress(), 0), false, seed, List.of(),
            List.of(), Set.of(), 30_000);
    }

    public SuiteConfig withStrict(final boolean s) {
        return new SuiteConfig(agent, target, bind, s, seed, sections, caseIds, deviations, caseTimeoutMs);
    }

    public SuiteConfig withTarget(final InetSocketAddress t) {
        return new SuiteConfig(agent, t, bind, strict, seed, sections, caseIds, deviations, caseTimeoutMs);
    }

    public SuiteConfig withSections(final List<String> s) {
        return new SuiteConfig(agent, target, bind, strict, seed, List.copyOf(s), caseIds, deviations, caseTimeoutMs);
    }

    public SuiteConfig withCases(final List<String> c) {
        return new SuiteConfig(agent, target, bind, strict, seed, sections, List.copyOf(c), deviations, caseTimeoutMs);
    }

    public SuiteConfig withDeviations(final Set<String> d) {
        return new SuiteConfig(agent, target, bind, strict, seed, sections, caseIds, Set.copyOf(d), caseTimeoutMs);
    }

    /** @return whether the filters select {@code c} */
    public boolean selects(final ConformanceCase c) {
        final boolean section = sections.isEmpty() || sections.stream().anyMatch(s -> c.section().startsWith(s)
            || c.id().startsWith(s));
        final boolean id = caseIds.isEmpty() || caseIds.contains(c.id());
        return section && id;
    }
}
