// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.netty;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;

/**
 * Where counters files live, so that a tool finds a process's devices by its pid alone: one
 * directory per process, {@code <base>/metaroce-<pid>/}, one file per device in it,
 * {@code device-<endpoint port>.counters}. The base is the system property {@value #BASE_PROPERTY}
 * if set, else {@code /dev/shm} (memory, never written back to a disk) where it exists, else
 * {@code java.io.tmpdir} — Aeron keeps its driver directory in the same places.
 *
 * <p>Directories of processes that died without closing their devices (killed, crashed) are
 * stale: {@link #deleteStale} removes them, and every device opening a counters file calls it.
 */
public final class CounterDirectory {
    /** System property naming the base directory. */
    public static final String BASE_PROPERTY = "metaroce.dir";
    /** Prefix of a process's directory, followed by its pid. */
    public static final String PROCESS_PREFIX = "metaroce-";
    /** Suffix of a device's counters file. */
    public static final String FILE_SUFFIX = ".counters";

    /** Processes that started up to this long after a file's creation time still count as its writer (clock granularity). */
    private static final long START_SLACK_MS = 1000;

    private static volatile boolean shutdownHookInstalled;

    private CounterDirectory() {
    }

    /** @return the base directory under which each process has its own */
    public static Path base() {
        final String configured = System.getProperty(BASE_PROPERTY);
        if (configured != null && !configured.isEmpty()) {
            return Paths.get(configured);
        }
        final Path shm = Paths.get("/dev/shm");
        if (Files.isDirectory(shm) && Files.isWritable(shm)) {
            return shm;
        }
        return Paths.get(System.getProperty("java.io.tmpdir"));
    }

    /**
     * @param base the base directory
     * @param pid a process id
     * @return that process's directory (which may not exist)
     */
    public static Path forProcess(final Path base, final long pid) {
        return base.resolve(PROCESS_PREFIX + pid);
    }

    /**
     * Reserves this process's counters file for a device: {@code device-<port>.counters}, or
     * {@code device-<port>-2.counters} and so on when a device of this process already has that
     * name (an IPv4 and an IPv6 device may share a port number). The file is created empty, so
     * that two devices opening at once cannot take the same name.
     *
     * @param base the base directory
     * @param endpointPort the device's endpoint UDP port
     * @return the (empty) file
     */
    static Path deviceFile(final Path base, final int endpointPort) {
        final Path dir = forProcess(base, ProcessHandle.current().pid());
        for (int n = 1; ; n++) {
            final Path file = dir.resolve("device-" + endpointPort + (n == 1 ? "" : "-" + n) + FILE_SUFFIX);
            try {
                return Files.createFile(file);
            } catch (final java.nio.file.FileAlreadyExistsException ex) {
                // Another device of this process has it: try the next name.
            } catch (final IOException ex) {
                throw new UncheckedIOException("cannot create " + file + ": " + ex.getMessage(), ex);
            }
        }
    }

    /**
     * Creates this process's directory and, once per process, a shutdown hook that removes it (the
     * devices remove their own files on close; the hook covers an exit without close).
     *
     * @param base the base directory
     * @return the directory
     */
    static Path createProcessDirectory(final Path base) {
        final Path dir = forProcess(base, ProcessHandle.current().pid());
        try {
            Files.createDirectories(dir);
        } catch (final IOException ex) {
            throw new UncheckedIOException("cannot create counters directory " + dir + ": " + ex.getMessage(), ex);
        }
        if (!shutdownHookInstalled) {
            synchronized (CounterDirectory.class) {
                if (!shutdownHookInstalled) {
                    shutdownHookInstalled = true;
                    Runtime.getRuntime().addShutdownHook(new Thread(() -> deleteRecursively(dir),
                        "metaroce-counters-cleanup"));
                }
            }
        }
        return dir;
    }

    /**
     * Deletes a device's file, and the process directory when it was the last one.
     *
     * @param file the device's counters file
     */
    static void deleteDeviceFile(final Path file) {
        try {
            Files.deleteIfExists(file);
            final Path dir = file.getParent();
            try (Stream<Path> rest = Files.list(dir)) {
                if (rest.findAny().isEmpty()) {
                    Files.deleteIfExists(dir);
                }
            }
        } catch (final IOException ex) {
            // Another device of this process may have created a file meanwhile: the directory stays.
        }
    }

    /**
     * @param base the base directory
     * @return pids that have a directory under {@code base}, live or not, in ascending order
     */
    public static List<Long> processes(final Path base) {
        final List<Long> pids = new ArrayList<>();
        if (!Files.isDirectory(base)) {
            return pids;
        }
        try (DirectoryStream<Path> dirs = Files.newDirectoryStream(base, PROCESS_PREFIX + "*")) {
            for (final Path dir : dirs) {
                final String suffix = dir.getFileName().toString().substring(PROCESS_PREFIX.length());
                if (Files.isDirectory(dir) && !suffix.isEmpty() && suffix.chars().allMatch(Character::isDigit)) {
                    pids.add(Long.parseLong(suffix));
                }
            }
        } catch (final IOException ex) {
            throw new UncheckedIOException("cannot list " + base + ": " + ex.getMessage(), ex);
        }
        pids.sort(Comparator.naturalOrder());
        return pids;
    }

    /**
     * @param processDirectory a process's directory
     * @return its counters files, sorted by name
     */
    public static List<Path> files(final Path processDirectory) {
        final List<Path> files = new ArrayList<>();
        if (!Files.isDirectory(processDirectory)) {
            return files;
        }
        try (DirectoryStream<Path> stream = Files.newDirectoryStream(processDirectory, "*" + FILE_SUFFIX)) {
            stream.forEach(files::add);
        } catch (final IOException ex) {
            throw new UncheckedIOException("cannot list " + processDirectory + ": " + ex.getMessage(), ex);
        }
        files.sort(Comparator.naturalOrder());
        return files;
    }

    /**
     * Removes the directories of processes that no longer run.
     *
     * @param base the base directory
     * @return how many it removed
     */
    public static int deleteStale(final Path base) {
        int removed = 0;
        for (final long pid : processes(base)) {
            final Path dir = forProcess(base, pid);
            if (!isAlive(pid, earliestFileTimeMs(dir))) {
                deleteRecursively(dir);
                removed++;
            }
        }
        return removed;
    }

    /**
     * @param pid a process id
     * @param createdMs when that process (supposedly) wrote something, epoch ms
     * @return whether the process runs and is not a later process that got the same pid
     */
    static boolean isAlive(final long pid, final long createdMs) {
        return ProcessHandle.of(pid).filter(ProcessHandle::isAlive)
            .map(p -> p.info().startInstant().map(start -> start.toEpochMilli() <= createdMs + START_SLACK_MS)
                .orElse(true))
            .orElse(false);
    }

    private static long earliestFileTimeMs(final Path dir) {
        long earliest = Long.MAX_VALUE;
        try (DirectoryStream<Path> stream = Files.newDirectoryStream(dir)) {
            for (final Path p : stream) {
                earliest = Math.min(earliest, Files.getLastModifiedTime(p).toMillis());
            }
            if (earliest == Long.MAX_VALUE) {
                earliest = Files.getLastModifiedTime(dir).toMillis();
            }
        } catch (final IOException ex) {
            // Vanished meanwhile: its process closed it, so it was not stale.
            return Long.MAX_VALUE;
        }
        return earliest;
    }

    private static void deleteRecursively(final Path dir) {
        try (Stream<Path> walk = Files.walk(dir)) {
            walk.sorted(Comparator.reverseOrder()).forEach(p -> {
                try {
                    Files.deleteIfExists(p);
                } catch (final IOException ex) {
                    // Best effort: a file another process holds stays until it closes.
                }
            });
        } catch (final IOException ex) {
            // Already gone.
        }
    }
}
