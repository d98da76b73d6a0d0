// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.netty;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;

import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Fails a test that leaked a Netty buffer: after each test (and its own {@code @AfterEach}, which
 * closes the devices) it forces a garbage collection and asserts that Netty's PARANOID leak
 * detector reported nothing. Registered for every test of the module through the JUnit
 * extension auto-detection (see junit-platform.properties).
 */
public final class LeakCheckExtension implements BeforeAllCallback, AfterEachCallback {
    @Override
    public void beforeAll(final ExtensionContext context) {
        assertThat(RecordingLeakDetector.installed())
            .as("the recording leak detector must be installed with PARANOID level "
                + "(surefire system properties io.netty.customResourceLeakDetector and io.netty.leakDetection.level)")
            .isTrue();
    }

    @Override
    public void afterEach(final ExtensionContext context) {
        final List<String> leaks = RecordingLeakDetector.collectLeaks();
        assertThat(leaks).as("Netty buffer leaks in " + context.getDisplayName()).isEmpty();
    }
}
