// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The executable jar as a user runs it: {@code java -jar metaroce.jar write_bw --loopback -D 1}
 * with no JVM flag, on the JDK that runs the build. Its manifest must grant what the library needs
 * ({@code Add-Exports: java.base/jdk.internal.misc}, {@code Enable-Native-Access: ALL-UNNAMED}),
 * so the JDK prints none of its warnings: since JDK 24 a call of a restricted method
 * ({@code System.loadLibrary} by Netty's epoll transport, {@code java.lang.foreign} by the native
 * one) from code without native access prints four "WARNING:" lines on every run.
 *
 * <p>Runs after {@code package} (surefire execution {@code executable-jar} of metaroce-cli, phase
 * integration-test), where {@code target/metaroce.jar} exists; not part of the unit tests.
 */
class ExecutableJarCheck {

    @ParameterizedTest
    @ValueSource(strings = {"auto", "epoll"})
    void runsWithoutJvmFlagsAndWithoutWarnings(final String transport) throws Exception {
        final Path jar = Path.of(System.getProperty("metaroce.jar", "target/metaroce.jar"));
        assertThat(jar).isRegularFile();
        final List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
            "-jar", jar.toString(), "write_bw", "--loopback", "-D", "1", "--transport", transport));
        final Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        p.getOutputStream().close();
        final String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(120, TimeUnit.SECONDS)).isTrue();
        System.out.print(out);
        assertThat(p.exitValue()).as(out).isZero();
        assertThat(out).contains("RDMA_Write BW Test").doesNotContain("WARNING:").doesNotContain("restricted method");
    }
}
