// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The library as a user on the module path gets it: metaroce-core, metaroce-netty and
 * metaroce-collectives (their jars in a reactor {@code package}/{@code verify}, their class
 * directories, which are exploded modules, in a {@code test} run) resolve as the named modules
 * {@code org.metaroce.core}, {@code org.metaroce.netty} and {@code org.metaroce.collectives}. A
 * small application module ({@code src/test/resources/modulepath}) is compiled against them with
 * javac and run with {@code java --module-path ... -m}: it builds an endpoint and a UDP device
 * through the exported API, while the wire flyweights ({@code org.metaroce.core.wire}, exported
 * only to the project's modules) neither compile nor load reflectively from it.
 */
class ModulePathTest {
    /** The library's modules and what they require, picked from this test's class path. */
    private static final Pattern MODULE_PATH_ENTRY = Pattern.compile(
        "metaroce-(core|netty|collectives)([-/\\\\].*)?|agrona-.*\\.jar|slf4j-(api|simple)-.*\\.jar|netty-.*\\.jar");
    private static final Path APP_SOURCES = Path.of("src", "test", "resources", "modulepath");

    @TempDir
    static Path work;
    private static String modulePath;
    private static Path appClasses;

    @BeforeAll
    static void compileTheApplication() throws IOException {
        final List<String> entries = new ArrayList<>();
        for (final String entry : classpath().split(File.pathSeparator)) {
            final Path p = Path.of(entry);
            final String name = p.getFileName().toString().equals("classes") ? p.getParent().getParent().getFileName() + "/classes"
                : p.getFileName().toString();
            if (MODULE_PATH_ENTRY.matcher(name).matches() && Files.exists(p)) {
                entries.add(entry);
            }
        }
        assertThat(entries).as("module path from %s", classpath())
            .anyMatch(e -> e.contains("metaroce-core")).anyMatch(e -> e.contains("metaroce-netty"))
            .anyMatch(e -> e.contains("metaroce-collectives"));
        modulePath = String.join(File.pathSeparator, entries);
        appClasses = work.resolve("app");
        final String out = javac(appClasses, APP_SOURCES.resolve("demo.app"));
        assertThat(out).as("javac of the application module").isEmpty();
    }

    @Test
    void theApplicationRunsOnTheModulePath() throws Exception {
        final Run run = java("--add-exports", "java.base/jdk.internal.misc=org.agrona",
            "--enable-native-access=org.metaroce.netty");
        assertThat(run.exit).as(run.output).isZero();
        assertThat(run.output)
            .contains("module org.metaroce.core named=true")
            .contains("module org.metaroce.netty named=true")
            .contains("module org.metaroce.collectives named=true")
            .contains("endpoint ok")
            .contains("device ok")
            .contains("communicator config ok")
            .contains("wire exported to demo.app: false")
            .contains("wire exported to org.metaroce.netty: true")
            .contains("wire refused: java.lang.IllegalAccessException")
            // The descriptor covers the multi-release classes: with native access granted to the
            // module by name, the JDK has no restricted-method warning to print.
            .doesNotContain("restricted method");
    }

    @Test
    void withoutTheExportTheMessageNamesTheModulePathFlag() throws Exception {
        final Run run = java("--enable-native-access=org.metaroce.netty");
        assertThat(run.exit).as(run.output).isEqualTo(3);
        assertThat(run.output)
            .contains("Agrona is loaded as module org.agrona")
            .contains("--add-exports java.base/jdk.internal.misc=org.agrona")
            .doesNotContain("IllegalAccessError");
    }

    @Test
    void aNonExportedPackageDoesNotCompile() throws IOException {
        final String out = javac(work.resolve("bad"), APP_SOURCES.resolve("demo.bad"));
        assertThat(out).contains("package org.metaroce.core.wire is declared in module org.metaroce.core")
            .contains("does not export it");
    }

    private static String javac(final Path classes, final Path sources) throws IOException {
        // An in-process javac's class path defaults to this JVM's: give it an empty one.
        final List<String> args = new ArrayList<>(List.of("--release", "17", "--module-path", modulePath,
            "--class-path", Files.createDirectories(work.resolve("empty")).toString(), "-d", classes.toString()));
        try (var files = Files.walk(sources)) {
            args.addAll(files.filter(f -> f.toString().endsWith(".java")).map(Path::toString).sorted()
                .collect(Collectors.toList()));
        }
        final JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        javac.run(null, bytes, bytes, args.toArray(String[]::new));
        return bytes.toString(StandardCharsets.UTF_8);
    }

    private record Run(int exit, String output) {
    }

    private static Run java(final String... flags) throws Exception {
        final List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString()));
        cmd.addAll(Arrays.asList(flags));
        cmd.addAll(List.of("--module-path", appClasses + File.pathSeparator + modulePath, "-m", "demo.app/demo.app.Main"));
        final Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        p.getOutputStream().close();
        final String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        System.out.print(out);
        return new Run(p.exitValue(), out);
    }

    private static String classpath() {
        final String surefire = System.getProperty("surefire.test.class.path");
        return surefire != null && !surefire.isBlank() ? surefire : System.getProperty("java.class.path");
    }
}
