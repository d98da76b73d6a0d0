// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.cli;

import org.metaroce.core.verbs.WrOpcode;

/** The tools of the {@code metaroce} command, named after perftest's. */
enum TestKind {
    WRITE_BW("write_bw", "RDMA_Write BW Test", WrOpcode.RDMA_WRITE, true, false, false),
    READ_BW("read_bw", "RDMA_Read BW Test", WrOpcode.RDMA_READ, true, false, false),
    SEND_BW("send_bw", "Send BW Test", WrOpcode.SEND, true, false, false),
    WRITE_LAT("write_lat", "RDMA_Write Latency Test (WRITE_WITH_IMM ping-pong)", WrOpcode.RDMA_WRITE_WITH_IMM, false,
        true, false),
    READ_LAT("read_lat", "RDMA_Read Latency Test", WrOpcode.RDMA_READ, false, false, false),
    SEND_LAT("send_lat", "Send Latency Test (ping-pong)", WrOpcode.SEND, false, true, false),
    ATOMIC_LAT("atomic_lat", "Atomic Latency Test", WrOpcode.ATOMIC_FETCH_ADD, false, false, false),
    RAW_UDP_BW("raw_udp_bw", "Raw UDP BW Baseline (no protocol)", null, true, false, true),
    RAW_UDP_LAT("raw_udp_lat", "Raw UDP Latency Baseline (no protocol, ping-pong)", null, false, true, true);

    /** Service IDs: control and data listener of each tool ("MRPF" + tool). */
    private static final long SERVICE_BASE = 0x4D52_5046_0000_0000L;

    final String command;
    final String title;
    final WrOpcode opcode;
    final boolean bandwidth;
    final boolean pingPong;
    final boolean raw;

    TestKind(final String command, final String title, final WrOpcode opcode, final boolean bandwidth,
             final boolean pingPong, final boolean raw) {
        this.command = command;
        this.title = title;
        this.opcode = opcode;
        this.bandwidth = bandwidth;
        this.pingPong = pingPong;
        this.raw = raw;
    }

    int defaultSize() {
        if (this == ATOMIC_LAT) {
            return 8;
        }
        return bandwidth ? 65536 : 64;
    }

    long defaultIterations() {
        return bandwidth ? 5000 : 1000;
    }

    int defaultTxDepth() {
        return bandwidth ? 128 : 1;
    }

    /** @return the Service ID the server's control listener serves */
    long controlService() {
        return SERVICE_BASE + 2L * ordinal();
    }

    /** @return the Service ID of the data connections */
    long dataService() {
        return SERVICE_BASE + 2L * ordinal() + 1;
    }

    /** @return whether the server posts receives on its data queue pairs */
    boolean serverReceives() {
        return this == SEND_BW || this == SEND_LAT || this == WRITE_LAT;
    }

    /** @return whether the client needs receives on its data queue pairs (ping-pong answers) */
    boolean clientReceives() {
        return this == SEND_LAT || this == WRITE_LAT;
    }

    static TestKind of(final int ordinal) {
        final TestKind[] all = values();
        return ordinal >= 0 && ordinal < all.length ? all[ordinal] : null;
    }
}
