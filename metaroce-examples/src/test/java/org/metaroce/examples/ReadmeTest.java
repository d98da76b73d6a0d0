// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.examples;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Collectors;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The README quotes the examples: the code between {@code // [readme-begin]} and
 * {@code // [readme-end]} in {@link VerbsContext} and {@link RdmaWriteExample} must appear in
 * README.md verbatim (less its indentation in the class), each as one Java block, so the README's
 * code is code that compiles and that a test runs.
 */
class ReadmeTest {
    private static final String BEGIN = "// [readme-begin]";
    private static final String END = "// [readme-end]";

    private static final Path ROOT = Path.of(System.getProperty("metaroce.repo.root", ".."));
    private static final Path EXAMPLES = ROOT.resolve("metaroce-examples/src/main/java/org/metaroce/examples");

    @ParameterizedTest
    @CsvSource({"VerbsContext, cm.listen(", "RdmaWriteExample, postSend(write)"})
    void theReadmeQuotesTheExamplesVerbatim(final String example, final String landmark) throws IOException {
        final String readme = Files.readString(ROOT.resolve("README.md"));
        final String quoted = quotedRegion(Files.readAllLines(EXAMPLES.resolve(example + ".java")));
        assertThat(quoted).as("the marked region of %s", example).contains(landmark);
        assertThat(readme).as("README.md quotes %s between the readme markers", example)
            .contains("```java\n" + quoted + "```\n");
    }

    /** @return the lines between the markers, without their common indentation, each ending in a newline */
    static String quotedRegion(final List<String> source) {
        final int begin = indexOf(source, BEGIN);
        final int end = indexOf(source, END);
        assertThat(end).as("%s after %s", END, BEGIN).isGreaterThan(begin);
        final List<String> region = source.subList(begin + 1, end);
        final int indent = region.stream().filter(l -> !l.isBlank())
            .mapToInt(l -> l.length() - l.stripLeading().length()).min().orElse(0);
        return region.stream().map(l -> l.isBlank() ? "" : l.substring(indent))
            .collect(Collectors.joining("\n", "", "\n"));
    }

    private static int indexOf(final List<String> source, final String marker) {
        for (int i = 0; i < source.size(); i++) {
            if (source.get(i).strip().equals(marker)) {
                return i;
            }
        }
        throw new AssertionError(marker + " not found");
    }
}
