// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.cli;

import picocli.CommandLine.Option;

/**
 * The bounds of a {@code --pcap} capture, shared by the perftest tools and the collective tools
 * (a picocli mixin): how much of each packet is kept, and the size at which recording stops.
 * What {@code --pcap} records differs between them, so each tool keeps its own {@code --pcap}.
 */
public final class CaptureLimits {
    @Option(names = "--pcap-snaplen", defaultValue = "65535", paramLabel = "BYTES",
        description = "--pcap: bytes kept of each packet, IP and UDP headers included (default: ${DEFAULT-VALUE}, "
            + "whole packets, so that each Integrity Check can be verified; 128 keeps every MetaRoCE header).")
    int snapLength;

    @Option(names = "--pcap-limit", defaultValue = "256", paramLabel = "MiB",
        description = "--pcap: size at which the capture stops recording (default: ${DEFAULT-VALUE} MiB).")
    long limitMiB;

    /** @return bytes kept of each packet */
    public int snapLength() {
        return snapLength;
    }

    /** @return the capture's size limit in bytes */
    public long limitBytes() {
        return limitMiB << 20;
    }
}
