// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.cli;

import java.nio.file.Path;

import org.metaroce.netty.DeviceConfig;
import org.metaroce.netty.ObservabilityConfig;
import org.metaroce.netty.PcapWriter;

/**
 * A tool's {@code --pcap FILE}: one capture file for the run's devices. With both ends in one
 * process each device records what it sends, so every packet appears once; an end alone records
 * what it sends and receives. The file is flushed and closed at the end of the run, and by a
 * shutdown hook when a server is stopped with Ctrl-C.
 */
public final class Capture {
    private final PcapWriter writer;
    private final boolean bothEnds;
    private final Thread hook;

    private Capture(final PcapWriter writer, final boolean bothEnds) {
        this.writer = writer;
        this.bothEnds = bothEnds;
        this.hook = new Thread(writer::close, "metaroce-pcap-close");
        Runtime.getRuntime().addShutdownHook(hook);
    }

    /**
     * @param file where
     * @param bothEnds whether both ends of the run are devices of this process
     * @param snapLength bytes kept of each packet
     * @param maxBytes size at which the capture stops recording
     * @return the capture
     */
    public static Capture open(final Path file, final boolean bothEnds, final int snapLength, final long maxBytes) {
        try {
            return new Capture(PcapWriter.open(file, snapLength, maxBytes), bothEnds);
        } catch (final java.io.UncheckedIOException | IllegalArgumentException ex) {
            throw new BenchException("--pcap: " + ex.getMessage(), ex);
        }
    }

    /**
     * Makes a device record into this capture.
     *
     * @param config the device's configuration
     * @return {@code config}
     */
    public DeviceConfig configure(final DeviceConfig config) {
        final ObservabilityConfig obs = config.observability();
        obs.capture(writer, !bothEnds);
        return config;
    }

    /**
     * Flushes and closes the file and says what it holds.
     *
     * @param err where to say it
     */
    public void close(final java.io.PrintWriter err) {
        writer.close();
        try {
            Runtime.getRuntime().removeShutdownHook(hook);
        } catch (final IllegalStateException ex) {
            // Already shutting down: the hook closes (again, harmlessly).
        }
        err.println("pcap: " + writer.recorded() + " packets in " + writer.path()
            + (writer.dropped() > 0 ? " (" + writer.dropped() + " not recorded: the file reached its size limit)" : ""));
        err.flush();
    }
}
