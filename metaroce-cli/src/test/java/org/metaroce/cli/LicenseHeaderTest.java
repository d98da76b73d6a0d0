// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

/**
 * Every Java source file of every module starts with the SPDX licence header. The one definition
 * of which files and which header is {@code scripts/spdx-headers.sh}: this runs its
 * {@code --check} (which lists the files that lack it; the script without the option adds it).
 */
class LicenseHeaderTest {
    private static final Path ROOT = Path.of(System.getProperty("metaroce.repo.root", "..")).toAbsolutePath().normalize();

    @Test
    void everyJavaSourceFileHasTheSpdxHeader() throws Exception {
        final Process p = new ProcessBuilder("bash", ROOT.resolve("scripts/spdx-headers.sh").toString(), "--check")
            .directory(ROOT.toFile()).redirectErrorStream(true).start();
        p.getOutputStream().close();
        final String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).as("files without the SPDX header (run scripts/spdx-headers.sh):%n%s", out).isZero();
    }
}
