// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.conformance.report;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import org.metaroce.conformance.suite.ConformanceCase;

/**
 * Requirement coverage: which cases cite each requirement ID of the specification, and which
 * MUST requirements no case checks yet (for docs/conformance.md).
 */
public final class Coverage {
    private static final Pattern ID = Pattern.compile("\\*\\*\\[([A-Z]+-\\d{3})\\]\\*\\*");
    private static final Pattern MUST = Pattern.compile("\\b(MUST|SHALL|REQUIRED)\\b");

    private Coverage() {
    }

    /**
     * Reads every normative statement of the specification.
     *
     * @param specDir the spec-notes directory
     * @return requirement ID to whether it states a MUST-level requirement
     */
    public static Map<String, Boolean> requirements(final Path specDir) {
        final Map<String, Boolean> out = new LinkedHashMap<>();
        try (Stream<Path> files = Files.list(specDir)) {
            for (final Path f : files.filter(p -> p.toString().endsWith(".md")).sorted().toList()) {
                final String text = Files.readString(f);
                final Matcher m = ID.matcher(text);
                final List<int[]> spans = new ArrayList<>();
                final List<String> ids = new ArrayList<>();
                while (m.find()) {
                    ids.add(m.group(1));
                    spans.add(new int[] {m.end(), 0});
                }
                for (int i = 0; i < ids.size(); i++) {
                    final int end = i + 1 < ids.size() ? spans.get(i + 1)[0] : text.length();
                    String body = text.substring(spans.get(i)[0], end);
                    final int para = body.indexOf("\n\n");
                    if (para >= 0) {
                        body = body.substring(0, para);
                    }
                    out.putIfAbsent(ids.get(i), MUST.matcher(body).find());
                }
            }
        } catch (final IOException ex) {
            throw new UncheckedIOException("cannot read the specification in " + specDir, ex);
        }
        return out;
    }

    /**
     * @param specDir spec-notes
     * @param cases the catalogue
     * @return markdown: the coverage table, then the MUST requirements without a case
     */
    public static String markdown(final Path specDir, final List<ConformanceCase> cases) {
        final Map<String, Boolean> reqs = requirements(specDir);
        final Map<String, List<String>> cited = new TreeMap<>(Reports::compareIds);
        for (final ConformanceCase c : cases) {
            for (final String id : c.requirements()) {
                cited.computeIfAbsent(id, k -> new ArrayList<>()).add(c.id());
            }
        }
        final StringBuilder sb = new StringBuilder();
        final long must = reqs.values().stream().filter(b -> b).count();
        final long mustCovered = reqs.entrySet().stream().filter(e -> e.getValue() && cited.containsKey(e.getKey()))
            .count();
        sb.append(cases.size()).append(" cases cite ").append(cited.size()).append(" requirement IDs; ")
            .append(mustCovered).append(" of the ").append(must).append(" MUST-level requirements have a case.\n\n");
        sb.append("| requirement | level | cases |\n|---|---|---|\n");
        cited.forEach((id, cs) -> sb.append("| ").append(id).append(" | ")
            .append(reqs.containsKey(id) ? (reqs.get(id) ? "MUST" : "other") : "not in spec").append(" | ")
            .append(String.join(", ", cs)).append(" |\n"));
        sb.append("\nMUST-level requirements with no case yet:\n\n");
        final StringBuilder missing = new StringBuilder();
        reqs.forEach((id, isMust) -> {
            if (isMust && !cited.containsKey(id)) {
                missing.append(missing.length() == 0 ? "" : ", ").append(id);
            }
        });
        sb.append(missing).append('\n');
        return sb.toString();
    }
}
