// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

import org.junit.jupiter.api.Test;
import org.metaroce.core.engine.Endpoint;

/**
 * The top-level classes of the engine and of the connection manager depend on each other in one
 * direction (issue 19): parts get narrow contexts handed in (RequesterContext, ResponderContext,
 * QueuePairContext, a listener's close action), not pointers back to the class that owns them.
 * Read from the compiled classes ({@link ClassGraph}), so a new cycle fails here with its classes.
 *
 * <p>A cycle the project keeps is allowed by naming one of its edges in {@link #ALLOWED}, with the
 * reason: the graph without the allowed edges must have no cycle, and every allowed edge must
 * still be on a cycle, so the list can only shrink.
 */
class ClassCycleTest {
    /** "package: From -> To" of each edge allowed to close a cycle, and why it is kept. */
    private static final Map<String, String> ALLOWED = Map.of(
        "org.metaroce.core.connection: CmEvent -> Connection",
        "rdma_cm's model in the public API: an event names its cm_id (rdma_cm_event.id) and a "
            + "connection keeps the parameters and handler it was made with (QpParams.handler), "
            + "whose method takes the event; breaking it would need a handle in CmEvent instead of the object",
        "org.metaroce.core.connection: CmEvent -> Listener",
        "the same for the listener (rdma_cm_event.listen_id): a listener keeps its ListenParams, "
            + "whose handler takes the event");

    @Test
    void theEngineHasNoClassCycle() throws IOException {
        check("org.metaroce.core.engine");
    }

    @Test
    void theConnectionManagersClassesHaveNoCycleButTheAllowedOnes() throws IOException {
        check("org.metaroce.core.connection");
    }

    private static void check(final String packageName) throws IOException {
        final Path classes = classesDirectory();
        final Map<String, Set<String>> uses = ClassGraph.of(classes, packageName);
        assertThat(uses).as("classes of %s in %s", packageName, classes).hasSizeGreaterThan(5);
        final List<Set<String>> cycles = ClassGraph.cycles(uses);
        System.out.println(packageName + ": " + uses.size() + " classes, classes on cycles: " + cycles);
        assertNoCycleButAllowed(packageName, uses, cycles, ALLOWED);
    }

    /**
     * Fails if the graph without the allowed edges of {@code packageName} has a cycle, or if an
     * allowed edge is gone or on no cycle any more (then it must leave the list).
     */
    static void assertNoCycleButAllowed(final String packageName, final Map<String, Set<String>> uses,
                                        final List<Set<String>> cycles, final Map<String, String> allowed) {
        final Map<String, Set<String>> rest = new TreeMap<>();
        uses.forEach((from, to) -> rest.put(from, new TreeSet<>(to)));
        final List<String> stale = new ArrayList<>();
        for (final String edge : allowed.keySet()) {
            if (!edge.startsWith(packageName + ": ")) {
                continue;
            }
            final String[] ends = edge.substring(packageName.length() + 2).split(" -> ");
            final boolean onCycle = cycles.stream().anyMatch(c -> c.contains(ends[0]) && c.contains(ends[1]));
            if (!rest.getOrDefault(ends[0], Set.of()).remove(ends[1]) || !onCycle) {
                stale.add(edge);
            }
        }
        assertThat(stale).as("allowed edges that no longer close a cycle: take them off the list").isEmpty();
        assertThat(ClassGraph.cycles(rest)).as("class cycles in %s without the allowed edges (uses: %s)",
            packageName, rest).isEmpty();
    }

    private static Path classesDirectory() {
        try {
            final Path p = Path.of(Endpoint.class.getProtectionDomain().getCodeSource().getLocation().toURI());
            assertThat(Files.isDirectory(p)).as("the core's classes are a directory (run from the build): %s", p)
                .isTrue();
            return p;
        } catch (final URISyntaxException ex) {
            throw new IllegalStateException(ex);
        }
    }
}
