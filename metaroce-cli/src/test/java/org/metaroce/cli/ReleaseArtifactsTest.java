// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.jar.JarFile;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Test;

/**
 * What a release publishes (issue 18): POM metadata, the BOM, and for each published library
 * module its jar, {@code -sources} and {@code -javadoc} jars with LICENSE and NOTICE and a module
 * name. The jars are those of the reactor build this test runs in ({@code package}/{@code verify}:
 * the modules before metaroce-cli are packaged by then); in a {@code test}-only run they do not
 * exist and the jar check is skipped. metaroce-cli's own jars are built after its tests.
 */
class ReleaseArtifactsTest {
    private static final Path ROOT = Path.of(System.getProperty("metaroce.repo.root", "..")).toAbsolutePath().normalize();
    private static final Pattern MODULE = Pattern.compile("<module>([^<]+)</module>");
    private static final Pattern MANAGED = Pattern.compile(
        "<groupId>org\\.metaroce</groupId>\\s*<artifactId>([^<]+)</artifactId>\\s*<version>\\$\\{project\\.version}</version>");

    @Test
    void parentPomCarriesThePublicationMetadata() throws IOException {
        final String parent = read(ROOT.resolve("pom.xml"));
        for (final String element : List.of("name", "description", "url", "licenses", "developers", "scm",
            "issueManagement")) {
            assertThat(parent).as(element).containsPattern("<" + element + "[ >]");
        }
        assertThat(parent).contains("<name>Apache License, Version 2.0</name>");
        assertThat(read(ROOT.resolve("LICENSE"))).contains("Apache License").contains("Version 2.0, January 2004");
        assertThat(ROOT.resolve("NOTICE")).isRegularFile();
        for (final String module : published()) {
            assertThat(read(ROOT.resolve(module).resolve("pom.xml"))).as(module).contains("<name>").contains("<description>");
        }
    }

    @Test
    void theBomManagesEveryPublishedArtifactAtTheParentsVersion() throws IOException {
        final String bom = read(ROOT.resolve("metaroce-bom/pom.xml"));
        assertThat(bom).doesNotContain("<parent>");
        assertThat(projectVersion(bom)).isEqualTo(projectVersion(read(ROOT.resolve("pom.xml"))));
        final List<String> managed = new ArrayList<>();
        final Matcher m = MANAGED.matcher(bom);
        while (m.find()) {
            managed.add(m.group(1));
        }
        assertThat(managed).containsExactlyInAnyOrderElementsOf(published());
        for (final String element : List.of("licenses", "developers", "scm", "issueManagement", "description")) {
            assertThat(bom).as(element).containsPattern("<" + element + "[ >]");
        }
    }

    @Test
    void changelogAndVersionSchemeAreThere() throws IOException {
        final String changelog = read(ROOT.resolve("CHANGELOG.md"));
        assertThat(changelog).contains("keepachangelog.com").contains("## [Unreleased]").contains("### Added");
        assertThat(read(ROOT.resolve("docs/versioning.md"))).contains("Semantic Versioning");
        assertThat(read(ROOT.resolve("README.md"))).contains("docs/versioning.md").contains("CHANGELOG.md");
    }

    @Test
    void publishedJarsCarryLicenceSourcesJavadocAndAModuleName() throws IOException {
        final String version = projectVersion(read(ROOT.resolve("pom.xml")));
        final Path coreJar = ROOT.resolve("metaroce-core/target/metaroce-core-" + version + ".jar");
        assumeTrue(Files.exists(coreJar), "no packaged jars (a test-only run)");
        for (final String module : published()) {
            if (module.equals("metaroce-cli")) {
                continue;
            }
            for (final String suffix : List.of(".jar", "-sources.jar", "-javadoc.jar")) {
                final Path jar = ROOT.resolve(module).resolve("target").resolve(module + "-" + version + suffix);
                assertThat(jar).as("built").isRegularFile();
                try (JarFile j = new JarFile(jar.toFile())) {
                    assertThat(j.getEntry("META-INF/LICENSE")).as(jar + " LICENSE").isNotNull();
                    assertThat(j.getEntry("META-INF/NOTICE")).as(jar + " NOTICE").isNotNull();
                    if (suffix.equals(".jar")) {
                        final boolean descriptor = j.getEntry("module-info.class") != null;
                        final String automatic = j.getManifest().getMainAttributes().getValue("Automatic-Module-Name");
                        assertThat(descriptor || automatic != null).as(jar + " has a module name").isTrue();
                    } else if (suffix.equals("-javadoc.jar")) {
                        assertThat(j.getEntry("index.html")).as(jar + " index.html").isNotNull();
                    }
                }
            }
        }
    }

    /** The reactor's modules that are deployed: all but the BOM itself and those that skip deployment. */
    private static List<String> published() throws IOException {
        final List<String> out = new ArrayList<>();
        final Matcher m = MODULE.matcher(read(ROOT.resolve("pom.xml")));
        while (m.find()) {
            final String module = m.group(1).trim();
            final String pom = read(ROOT.resolve(module).resolve("pom.xml"));
            if (!module.equals("metaroce-bom") && !pom.contains("<maven.deploy.skip>true</maven.deploy.skip>")) {
                out.add(module);
            }
        }
        return out;
    }

    /** The project's own version: the first version after its artifactId (not the parent's). */
    private static String projectVersion(final String pom) {
        final String withoutParent = pom.replaceAll("(?s)<parent>.*?</parent>", "");
        final Matcher m = Pattern.compile("(?s)<artifactId>[^<]+</artifactId>\\s*<version>([^<]+)</version>")
            .matcher(withoutParent);
        assertThat(m.find()).isTrue();
        return m.group(1);
    }

    private static String read(final Path file) throws IOException {
        return Files.readString(file, StandardCharsets.UTF_8);
    }
}
