// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.conformance;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;
import org.metaroce.conformance.cases.Catalog;
import org.metaroce.conformance.suite.ConformanceCase;

/**
 * Every MUST has a case or a stated reason: each requirement of {@code spec-notes/} whose text
 * uses MUST or SHOULD (or their synonyms) must be cited by a unit test (its ID anywhere in a test
 * source under some module's {@code src/test}), by a conformance case of the catalogue, or be
 * listed in {@code docs/implementation-status.md} with the reason it is not tested. Withdrawn
 * and replaced requirements need nothing [CONF-005].
 */
class RequirementCitationTest {
    private static final Pattern MARKER = Pattern.compile("\\*\\*\\[([A-Z]+-\\d{3})\\]\\*\\*");
    private static final Pattern CITED = Pattern.compile("\\b([A-Z]{2,4}-\\d{3})\\b");
    private static final Pattern MUST = Pattern.compile("\\b(MUST|SHALL|REQUIRED)\\b");
    private static final Pattern SHOULD = Pattern.compile("\\b(SHOULD|RECOMMENDED)\\b");
    private static final Pattern RETIRED = Pattern.compile("^\\s*\\*(Replaced by|Withdrawn|withdrawn)");

    private static Path repoRoot() {
        Path dir = Paths.get("").toAbsolutePath();
        while (dir != null && !Files.isDirectory(dir.resolve("spec-notes"))) {
            dir = dir.getParent();
        }
        if (dir == null) {
            throw new IllegalStateException("cannot find the repository root (a directory holding spec-notes/)");
        }
        return dir;
    }

    /** @return requirement ID to level (MUST, SHOULD, MUST/SHOULD, other, retired), in specification order */
    static Map<String, String> levels(final Path specDir) {
        final Map<String, String> out = new LinkedHashMap<>();
        try (Stream<Path> files = Files.list(specDir)) {
            for (final Path f : files.filter(p -> p.toString().endsWith(".md")).sorted().toList()) {
                final String text = Files.readString(f);
                final Matcher m = MARKER.matcher(text);
                final List<int[]> spans = new java.util.ArrayList<>();
                final List<String> ids = new java.util.ArrayList<>();
                while (m.find()) {
                    ids.add(m.group(1));
                    spans.add(new int[] {m.start(), m.end()});
                }
                for (int i = 0; i < ids.size(); i++) {
                    // A requirement's text runs to the next marker or the end of its paragraph.
                    final int end = i + 1 < ids.size() ? spans.get(i + 1)[0] : text.length();
                    String body = text.substring(spans.get(i)[1], end);
                    final int para = body.indexOf("\n\n");
                    if (para >= 0) {
                        body = body.substring(0, para);
                    }
                    final boolean must = MUST.matcher(body).find();
                    final boolean should = SHOULD.matcher(body).find();
                    // A requirement with both key words (QP-001: a unique QPN MUST, a random one SHOULD)
                    // is MUST/SHOULD: a case may check either part.
                    final String level = RETIRED.matcher(body).find() ? "retired"
                        : must && should ? "MUST/SHOULD" : must ? "MUST" : should ? "SHOULD" : "other";
                    out.putIfAbsent(ids.get(i), level);
                }
            }
        } catch (final IOException ex) {
            throw new UncheckedIOException(ex);
        }
        return out;
    }

    /** @return every requirement-like ID in the test sources of every module */
    static Set<String> citedByTests(final Path root) {
        final Set<String> out = new TreeSet<>();
        try (Stream<Path> modules = Files.list(root)) {
            for (final Path test : modules.map(m -> m.resolve("src").resolve("test")).filter(Files::isDirectory)
                .toList()) {
                try (Stream<Path> files = Files.walk(test)) {
                    for (final Path f : files.filter(p -> p.toString().endsWith(".java")).toList()) {
                        final Matcher m = CITED.matcher(Files.readString(f));
                        while (m.find()) {
                            out.add(m.group(1));
                        }
                    }
                }
            }
        } catch (final IOException ex) {
            throw new UncheckedIOException(ex);
        }
        return out;
    }

    static Set<String> uncited() {
        final Path root = repoRoot();
        final Map<String, String> levels = levels(root.resolve("spec-notes"));
        final Set<String> cited = new TreeSet<>(citedByTests(root));
        for (final ConformanceCase c : Catalog.all()) {
            cited.addAll(c.requirements());
        }
        final Set<String> listed;
        try {
            final Matcher m = CITED.matcher(Files.readString(root.resolve("docs").resolve("implementation-status.md")));
            listed = new TreeSet<>();
            while (m.find()) {
                listed.add(m.group(1));
            }
        } catch (final IOException ex) {
            throw new UncheckedIOException(ex);
        }
        return levels.entrySet().stream()
            .filter(e -> e.getValue().contains("MUST") || e.getValue().contains("SHOULD"))
            .map(Map.Entry::getKey)
            .filter(id -> !cited.contains(id) && !listed.contains(id))
            .collect(Collectors.toCollection(TreeSet::new));
    }

    @Test
    void everyMustAndShouldIsCitedByATestOrACaseOrListedWithAReason() {
        final Set<String> missing = uncited();
        System.out.println("requirements (MUST/SHOULD) cited by no test, no case and not in implementation-status: "
            + missing.size() + " " + missing);
        assertThat(missing).as("MUST/SHOULD requirements with no unit test, no conformance case and no entry in "
            + "docs/implementation-status.md").isEmpty();
    }

    /** The parser itself: levels as the text says, and retired requirements exempt. */
    @Test
    void levelsFollowTheKeyWords() {
        final Map<String, String> levels = levels(repoRoot().resolve("spec-notes"));
        assertThat(levels).containsEntry("GEN-001", "MUST").containsEntry("GEN-007", "SHOULD")
            .containsEntry("QP-001", "MUST/SHOULD").containsEntry("CONF-010", "retired");
        assertThat(levels.keySet()).contains("REL-061", "MP-022", "CM-041", "CM-042", "CONF-022");
        // Conformance cases cite only requirements that exist.
        final Set<String> unknown = Catalog.all().stream().flatMap(c -> c.requirements().stream())
            .filter(id -> !levels.containsKey(id)).collect(Collectors.toCollection(TreeSet::new));
        assertThat(unknown).as("IDs cited by cases but absent from the specification").isEmpty();
    }
}
