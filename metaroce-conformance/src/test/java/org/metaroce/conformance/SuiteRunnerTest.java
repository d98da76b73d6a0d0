// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.conformance;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

import org.junit.jupiter.api.Test;
import org.metaroce.conformance.suite.CaseContext;
import org.metaroce.conformance.suite.CaseResult;
import org.metaroce.conformance.suite.ConformanceCase;
import org.metaroce.conformance.suite.Level;
import org.metaroce.conformance.suite.SuiteConfig;
import org.metaroce.conformance.suite.SuiteRunner;
import org.metaroce.conformance.suite.Verdict;

/** The runner's verdicts: skips, deviations, agent errors and hangs [CONF-003, CONF-004, CONF-015]. */
class SuiteRunnerTest {
    private static ConformanceCase c(final String id, final Level level, final String feature,
                                     final org.metaroce.conformance.suite.CaseBody body) {
        return new ConformanceCase(id, "1 Test", level, List.of("GEN-001"), id, feature, body);
    }

    @Test
    void verdictsForEveryOutcome() {
        try (ReferenceAgentFixture agent = new ReferenceAgentFixture()) {
            final SuiteConfig base = SuiteConfig.of(agent.control(), 1).withDeviations(Set.of("GEN-001"));
            final SuiteConfig config = new SuiteConfig(base.agent(), null, base.bind(), false, 1, List.of(), List.of(),
                base.deviations(), 2000);
            final List<ConformanceCase> cases = List.of(
                c("pass", Level.MUST, null, ctx -> CaseContext.check(ctx.regMr(64, 7, "LOCAL_WRITE").length() == 64,
                    "a region", "none")),
                // REPS: a feature the reference never declares (ECN it declares on the native transport).
                c("needs-reps", Level.MUST, "REPS", ctx -> CaseContext.check(false, "never run", "ran")),
                c("should", Level.SHOULD, null, ctx -> CaseContext.check(false, "never run", "ran")),
                c("deviation", Level.MUST, null, ctx -> CaseContext.check(false, "x", "y")),
                c("unsupported", Level.MUST, null, ctx -> ctx.call("frobnicate", o -> { })),
                c("agent-error", Level.MUST, null, ctx -> ctx.call("dereg_mr", o -> o.put("mr", 999_999))),
                c("hang", Level.MUST, null, ctx -> Thread.sleep(60_000)));
            final Map<String, CaseResult> r = new SuiteRunner(config).run(cases, x -> { }).stream()
                .collect(Collectors.toMap(x -> x.testCase().id(), x -> x));
            assertThat(r.get("pass").verdict()).isEqualTo(Verdict.PASS);
            assertThat(r.get("needs-reps").verdict()).isEqualTo(Verdict.SKIP);
            assertThat(r.get("needs-reps").message()).contains("REPS");
            assertThat(r.get("should").verdict()).isEqualTo(Verdict.SKIP);
            assertThat(r.get("deviation").verdict()).isEqualTo(Verdict.DEVIATION);
            assertThat(r.get("unsupported").verdict()).isEqualTo(Verdict.SKIP);
            assertThat(r.get("agent-error").verdict()).isEqualTo(Verdict.INCONCLUSIVE);
            assertThat(r.get("agent-error").message()).contains("NOT_FOUND");
            assertThat(r.get("hang").verdict()).isEqualTo(Verdict.DEVIATION);
            assertThat(r.get("hang").actual()).contains("hung");
        }
    }
}
