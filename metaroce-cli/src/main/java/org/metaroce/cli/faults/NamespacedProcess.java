// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.cli.faults;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;

/**
 * A CLI process in a network namespace, its output going to files that the caller deletes (it
 * adds them to {@code files}); registered in {@link Trial#LIVE} while it runs, so a shutdown hook
 * can end it.
 */
public final class NamespacedProcess {
    final String name;
    /** The process (its pid is the JVM's: {@code ip netns exec} execs the command). */
    public final Process process;
    final Path out;
    final Path err;

    public NamespacedProcess(final String name, final String ns, final List<String> launcher, final List<String> args,
                             final List<Path> files) throws IOException {
        this.name = name;
        out = Files.createTempFile("mrf-" + name, ".out");
        err = Files.createTempFile("mrf-" + name, ".err");
        files.add(out);
        files.add(err);
        final List<String> command = new ArrayList<>(launcher);
        command.addAll(args);
        // ip netns exec execs the command: this process's pid is the JVM's, which signal() needs.
        process = new ProcessBuilder(TwoHosts.inNamespace(ns, command)).redirectOutput(out.toFile())
            .redirectError(err.toFile()).start();
        Trial.LIVE.add(process);
    }

    public String stdout() {
        return TwoHosts.read(out);
    }

    public String stderr() {
        return TwoHosts.read(err);
    }

    public boolean awaitStdout(final Pattern pattern, final long timeoutNs) throws InterruptedException {
        return await(pattern, out, timeoutNs);
    }

    public boolean awaitStderr(final Pattern pattern, final long timeoutNs) throws InterruptedException {
        return await(pattern, err, timeoutNs);
    }

    private boolean await(final Pattern pattern, final Path file, final long timeoutNs)
        throws InterruptedException {
        final long deadline = System.nanoTime() + timeoutNs;
        while (process.isAlive() && System.nanoTime() - deadline < 0) {
            if (pattern.matcher(TwoHosts.read(file)).find()) {
                return true;
            }
            Thread.sleep(20);
        }
        return false;
    }

    public void signal(final String signal) throws IOException {
        TwoHosts.must("kill", "-" + signal, Long.toString(process.pid()));
    }

    /**
     * @return the exit code, or -1 when it did not exit in time: then it is asked for a thread dump
     *     (SIGQUIT, which a JVM answers on its standard output without exiting), given a second to
     *     write it, and destroyed, so that the output of a hung run says where it was stuck
     */
    public int await(final long timeoutNs) throws InterruptedException {
        if (!process.waitFor(Math.max(0, timeoutNs), TimeUnit.NANOSECONDS)) {
            try {
                signal("QUIT");
                process.waitFor(1, TimeUnit.SECONDS);
            } catch (final IOException | RuntimeException ex) {
                // The process may have ended meanwhile; the dump is a diagnostic, not the verdict.
            }
            destroy();
            return -1;
        }
        Trial.LIVE.remove(process);
        return process.exitValue();
    }

    public void destroy() throws InterruptedException {
        if (process.isAlive()) {
            // SIGKILL ends a stopped process too.
            process.destroyForcibly();
            process.waitFor(10, TimeUnit.SECONDS);
        }
        Trial.LIVE.remove(process);
    }
}
