package org.metaroce.conformance;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;

import org.junit.jupiter.api.Test;
import org.metaroce.conformance.cases.Catalog;
import org.metaroce.conformance.suite.CaseResult;
import org.metaroce.conformance.suite.SuiteConfig;
import org.metaroce.conformance.suite.SuiteRunner;
import org.metaroce.conformance.suite.Verdict;

/** The whole suite against the reference implementation's agent: every MUST case passes [CONF-001]. */
class ReferenceConformanceTest {
    @Test
    void referenceImplementationPassesEveryMustCase() {
        final long seed = Long.getLong("conformance.seed", 20261130L);
        System.out.println("conformance seed " + seed);
        try (ReferenceAgentFixture agent = new ReferenceAgentFixture()) {
            final SuiteRunner runner = new SuiteRunner(SuiteConfig.of(agent.control(), seed)
                .withSections(List.of(System.getProperty("conformance.cases", "").split(",")).stream()
                    .filter(s -> !s.isBlank()).toList()));
            final List<CaseResult> results = runner.run(Catalog.all(), r -> System.out.println(r.verdict() + " "
                + r.testCase().id() + (r.verdict() == Verdict.FAIL ? "\n   expected: " + r.expected()
                + "\n   actual:   " + r.actual() : r.message() != null ? " (" + r.message() + ")" : "")
                + " " + r.durationMs() + " ms"));
            assertThat(results).filteredOn(r -> r.verdict() == Verdict.FAIL || r.verdict() == Verdict.INCONCLUSIVE)
                .isEmpty();
        }
    }
}
