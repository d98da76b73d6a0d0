// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.junit.jupiter.api.Test;
import org.metaroce.core.engine.Endpoint;

/**
 * The top-level classes of the engine and of the connection manager depend on each other in one
 * direction (issue 19): parts get narrow contexts handed in (RequesterContext, ResponderContext,
 * QueuePairContext, the connection manager's CmContext, a listener's close action), not pointers
 * back to the class that owns them, and a connection or listener does not keep the parameters
 * whose event handler takes the event that names it. Read from the compiled classes
 * ({@link ClassGraph}), so a new cycle fails here with its classes. No cycle is allowed.
 */
class ClassCycleTest {
    @Test
    void theEngineHasNoClassCycle() throws IOException {
        check("org.metaroce.core.engine", "Endpoint", "QueuePair", "Requester", "Responder");
    }

    @Test
    void theConnectionManagerHasNoClassCycle() throws IOException {
        check("org.metaroce.core.connection", "ConnectionManager", "Connection", "CmEvent", "CmEventHandler",
            "Listener", "QpParams", "CmPacketReceiver");
    }

    private static void check(final String packageName, final String... expected) throws IOException {
        final Path classes = ClassGraph.classesDirectory(Endpoint.class);
        final Map<String, Set<String>> uses = ClassGraph.of(classes, packageName);
        assertThat(uses).as("classes of %s in %s", packageName, classes).containsKeys(expected);
        final List<Set<String>> cycles = ClassGraph.cycles(uses);
        System.out.println(packageName + ": " + uses.size() + " classes, classes on cycles: " + cycles);
        assertThat(cycles).as("class cycles in %s (uses: %s)", packageName, uses).isEmpty();
    }
}
