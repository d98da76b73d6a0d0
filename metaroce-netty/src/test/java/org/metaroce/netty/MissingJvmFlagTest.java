// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.netty;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;
import org.metaroce.core.JvmAccess;
import org.metaroce.core.SeededRandomSource;
import org.metaroce.core.engine.Endpoint;
import org.metaroce.core.engine.EndpointConfig;

/**
 * Without {@code --add-exports java.base/jdk.internal.misc=...} Agrona cannot reach
 * {@code Unsafe}: the first endpoint or device must say which flag to add (class path and module
 * path), not surface Agrona's raw {@link IllegalAccessError}. Checked in a JVM forked without the
 * flag, on this test's class path.
 */
class MissingJvmFlagTest {

    @Test
    void thisJvmHasTheFlag() {
        assertThat(JvmAccess.unsafeExported()).isTrue();
        assertThat(JvmAccess.requireUnsafeExport()).isTrue();
    }

    @ParameterizedTest
    @ValueSource(strings = {"endpoint", "device"})
    void firstTouchWithoutTheFlagNamesIt(final String what) throws Exception {
        final String classpath = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
        final Process p = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
            "-cp", classpath, Probe.class.getName(), what).redirectErrorStream(true).start();
        p.getOutputStream().close();
        final String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).as(out).isEqualTo(Probe.REFUSED);
        assertThat(out)
            .contains("--add-exports java.base/jdk.internal.misc=ALL-UNNAMED")
            .contains("--add-exports java.base/jdk.internal.misc=org.agrona")
            .contains("Add-Exports: java.base/jdk.internal.misc")
            .contains("from the class path")
            .doesNotContain("IllegalAccessError");
    }

    /** Constructs an endpoint or a device in a JVM without the flag; prints what it was told. */
    public static final class Probe {
        static final int REFUSED = 3;

        private Probe() {
        }

        public static void main(final String[] args) throws IOException {
            try {
                if ("device".equals(args[0])) {
                    new MetaRoceDevice(new DeviceConfig().bindAddress(InetAddress.getLoopbackAddress()).endpointPort(0))
                        .close();
                } else {
                    new Endpoint(new EndpointConfig(), new SeededRandomSource(1));
                }
                System.out.println("constructed without the flag");
            } catch (final IllegalStateException e) {
                System.out.println(e.getMessage());
                System.exit(REFUSED);
            }
        }
    }
}
