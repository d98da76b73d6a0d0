// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.conformance;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;

import org.junit.jupiter.api.Test;
import org.metaroce.conformance.cases.Catalog;
import org.metaroce.conformance.suite.CaseResult;
import org.metaroce.conformance.suite.SuiteConfig;
import org.metaroce.conformance.suite.SuiteRunner;
import org.metaroce.conformance.suite.Verdict;

/** The whole suite against the reference implementation's agent: every MUST case passes [CONF-001]. */
class ReferenceConformanceTest {
    /**
     * The catalogue's size: a case dropped from {@link Catalog} (or one added without updating
     * docs/conformance.md) fails here instead of silently changing what the suite checks.
     */
    static final int CASES = 172;

    /**
     * The cases the reference skips, and why: only these may SKIP, so a case that starts skipping
     * (an agent answer turned UNSUPPORTED, a feature no longer declared) fails the test.
     *
     * @param nativeTransport whether the reference runs on the native transport, where it reads CE
     *     marks and declares ECN [ENC-016]
     */
    static Set<String> expectedSkips(final boolean nativeTransport) {
        final Set<String> skips = new TreeSet<>();
        // A SHOULD case (SEC-001, QP-001's randomness): SHOULD cases run only in strict mode [CONF-003].
        skips.add("cm.qpn-random");
        if (!nativeTransport) {
            // Needs the ECN feature, which the reference declares only where it reads CE marks.
            skips.add("cc.ecn-echo-reaction");
        }
        return skips;
    }

    @Test
    void referenceImplementationPassesEveryMustCase() {
        final long seed = Long.getLong("conformance.seed", 20261130L);
        System.out.println("conformance seed " + seed);
        final List<String> filter = List.of(System.getProperty("conformance.cases", "").split(",")).stream()
            .filter(s -> !s.isBlank()).toList();
        try (ReferenceAgentFixture agent = new ReferenceAgentFixture()) {
            final SuiteRunner runner = new SuiteRunner(SuiteConfig.of(agent.control(), seed)
                .withSections(filter));
            final List<CaseResult> results = runner.run(Catalog.all(), r -> System.out.println(r.verdict() + " "
                + r.testCase().id() + (r.verdict() == Verdict.FAIL ? "\n   expected: " + r.expected()
                + "\n   actual:   " + r.actual() : r.message() != null ? " (" + r.message() + ")" : "")
                + " " + r.durationMs() + " ms"));
            assertThat(results).filteredOn(r -> r.verdict() == Verdict.FAIL || r.verdict() == Verdict.INCONCLUSIVE)
                .isEmpty();
            if (filter.isEmpty()) {
                assertThat(Catalog.all()).as("cases in the catalogue").hasSize(CASES);
                assertThat(results).as("cases run").hasSize(CASES);
                final Set<String> skipped = results.stream().filter(r -> r.verdict() == Verdict.SKIP)
                    .map(r -> r.testCase().id()).collect(Collectors.toCollection(TreeSet::new));
                assertThat(skipped).as("the skipped cases").isEqualTo(
                    expectedSkips(org.metaroce.netty.linux.NativeUdp.isAvailable()));
                assertThat(results).filteredOn(r -> r.verdict() == Verdict.PASS).as("passed")
                    .hasSize(CASES - skipped.size());
            }
        }
    }

    /**
     * The cases that need the ECN feature, against the self-test variant of the reference that
     * declares it (its requester reacts to ECN_ECHO; in normal use it does not declare ECN because
     * the driver cannot read CE marks [ENC-016]). Each must PASS, not SKIP [CC-012, CONF-001].
     */
    @Test
    void ecnSelfTestVariantPassesTheEcnCases() {
        final long seed = Long.getLong("conformance.seed", 20261130L);
        System.out.println("conformance seed " + seed);
        final List<String> ecnCases = Catalog.all().stream().filter(c -> "ECN".equals(c.feature()))
            .map(c -> c.id()).toList();
        assertThat(ecnCases).contains("cc.ecn-echo-reaction");
        try (ReferenceAgentFixture agent = new ReferenceAgentFixture(true)) {
            final List<CaseResult> results = new SuiteRunner(SuiteConfig.of(agent.control(), seed)
                .withCases(ecnCases)).run(Catalog.all(), r -> System.out.println(r.verdict() + " "
                    + r.testCase().id() + (r.verdict() == Verdict.FAIL ? "\n   expected: " + r.expected()
                    + "\n   actual:   " + r.actual() : r.message() != null ? " (" + r.message() + ")" : "")
                    + " " + r.durationMs() + " ms"));
            assertThat(results).hasSize(ecnCases.size()).allMatch(r -> r.verdict() == Verdict.PASS,
                "every ECN case passes");
        }
    }

    /**
     * On the native transport (picked by AUTO on Linux with JDK 22+, from the multi-release jar)
     * the reference reads CE marks and declares ECN by itself: the ECN cases run and pass without
     * the self-test switch [ENC-016, CONF-012].
     */
    @Test
    void onTheNativeTransportTheReferenceDeclaresEcnAndPassesTheEcnCases() {
        org.junit.jupiter.api.Assumptions.assumeTrue(org.metaroce.netty.linux.NativeUdp.isAvailable(),
            () -> "native transport unavailable (the reference runs on Netty and does not declare ECN): "
                + org.metaroce.netty.linux.NativeUdp.unavailabilityReason().orElse(""));
        final long seed = Long.getLong("conformance.seed", 20261130L);
        System.out.println("conformance seed " + seed);
        final List<String> ecnCases = Catalog.all().stream().filter(c -> "ECN".equals(c.feature()))
            .map(c -> c.id()).toList();
        try (ReferenceAgentFixture agent = new ReferenceAgentFixture()) {
            final List<CaseResult> results = new SuiteRunner(SuiteConfig.of(agent.control(), seed)
                .withCases(ecnCases)).run(Catalog.all(), r -> System.out.println(r.verdict() + " "
                    + r.testCase().id() + (r.verdict() == Verdict.FAIL ? "\n   expected: " + r.expected()
                    + "\n   actual:   " + r.actual() : r.message() != null ? " (" + r.message() + ")" : "")
                    + " " + r.durationMs() + " ms"));
            assertThat(results).hasSize(ecnCases.size()).allMatch(r -> r.verdict() == Verdict.PASS,
                "every ECN case passes without the switch");
        }
    }
}
