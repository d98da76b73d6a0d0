// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.cli;

import java.net.InetAddress;
import java.net.InetSocketAddress;

import org.metaroce.netty.Transport;

/**
 * Everything one run needs, resolved from the command line (defaults applied, ranges checked).
 *
 * @param kind the tool
 * @param size message size in bytes
 * @param iterations measured iterations per queue pair, or -1 in duration mode
 * @param durationNs measured time in duration mode, else 0
 * @param marginNs duration mode: time run before the measured {@code durationNs} (after the warm-up
 *     iterations) whose results are discarded, as perftest's {@code --margin}; else 0
 * @param warmup iterations per queue pair run before measuring
 * @param qps data queue pairs
 * @param mtu path MTU proposed
 * @param paths entropy ports of the device (the QP's path set)
 * @param txDepth outstanding send work requests per queue pair
 * @param rxDepth receives posted per queue pair (send_bw server)
 * @param verify check every byte
 * @param json print a JSON object instead of tables
 * @param transport resolved transport (EPOLL or NIO)
 * @param mode threading mode
 * @param idle idle strategy (resolved)
 * @param bind local address
 * @param server the server's endpoint (client mode), or null
 * @param port server endpoint port (server mode; 0 = ephemeral in loopback)
 * @param loopback both ends in this process
 * @param loopbackThreads INVOKER loopback: 1 thread drives both ends, 2 one each
 * @param connectTimeoutNs CONNECT_TIMEOUT of the handshake
 * @param gso UDP GSO
 * @param burst packets a queue pair sends on one path before choosing the next [MP-020]
 * @param gro UDP GRO on the endpoint socket, or null for the transport's default (on for native, off for Netty)
 * @param compareSwap atomic_lat uses CMP_SWAP instead of FETCH_ADD
 * @param progress print a progress line on stderr once per second
 * @param counters print the driver's, the endpoint's and the connection manager's counters on stderr at the end
 * @param countersJson print them as one JSON line per end instead of text
 * @param qpTimeoutNs each queue pair's TIMEOUT and retransmission timer floor
 * @param retryTimeoutNs each queue pair's RETRY_TIMEOUT [REL-060], 0 for none
 * @param cc the data queue pairs' CC_ALGORITHM, or null for the endpoint's default [CC-008], [CC-034]
 * @param capture the packet capture (--pcap), or null
 */
record BenchConfig(TestKind kind, int size, long iterations, long durationNs, long marginNs, long warmup, int qps, int mtu,
                   int paths, int txDepth, int rxDepth, boolean verify, boolean json, Transport transport,
                   Mode mode, Idle idle, InetAddress bind, InetSocketAddress server, int port, boolean loopback,
                   int loopbackThreads, long connectTimeoutNs, boolean gso, int burst, Boolean gro, boolean compareSwap,
                   boolean progress, boolean counters, boolean countersJson, long qpTimeoutNs, long retryTimeoutNs,
                   org.metaroce.core.congestion.CongestionControlAlgorithm cc, Capture capture) {

    /**
     * Applies {@link #cc} to a data queue pair's parameters: its CC_ALGORITHM, and the capabilities it
     * needs: ECN wherever the device reads it (DCQCN needs it, DEFAULT runs on delay alone without
     * it [CC-013]), RECEIVER_CREDIT for credit, and ATTACHED_ACK, which the connection manager offers
     * by default [REL-071].
     */
    <T extends org.metaroce.core.connection.QpParams<T>> T applyCc(final T params, final boolean readsEcn) {
        if (cc == null) {
            return params;
        }
        params.congestionControl(cc);
        params.capabilities((readsEcn ? org.metaroce.core.wire.ConnectHeader.CAP_ECN : 0)
            | (cc == org.metaroce.core.congestion.CongestionControlAlgorithm.RECEIVER_CREDIT
            ? org.metaroce.core.wire.ConnectHeader.CAP_RECEIVER_CREDIT : 0)
            | org.metaroce.core.wire.ConnectHeader.CAP_ATTACHED_ACK);
        return params;
    }

    /**
     * Retransmission timeout before a queue pair's first RTT sample (its TIMEOUT attribute): at
     * least 250 ms. Until a sample, nothing is known of the peer, and a peer JVM that has just
     * started answers its first packets only after compiling the code that handles them, tens of
     * milliseconds on a busy host: a floor-sized first timeout retransmitted what was only late. TCP
     * waits a whole second (RFC 6298, 2.1); RACK and the tail probe recover losses before it.
     */
    static final long MIN_INITIAL_RTO_NS = 250_000_000L;

    /** @return the TIMEOUT the tools' queue pairs use: the QP timeout, at least {@link #MIN_INITIAL_RTO_NS} */
    long initialRtoNs() {
        return Math.max(qpTimeoutNs, MIN_INITIAL_RTO_NS);
    }

    /** Memory per side for the data slots of all queue pairs (the slot count shrinks to fit). */
    static final long MEMORY_BUDGET = 256L << 20;
    /** Ping-pong slots: answers land in rotating buffers so a retransmission never reads a reused one. */
    static final int PING_PONG_SLOTS = 8;

    /** Threading modes of the driver, as the command line spells them. */
    enum Mode {
        dedicated, invoker, shared
    }

    /** Idle strategies, as the command line spells them. */
    enum Idle {
        spin, backoff, block
    }

    /** @return whether the run is bounded by time rather than by iterations */
    boolean timed() {
        return iterations < 0;
    }

    /**
     * @return data slots per queue pair: enough for every outstanding work request (receives for
     *     send_bw), within {@link #MEMORY_BUDGET}
     */
    int slots() {
        if (!kind.bandwidth) {
            return kind.pingPong ? PING_PONG_SLOTS : 1;
        }
        final int wanted = kind == TestKind.SEND_BW ? Math.max(txDepth, rxDepth) : txDepth;
        final long fit = Math.max(1, MEMORY_BUDGET / ((long) qps * size));
        return (int) Math.max(1, Math.min(wanted, fit));
    }
}
