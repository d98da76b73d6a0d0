// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.cli.faults;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Measures the live heap of a running JVM from outside, as a soak needs it: {@code jcmd PID
 * GC.class_histogram} collects the whole heap first and totals the bytes of the objects still
 * reachable, so a later figure above an earlier one is retained memory, not garbage waiting for a
 * collection. (The collector's own "used" figure after {@code GC.run} counts whole regions for
 * large arrays and moved by megabytes between runs whose live objects were identical.)
 */
final class HeapProbe {
    /** The histogram's last line: "Total   INSTANCES   BYTES". */
    private static final Pattern TOTAL = Pattern.compile("(?m)^Total\\s+\\d+\\s+(\\d+)\\s*$");

    private final String jcmd;

    /** @param javaHome the JDK whose {@code bin/jcmd} attaches to the tools (they run on the same JDK) */
    HeapProbe(final Path javaHome) {
        this.jcmd = javaHome.resolve("bin").resolve("jcmd").toString();
    }

    /** @return whether this JDK has jcmd (a JRE does not) */
    boolean available() {
        return Files.isExecutable(Path.of(jcmd));
    }

    /**
     * @param pid the JVM
     * @return KiB of live objects, or -1 when the JVM could not be asked (gone, or jcmd failed)
     * @throws InterruptedException when interrupted
     */
    long liveKb(final long pid) throws InterruptedException {
        try {
            return parseLiveKb(run(List.of(jcmd, Long.toString(pid), "GC.class_histogram")));
        } catch (final IOException ex) {
            // The process ended or refused the attach: no figure.
            return -1;
        }
    }

    /** @return the total KiB of a class histogram, -1 when it has none */
    static long parseLiveKb(final String histogram) {
        final Matcher m = TOTAL.matcher(histogram);
        return m.find() ? Long.parseLong(m.group(1)) / 1024 : -1;
    }

    /** @return the output of {@code command}, "" when it failed or took over 30 s */
    private static String run(final List<String> command) throws IOException, InterruptedException {
        final Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        final byte[] out = p.getInputStream().readAllBytes();
        if (!p.waitFor(30, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            return "";
        }
        return p.exitValue() == 0 ? new String(out, java.nio.charset.StandardCharsets.UTF_8) : "";
    }
}
