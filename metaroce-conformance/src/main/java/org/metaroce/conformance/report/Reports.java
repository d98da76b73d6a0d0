// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.conformance.report;

import java.io.PrintWriter;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.metaroce.conformance.agent.Json;
import org.metaroce.conformance.suite.CaseResult;
import org.metaroce.conformance.suite.ConformanceCase;
import org.metaroce.conformance.suite.Level;
import org.metaroce.conformance.suite.Verdict;

/**
 * The suite's reports (specification 12.4.5): a console tree by section with Expected and Actual
 * for each failure and a summary line last, a JSON document, JUnit XML with one test suite per
 * section, and the verdict per requirement ID [CONF-005].
 */
public final class Reports {
    private Reports() {
    }

    /** @return results grouped by section, in run order */
    static Map<String, List<CaseResult>> bySection(final List<CaseResult> results) {
        final Map<String, List<CaseResult>> m = new LinkedHashMap<>();
        for (final CaseResult r : results) {
            m.computeIfAbsent(r.testCase().section(), k -> new java.util.ArrayList<>()).add(r);
        }
        return m;
    }

    /** @return verdict counts */
    public static Map<Verdict, Integer> counts(final List<CaseResult> results) {
        final Map<Verdict, Integer> m = new EnumMap<>(Verdict.class);
        for (final Verdict v : Verdict.values()) {
            m.put(v, 0);
        }
        results.forEach(r -> m.merge(r.verdict(), 1, Integer::sum));
        return m;
    }

    /** @return whether a MUST case failed (or was inconclusive): the process exit code is then 1 */
    public static boolean mustFailed(final List<CaseResult> results) {
        return results.stream().anyMatch(r -> (r.verdict() == Verdict.FAIL || r.verdict() == Verdict.INCONCLUSIVE)
            && r.testCase().level() == Level.MUST);
    }

    /**
     * Per requirement ID: FAIL if any case citing it failed, else PASS if one passed, else the
     * other verdicts (SKIP, DEVIATION, INCONCLUSIVE).
     *
     * @param results case results
     * @return requirement ID to verdict, sorted by ID
     */
    public static Map<String, Verdict> byRequirement(final List<CaseResult> results) {
        final Map<String, Verdict> m = new TreeMap<>(Reports::compareIds);
        for (final CaseResult r : results) {
            for (final String id : r.testCase().requirements()) {
                m.merge(id, r.verdict(), Reports::worse);
            }
        }
        return m;
    }

    private static Verdict worse(final Verdict a, final Verdict b) {
        return rank(a) >= rank(b) ? a : b;
    }

    private static int rank(final Verdict v) {
        return switch (v) {
            case FAIL -> 4;
            case INCONCLUSIVE -> 3;
            case DEVIATION -> 2;
            case PASS -> 1;
            case SKIP -> 0;
        };
    }

    /** Orders requirement IDs by prefix, then number. */
    static int compareIds(final String a, final String b) {
        final int da = a.lastIndexOf('-');
        final int db = b.lastIndexOf('-');
        final int p = a.substring(0, Math.max(da, 0)).compareTo(b.substring(0, Math.max(db, 0)));
        if (p != 0 || da < 0 || db < 0) {
            return p != 0 ? p : a.compareTo(b);
        }
        try {
            return Integer.compare(Integer.parseInt(a.substring(da + 1)), Integer.parseInt(b.substring(db + 1)));
        } catch (final NumberFormatException ex) {
            return a.compareTo(b);
        }
    }

    /** @return one console line for a finished case (used live, as cases finish) */
    public static String line(final CaseResult r) {
        final StringBuilder sb = new StringBuilder("  ").append(pad(r.verdict().name(), 12)).append(' ')
            .append(r.testCase().id()).append(" - ").append(r.testCase().title()).append(' ')
            .append(r.testCase().requirements()).append(r.testCase().level() == Level.SHOULD ? " (SHOULD)" : "");
        if (r.verdict() == Verdict.FAIL || r.verdict() == Verdict.DEVIATION) {
            sb.append("\n      Expected: ").append(r.expected()).append("\n      Actual:   ").append(r.actual());
        } else if (r.message() != null) {
            sb.append("\n      ").append(r.message());
        }
        return sb.toString();
    }

    /** Writes the console tree and the summary line (last). */
    public static void console(final List<CaseResult> results, final PrintWriter out) {
        bySection(results).forEach((section, rs) -> {
            out.println(section);
            rs.forEach(r -> out.println(line(r)));
        });
        out.println();
        out.println(requirementSummary(results));
        out.println(summary(results));
        out.flush();
    }

    /** @return one line: requirement IDs by verdict, naming the failed ones [CONF-005] */
    public static String requirementSummary(final List<CaseResult> results) {
        final Map<String, Verdict> by = byRequirement(results);
        final Map<Verdict, Integer> c = new EnumMap<>(Verdict.class);
        by.values().forEach(v -> c.merge(v, 1, Integer::sum));
        return "Requirements: " + by.size() + " checked, " + c.getOrDefault(Verdict.PASS, 0) + " passed, "
            + c.getOrDefault(Verdict.FAIL, 0) + " failed " + by.entrySet().stream()
            .filter(e -> e.getValue() == Verdict.FAIL).map(Map.Entry::getKey).toList() + ", "
            + c.getOrDefault(Verdict.SKIP, 0) + " skipped";
    }

    /** @return "N passed, N failed, N skipped" (with deviations and inconclusive when present) */
    public static String summary(final List<CaseResult> results) {
        final Map<Verdict, Integer> c = counts(results);
        String s = c.get(Verdict.PASS) + " passed, " + c.get(Verdict.FAIL) + " failed, " + c.get(Verdict.SKIP)
            + " skipped";
        if (c.get(Verdict.DEVIATION) > 0) {
            s += ", " + c.get(Verdict.DEVIATION) + " deviations";
        }
        if (c.get(Verdict.INCONCLUSIVE) > 0) {
            s += ", " + c.get(Verdict.INCONCLUSIVE) + " inconclusive";
        }
        return s;
    }

    /** @return the JSON report: implementation, seed, cases, per-requirement verdicts, counts */
    public static ObjectNode json(final List<CaseResult> results, final String implementation, final long seed,
                                  final boolean strict) {
        final ObjectNode root = Json.object();
        root.put("implementation", implementation);
        root.put("seed", seed);
        root.put("strict", strict);
        final ArrayNode cases = root.putArray("cases");
        for (final CaseResult r : results) {
            final ConformanceCase c = r.testCase();
            final ObjectNode o = cases.addObject();
            o.put("id", c.id());
            o.put("section", c.section());
            o.put("level", c.level().name());
            o.put("title", c.title());
            final ArrayNode reqs = o.putArray("requirements");
            c.requirements().forEach(reqs::add);
            o.put("verdict", r.verdict().name());
            if (r.expected() != null) {
                o.put("expected", r.expected());
                o.put("actual", r.actual());
            }
            if (r.message() != null) {
                o.put("message", r.message());
            }
            o.put("duration_ms", r.durationMs());
        }
        final ObjectNode reqs = root.putObject("requirements");
        byRequirement(results).forEach((k, v) -> reqs.put(k, v.name()));
        final ObjectNode counts = root.putObject("counts");
        counts(results).forEach((k, v) -> counts.put(k.name().toLowerCase(java.util.Locale.ROOT), v));
        root.put("summary", summary(results));
        return root;
    }

    /** Writes JUnit XML: one {@code testsuite} per section, one {@code testcase} per case. */
    public static void junit(final List<CaseResult> results, final PrintWriter out) {
        out.println("<?xml version=\"1.0\" encoding=\"UTF-8\"?>");
        final Map<Verdict, Integer> all = counts(results);
        out.printf("<testsuites name=\"metaroce-conformance\" tests=\"%d\" failures=\"%d\" skipped=\"%d\">%n",
            results.size(), all.get(Verdict.FAIL), all.get(Verdict.SKIP));
        bySection(results).forEach((section, rs) -> {
            final Map<Verdict, Integer> c = counts(rs);
            final double time = rs.stream().mapToLong(CaseResult::durationMs).sum() / 1000.0;
            out.printf("  <testsuite name=\"%s\" tests=\"%d\" failures=\"%d\" errors=\"%d\" skipped=\"%d\" "
                + "time=\"%.3f\">%n", xml(section), rs.size(), c.get(Verdict.FAIL), c.get(Verdict.INCONCLUSIVE),
                c.get(Verdict.SKIP) + c.get(Verdict.DEVIATION), time);
            for (final CaseResult r : rs) {
                out.printf("    <testcase classname=\"%s\" name=\"%s %s\" time=\"%.3f\">%n", xml(section),
                    xml(r.testCase().id()), xml(String.join(",", r.testCase().requirements())), r.durationMs() / 1000.0);
                switch (r.verdict()) {
                    case FAIL -> out.printf("      <failure message=\"%s\">Expected: %s%nActual: %s</failure>%n",
                        xml(r.testCase().title()), xml(r.expected()), xml(r.actual()));
                    case INCONCLUSIVE -> out.printf("      <error message=\"%s\"/>%n", xml(r.message()));
                    case SKIP, DEVIATION -> out.printf("      <skipped message=\"%s\"/>%n", xml(r.verdict()
                        == Verdict.DEVIATION ? "known deviation: Expected " + r.expected() + ", Actual " + r.actual()
                        : r.message()));
                    default -> {
                    }
                }
                out.println("    </testcase>");
            }
            out.println("  </testsuite>");
        });
        out.println("</testsuites>");
        out.flush();
    }

    static String xml(final String s) {
        if (s == null) {
            return "";
        }
        final StringBuilder sb = new StringBuilder(s.length());
        for (int i = 0; i < s.length(); i++) {
            final char ch = s.charAt(i);
            switch (ch) {
                case '<' -> sb.append("&lt;");
                case '>' -> sb.append("&gt;");
                case '&' -> sb.append("&amp;");
                case '"' -> sb.append("&quot;");
                default -> {
                    if (ch >= 0x20 || ch == '\n' || ch == '\t') {
                        sb.append(ch);
                    }
                }
            }
        }
        return sb.toString();
    }

    private static String pad(final String s, final int n) {
        return s.length() >= n ? s : s + " ".repeat(n - s.length());
    }

    /**
     * The coverage table of docs/conformance.md: requirement ID to the cases citing it.
     *
     * @param cases the catalogue
     * @return markdown rows
     */
    public static String coverageMarkdown(final List<ConformanceCase> cases) {
        final Map<String, List<String>> m = new TreeMap<>(Reports::compareIds);
        for (final ConformanceCase c : cases) {
            for (final String id : c.requirements()) {
                m.computeIfAbsent(id, k -> new java.util.ArrayList<>()).add(c.id());
            }
        }
        final StringBuilder sb = new StringBuilder("| requirement | cases |\n|---|---|\n");
        m.forEach((id, cs) -> sb.append("| ").append(id).append(" | ").append(String.join(", ", cs)).append(" |\n"));
        return sb.toString();
    }
}
