// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;

/**
 * [GEN-003] timers and time measurements use a monotonic clock: the engine takes time as an
 * argument, and the drivers and tools that supply it read {@code System.nanoTime()}. No main
 * source of any module reads the wall clock (the cookie issue time, which MAY, uses the monotonic
 * clock too).
 */
class MonotonicClockTest {
    private static final Pattern WALL_CLOCK = Pattern.compile(
        "System\\.currentTimeMillis|Instant\\.now|Clock\\.system|LocalDateTime\\.now|LocalTime\\.now"
            + "|ZonedDateTime\\.now|OffsetDateTime\\.now|new java\\.util\\.Date\\(|new Date\\(");
    /**
     * Wall-clock reads that are labels, not timers: the date printed on a benchmark comparison; the
     * epoch time stamps of a pcap file (its format); the counters file's start time and heartbeat,
     * which another process compares with its own clock (System.nanoTime() has no meaning across
     * processes), and that reader's "now".
     */
    private static final List<String> LABELS = List.of("metaroce-bench/src/main/java/org/metaroce/bench/compare/Compare.java",
        "metaroce-netty/src/main/java/org/metaroce/netty/PcapWriter.java",
        "metaroce-netty/src/main/java/org/metaroce/netty/CounterFile.java",
        "metaroce-netty/src/main/java/org/metaroce/netty/CounterPublisher.java",
        "metaroce-cli/src/main/java/org/metaroce/cli/stat/StatCommand.java");

    @Test
    void noMainSourceReadsTheWallClock() throws IOException {
        Path root = Paths.get("").toAbsolutePath();
        while (root != null && !Files.isDirectory(root.resolve("spec-notes"))) {
            root = root.getParent();
        }
        assertThat(root).as("repository root").isNotNull();
        final List<String> found = new ArrayList<>();
        int files = 0;
        try (Stream<Path> modules = Files.list(root)) {
            for (final Path main : modules.map(m -> m.resolve("src/main/java")).filter(Files::isDirectory).toList()) {
                try (Stream<Path> all = Files.walk(main)) {
                    for (final Path f : all.filter(p -> p.toString().endsWith(".java")).toList()) {
                        files++;
                        if (LABELS.contains(root.relativize(f).toString().replace('\\', '/'))) {
                            continue;
                        }
                        final Matcher m = WALL_CLOCK.matcher(Files.readString(f));
                        while (m.find()) {
                            found.add(root.relativize(f) + ": " + m.group());
                        }
                    }
                }
            }
        }
        assertThat(files).as("main sources scanned").isGreaterThan(100);
        assertThat(found).as("wall-clock reads in main sources").isEmpty();
    }
}
