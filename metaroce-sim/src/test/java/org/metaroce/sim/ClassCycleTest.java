// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.sim;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.junit.jupiter.api.Test;
import org.metaroce.core.ClassGraph;

/**
 * The simulator's packages form no cycle (issue 19), read from the compiled classes with the
 * core's {@link ClassGraph} (from its test-jar): unlike {@link PackageCycleTest}, which reads the
 * sources' imports, this also sees a class named in full without an import, and the classes a
 * lambda or a constant pulls in.
 */
class ClassCycleTest {
    @Test
    void theSimulatorsPackagesFormNoCycleInTheCompiledClasses() throws IOException {
        final Path classes = ClassGraph.classesDirectory(Simulator.class);
        final Map<String, Set<String>> uses = ClassGraph.packages(classes, "org.metaroce.sim");
        // The fabric runs on the event core: a reader that saw no dependency would pass vacuously.
        assertThat(uses.get("org.metaroce.sim.net")).contains("org.metaroce.sim");
        assertThat(uses).containsKeys("org.metaroce.sim.scenario", "org.metaroce.sim.report");
        final List<Set<String>> cycles = ClassGraph.cycles(uses);
        assertThat(cycles).as("package cycles in the simulator (uses: %s)", uses).isEmpty();
    }
}
