// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.sim;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The simulator's packages depend on each other in one direction only (issue 19): the event core
 * ({@code sim}) on nothing, the fabric ({@code net}) on the core, then {@code transport},
 * {@code workload}, {@code measure}, {@code scenario} and {@code report}. Read from the
 * sources' imports, so a new cycle fails here with the packages that form it.
 */
class PackageCycleTest {
    private static final Path SOURCES = Path.of("src/main/java/org/metaroce/sim");
    private static final Pattern IMPORT = Pattern.compile("^import (org\\.metaroce\\.sim(?:\\.[a-z]+)*)\\.[A-Z]\\w*;",
        Pattern.MULTILINE);

    @Test
    void theSimulatorsPackagesFormNoCycle() throws IOException {
        final Map<String, Set<String>> uses = dependencies();
        assertThat(uses).containsKeys("org.metaroce.sim", "org.metaroce.sim.net", "org.metaroce.sim.scenario");
        for (final String from : uses.keySet()) {
            final List<String> cycle = cycleFrom(from, from, uses, new ArrayList<>(), new TreeSet<>());
            assertThat(cycle).as("package cycle through %s: %s (all dependencies: %s)", from, cycle, uses).isEmpty();
        }
    }

    /** The cycle back to {@code start} through {@code at}, or an empty list. */
    private static List<String> cycleFrom(final String start, final String at, final Map<String, Set<String>> uses,
                                          final List<String> path, final Set<String> seen) {
        path.add(at);
        for (final String next : uses.getOrDefault(at, Set.of())) {
            if (next.equals(start)) {
                final List<String> cycle = new ArrayList<>(path);
                cycle.add(start);
                return cycle;
            }
            if (seen.add(next)) {
                final List<String> found = cycleFrom(start, next, uses, path, seen);
                if (!found.isEmpty()) {
                    return found;
                }
            }
        }
        path.remove(path.size() - 1);
        return List.of();
    }

    private static Map<String, Set<String>> dependencies() throws IOException {
        final Map<String, Set<String>> uses = new TreeMap<>();
        try (Stream<Path> files = Files.walk(SOURCES)) {
            for (final Path file : (Iterable<Path>) files.filter(p -> p.toString().endsWith(".java"))::iterator) {
                final String source = Files.readString(file);
                final Matcher pkg = Pattern.compile("^package ([\\w.]+);", Pattern.MULTILINE).matcher(source);
                assertThat(pkg.find()).as("package line of %s", file).isTrue();
                final Set<String> used = uses.computeIfAbsent(pkg.group(1), k -> new TreeSet<>());
                final Matcher imports = IMPORT.matcher(source);
                while (imports.find()) {
                    if (!imports.group(1).equals(pkg.group(1))) {
                        used.add(imports.group(1));
                    }
                }
            }
        }
        return uses;
    }
}
