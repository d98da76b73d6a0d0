// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.netty;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.junit.jupiter.api.Test;
import org.metaroce.core.ClassGraph;

/**
 * The driver's top-level classes depend on each other in one direction (issue 19): the device
 * chooses its mode runner (the runner interface does not know its implementations), runners log
 * under the device's name without using the device, and send chunks go back to their pool
 * through a recycling function, not a pointer to the pool. Read from the compiled classes
 * ({@link ClassGraph}, the core's reader, from its test-jar), so a new cycle fails here with its
 * classes. No cycle is allowed.
 */
class ClassCycleTest {
    @Test
    void theDriversClassesFormNoCycle() throws IOException {
        final Path classes = ClassGraph.classesDirectory(MetaRoceDevice.class);
        final Map<String, Set<String>> uses = ClassGraph.of(classes, "org.metaroce.netty");
        assertThat(uses).containsKeys("MetaRoceDevice", "ModeRunner", "NettyUdpTransport", "DirectSendChunks");
        final List<Set<String>> cycles = ClassGraph.cycles(uses);
        System.out.println("org.metaroce.netty: " + uses.size() + " classes, classes on cycles: " + cycles);
        assertThat(cycles).as("class cycles in org.metaroce.netty (uses: %s)", uses).isEmpty();
    }
}
