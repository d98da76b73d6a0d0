// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.conformance;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.List;

import com.fasterxml.jackson.databind.node.ObjectNode;
import org.junit.jupiter.api.Test;
import org.metaroce.conformance.cases.Catalog;
import org.metaroce.conformance.report.Reports;
import org.metaroce.conformance.suite.CaseResult;
import org.metaroce.conformance.suite.ConformanceCase;
import org.metaroce.conformance.suite.Level;
import org.metaroce.conformance.suite.Verdict;

/** Reports: the console summary line, JUnit per section, per-requirement verdicts [CONF-015, CONF-016]. */
class ReportsTest {
    private static ConformanceCase c(final String id, final String section, final String... reqs) {
        return new ConformanceCase(id, section, Level.MUST, List.of(reqs), "t " + id, null, ctx -> { });
    }

    private static final List<CaseResult> RESULTS = List.of(
        new CaseResult(c("a", "3 Packet formats", "WIRE-041"), Verdict.PASS, null, null, null, 5),
        new CaseResult(c("b", "3 Packet formats", "WIRE-041", "WIRE-050"), Verdict.FAIL, "no answer", "an ACK <x>",
            null, 7),
        new CaseResult(c("c", "9 Connection management", "CM-010"), Verdict.SKIP, null, null, "feature", 0));

    @Test
    void consoleEndsWithTheSummaryAndShowsExpectedAndActual() {
        final StringWriter w = new StringWriter();
        Reports.console(RESULTS, new PrintWriter(w));
        final String[] lines = w.toString().split("\n");
        assertThat(lines[lines.length - 1]).isEqualTo("1 passed, 1 failed, 1 skipped");
        assertThat(w.toString()).contains("3 Packet formats").contains("Expected: no answer")
            .contains("Actual:   an ACK <x>");
        assertThat(Reports.mustFailed(RESULTS)).isTrue();
    }

    @Test
    void requirementTakesTheWorstVerdictOfItsCases() {
        assertThat(Reports.byRequirement(RESULTS)).containsEntry("WIRE-041", Verdict.FAIL)
            .containsEntry("WIRE-050", Verdict.FAIL).containsEntry("CM-010", Verdict.SKIP);
        final ObjectNode json = Reports.json(RESULTS, "x", 7, false);
        assertThat(json.get("requirements").get("WIRE-041").asText()).isEqualTo("FAIL");
        assertThat(json.get("counts").get("pass").asInt()).isEqualTo(1);
        assertThat(json.get("seed").asLong()).isEqualTo(7);
    }

    @Test
    void junitHasOneSuitePerSectionAndEscapesXml() {
        final StringWriter w = new StringWriter();
        Reports.junit(RESULTS, new PrintWriter(w));
        final String xml = w.toString();
        assertThat(xml.split("<testsuite ").length - 1).isEqualTo(2);
        assertThat(xml).contains("<failure").contains("an ACK &lt;x&gt;").contains("<skipped");
    }

    @Test
    void catalogueHasAtLeastSixtyCasesEachCitingRequirements() {
        final List<ConformanceCase> all = Catalog.all();
        assertThat(all.size()).isGreaterThanOrEqualTo(60);
        assertThat(all).allMatch(k -> !k.requirements().isEmpty()
            && k.requirements().stream().allMatch(r -> r.matches("[A-Z]+-\\d{3}")));
        assertThat(Reports.coverageMarkdown(all)).contains("| WIRE-041 | wire.integrity-check |");
    }
}
