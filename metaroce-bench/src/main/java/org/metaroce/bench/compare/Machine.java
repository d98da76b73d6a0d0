// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.bench.compare;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;

/**
 * What the comparison ran on: processors, CPU model, kernel, JDK, socket buffer limits and the
 * load average (read at the start and the end of the run, since other work on the machine moves
 * every figure).
 */
final class Machine {
    private Machine() {
    }

    /** @return one line per fact, for the report */
    static List<String> describe() {
        return List.of(
            "processors: " + Runtime.getRuntime().availableProcessors() + " (" + cpuModel() + ")",
            "kernel: " + System.getProperty("os.name") + " " + System.getProperty("os.version") + " "
                + System.getProperty("os.arch"),
            "JDK: " + System.getProperty("java.vm.name") + " " + System.getProperty("java.runtime.version"),
            "net.core.rmem_max / wmem_max: " + read("/proc/sys/net/core/rmem_max") + " / "
                + read("/proc/sys/net/core/wmem_max") + " bytes");
    }

    /** @return the 1-minute load average, or NaN where the platform has none */
    static double loadAverage() {
        final double load = ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage();
        return load < 0 ? Double.NaN : load;
    }

    /** @return "/proc/loadavg" as text (1, 5 and 15 minutes), or the 1-minute figure elsewhere */
    static String loadText() {
        final String proc = read("/proc/loadavg");
        if (!proc.equals("?")) {
            final String[] f = proc.split("\\s+");
            return f.length >= 3 ? f[0] + " / " + f[1] + " / " + f[2] : proc;
        }
        return String.format(Locale.ROOT, "%.2f", loadAverage());
    }

    private static String cpuModel() {
        try {
            for (final String line : Files.readAllLines(Path.of("/proc/cpuinfo"))) {
                if (line.startsWith("model name")) {
                    return line.substring(line.indexOf(':') + 1).trim();
                }
            }
        } catch (final IOException | RuntimeException ex) {
            // Not Linux: the model stays unknown.
        }
        return "model unknown";
    }

    private static String read(final String file) {
        try {
            // Not Files.readString: procfs reports a size of 0 and JDK 17 then reads one block only.
            return String.join(" ", Files.readAllLines(Path.of(file))).trim();
        } catch (final IOException | RuntimeException ex) {
            return "?";
        }
    }
}
