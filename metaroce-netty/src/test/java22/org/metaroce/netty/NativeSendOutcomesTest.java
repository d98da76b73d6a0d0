// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.netty;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.entry;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.EnumMap;
import java.util.Map;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.metaroce.core.engine.TransmitSink;
import org.metaroce.netty.linux.Errno;
import org.metaroce.netty.linux.LinuxUdpSocket;
import org.metaroce.netty.linux.NativeUdp;
import org.metaroce.netty.linux.ReceiveBatch;
import org.metaroce.netty.linux.UdpOutcome;

/**
 * Send errors provoked for real on native sockets, each in a network namespace of the test's own
 * (root only): the kernel's errno, its outcome, and the one driver counter the sink increments for
 * it besides the {@code SEND_ERRORS} total. {@code ENOBUFS} comes from a token bucket on the
 * namespace's {@code lo} whose queue holds 3 KB, and reaches the sender only on a socket with
 * {@code IP_RECVERR}; without it the kernel reports the datagram as sent and counts it in
 * {@code SndbufErrors} (checked too).
 */
class NativeSendOutcomesTest {
    private static final InetAddress LO = InetAddress.getLoopbackAddress();
    /** A queue of 3 KB draining at 1 Mbit/s: the fourth datagram of 1000 B in a row finds it full. */
    private static final String[] SMALL_QDISC = {"qdisc", "add", "dev", "lo", "root", "tbf", "rate", "1mbit", "burst",
        "2kb", "limit", "3kb"};
    private static final int BURST = 20;

    @BeforeEach
    void rootWithNamespaces() {
        assumeTrue(NativeUdp.isAvailable(), () -> "native transport unavailable: " + NativeUdp.unavailabilityReason());
        final String reason = NetworkNamespace.unavailableReason();
        assumeTrue(reason == null, () -> "skipped: " + reason);
    }

    @Test
    void aQdiscDropIsNoBuffersOnASocketThatAsksForErrorsAndSilentOtherwise() throws Exception {
        assumeTc();
        try (NetworkNamespace ns = new NetworkNamespace("natB")) {
            ns.tc(SMALL_QDISC);
            ns.runInside("enobufs", 30, () -> {
                try (LinuxUdpSocket rx = bound(); LinuxUdpSocket quiet = bound(); LinuxUdpSocket told = bound();
                     Arena arena = Arena.ofConfined();
                     org.metaroce.netty.linux.SendBatch one = new org.metaroce.netty.linux.SendBatch(1)) {
                    one.destinationIpv4(one.add(arena.allocate(1000)), 0x7F00_0001, rx.localAddress().getPort());
                    final long before = sndbufErrors();
                    for (int i = 0; i < BURST; i++) {
                        assertThat(quiet.send(one, 0)).as("datagram %d without IP_RECVERR", i).isEqualTo(1);
                    }
                    final long kept = sndbufErrors() - before;
                    System.out.printf("%d datagrams of 1000 B without IP_RECVERR: all reported sent, %d SndbufErrors%n",
                        BURST, kept);
                    assertThat(kept).as("drops the kernel kept to itself").isPositive();

                    Thread.sleep(200); // the qdisc drains
                    told.setReceiveErrors(true);
                    int r = 1;
                    for (int i = 0; i < BURST && r == 1; i++) {
                        r = told.send(one, 0);
                    }
                    assertThat(UdpOutcome.of(r)).as("result %d", r).isEqualTo(UdpOutcome.NO_BUFFERS);
                    assertThat(-r).isEqualTo(Errno.ENOBUFS);
                    assertThat(SendFailures.of(-r)).isEqualTo(SendFailure.NO_BUFFERS);
                }
            });
        }
    }

    /**
     * The driver's sockets set {@code IP_RECVERR}: a burst through the driver's sink and transport
     * into the 3 KB qdisc is partly refused, and every refused datagram reaches the sink as
     * {@code ENOBUFS} and is dropped and counted, once. Cross-checked with the kernel: its
     * {@code OutDatagrams} grows by what the driver counts as sent, the receiver gets exactly that,
     * and its {@code SndbufErrors} counts each refusal (with the option too: {@code udp_sendmsg}
     * counts an {@code ENOBUFS} it reports). A message refused after others of the same
     * {@code sendmmsg} went is reported by the count alone (the kernel drops that error): the
     * sender offers it again at the head of the next call, so the kernel may refuse it twice;
     * the raw calls first show that.
     */
    @Test
    void aQdiscDropThroughTheDriverIsNoBuffersOnceForEachRefusedDatagram() throws Exception {
        assumeTc();
        try (NetworkNamespace ns = new NetworkNamespace("h2-enobufs")) {
            ns.tc(SMALL_QDISC);
            ns.runInside("enobufs-sink", 30, () -> {
                // The kernel's contract, on a raw socket with IP_RECVERR: one sendmmsg of 20.
                try (LinuxUdpSocket rx = bound(); LinuxUdpSocket raw = bound(); Arena arena = Arena.ofConfined();
                     org.metaroce.netty.linux.SendBatch twenty = new org.metaroce.netty.linux.SendBatch(BURST)) {
                    raw.setReceiveErrors(true);
                    final long payload = arena.allocate(1000).address();
                    for (int i = 0; i < BURST; i++) {
                        twenty.destinationIpv4(twenty.add(payload, 1000), 0x7F00_0001, rx.localAddress().getPort());
                    }
                    final long out0 = udp("OutDatagrams");
                    final long sndbuf0 = udp("SndbufErrors");
                    final int first = raw.send(twenty, 0);
                    final long out1 = udp("OutDatagrams");
                    final long sndbuf1 = udp("SndbufErrors");
                    final int second = raw.send(twenty, first);
                    System.out.printf("raw sendmmsg of %d x 1000 B with IP_RECVERR: returned %d (OutDatagrams +%d, "
                        + "SndbufErrors +%d); again from message %d: %d (SndbufErrors +%d)%n", BURST, first, out1 - out0,
                        sndbuf1 - sndbuf0, first, second, udp("SndbufErrors") - sndbuf1);
                    assertThat(first).as("messages taken before the qdisc was full").isBetween(1, BURST - 1);
                    assertThat(out1 - out0).as("OutDatagrams: what the call took").isEqualTo(first);
                    assertThat(sndbuf1 - sndbuf0).as("message %d refused, its ENOBUFS not returned", first).isOne();
                }
                Thread.sleep(200); // the qdisc drains

                try (Harness h = new Harness(); ReceiveBatch arrived = new ReceiveBatch(BURST, 2048)) {
                    assertThat(((NativeUdpSocket) h.entropy).linuxSocket().getOption(0 /* IPPROTO_IP */,
                        11 /* IP_RECVERR */)).as("IP_RECVERR on the driver's socket").isOne();
                    final long[] before = h.sendCounters();
                    final long sentBefore = h.counters.get(DriverCounter.DATAGRAMS_SENT);
                    final long out0 = udp("OutDatagrams");
                    final long sndbuf0 = udp("SndbufErrors");
                    h.send(BURST, 1000);
                    final long sent = h.counters.get(DriverCounter.DATAGRAMS_SENT) - sentBefore;
                    final long out = udp("OutDatagrams") - out0;
                    final long refusals = udp("SndbufErrors") - sndbuf0;
                    final Map<DriverCounter, Long> changed = h.changedSince(before);
                    Thread.sleep(200); // the qdisc delivers what it took
                    final int received = h.receiver.receive(arrived);
                    final long noBuffers = changed.getOrDefault(DriverCounter.SEND_NO_BUFFERS, 0L);
                    System.out.printf("%d datagrams of 1000 B through the driver into a 3 KB qdisc: %d sent, %d received, "
                        + "counters %s; kernel OutDatagrams +%d, SndbufErrors +%d (%d refused inside a sendmmsg and "
                        + "offered again)%n", BURST, sent, received, changed, out, refusals, refusals - noBuffers);
                    assertThat(changed).containsOnlyKeys(DriverCounter.SEND_NO_BUFFERS, DriverCounter.SEND_ERRORS);
                    assertThat(noBuffers).as("SEND_NO_BUFFERS").isPositive()
                        .isEqualTo(changed.get(DriverCounter.SEND_ERRORS))
                        .isEqualTo(BURST - sent);
                    assertThat(out).as("the kernel's OutDatagrams: what the driver counted as sent").isEqualTo(sent);
                    assertThat(received).as("datagrams that arrived: what the driver counted as sent").isEqualTo((int) sent);
                    // Each refusal is either reported (counted once in SEND_NO_BUFFERS) or inside a
                    // call that took an earlier message (then offered again, at most once per such call).
                    assertThat(refusals).as("SndbufErrors: every refusal the kernel made")
                        .isBetween(noBuffers, noBuffers + sent);
                }
            });
        }
    }

    @Test
    void anNftablesDropOnTheOutputHookIsNotPermitted() throws Exception {
        try (NetworkNamespace ns = new NetworkNamespace("natP")) {
            ns.runInside("eperm-sink", 30, () -> {
                try (Harness h = new Harness()) {
                    ns.nft("add", "table", "inet", "natperm");
                    ns.nft("add", "chain", "inet", "natperm", "out", "{ type filter hook output priority 0; policy accept; }");
                    ns.nft("add", "rule", "inet", "natperm", "out", "udp", "dport",
                        Integer.toString(h.receiver.localAddress().getPort()), "drop");
                    final long[] before = h.sendCounters();
                    h.send(1, 100);
                    assertThat(h.changedSince(before)).containsOnly(entry(DriverCounter.SEND_NOT_PERMITTED, 1L),
                        entry(DriverCounter.SEND_ERRORS, 1L));
                }
            });
        }
    }

    @Test
    void aDatagramLongerThanUdpAllowsIsMessageTooLong() throws Exception {
        try (NetworkNamespace ns = new NetworkNamespace("natM")) {
            ns.runInside("emsgsize-sink", 30, () -> {
                try (Harness h = new Harness()) {
                    final long[] before = h.sendCounters();
                    h.send(1, 65_508); // 65,507 B is the most an IPv4 UDP datagram carries
                    assertThat(h.changedSince(before)).containsOnly(entry(DriverCounter.SEND_MESSAGE_TOO_LONG, 1L),
                        entry(DriverCounter.SEND_ERRORS, 1L));
                    // IP_RECVERR: the stack queued its own error for the datagram, read after the failed send.
                    assertThat(h.counters.get(DriverCounter.LOCAL_ERRORS)).isOne();
                }
            });
        }
    }

    @Test
    void aClosedPortOfTheConnectedPeerIsPeerUnreachable() throws Exception {
        try (NetworkNamespace ns = new NetworkNamespace("natU")) {
            ns.runInside("econnrefused-sink", 30, () -> {
                try (Harness h = new Harness()) {
                    h.receiver.close(); // the port is closed: ICMP port unreachable for each datagram
                    h.send(1, 100); // connects the entropy socket to the peer, and goes
                    assertThat(h.counters.get(DriverCounter.CONNECTED_SOCKETS)).isOne();
                    Thread.sleep(50); // the ICMP error comes back and waits on the socket
                    final long[] before = h.sendCounters();
                    h.send(1, 100);
                    assertThat(h.changedSince(before)).containsOnly(entry(DriverCounter.SEND_PEER_UNREACHABLE, 1L),
                        entry(DriverCounter.SEND_ERRORS, 1L));
                    // The ICMP error that the send reported, read from the error queue after it.
                    assertThat(h.counters.get(DriverCounter.ICMP_PORT_UNREACHABLE)).isOne();
                }
            });
        }
    }

    /**
     * With {@code IP_RECVERR} an ICMP "fragmentation needed" for a datagram already sent is reported
     * to the socket's next send as {@code EMSGSIZE}, whatever that datagram's size (on a connected
     * socket also without the option). The sender reads the error queue, finds the ICMP error
     * there, and sends the datagram once more rather than dropping it as too long (which would also
     * turn GSO off for a GSO message); the ICMP error is counted, with its path MTU.
     */
    @Test
    void anIcmpFragmentationNeededForAnEarlierDatagramDoesNotDropTheNext() throws Exception {
        try (NetworkNamespace ns = new NetworkNamespace("h2-fragneeded")) {
            ns.runInside("frag-needed-sink", 30, () -> {
                try (Harness h = new Harness(); ReceiveBatch arrived = new ReceiveBatch(4, 2048)) {
                    h.send(1, 100);
                    final InetSocketAddress from = h.entropy.localAddress();
                    IcmpInjector.fragmentationNeeded(from, h.receiver.localAddress(), 1200);
                    Thread.sleep(50); // delivered to the entropy socket: queued, and pending for its next call
                    final long[] before = h.sendCounters();
                    h.send(1, 100);
                    Thread.sleep(50);
                    final int received = h.receiver.receive(arrived);
                    System.out.printf("after an ICMP fragmentation needed (MTU 1200): counters %s, %d received%n",
                        h.counters, received);
                    assertThat(h.counters.get(DriverCounter.ICMP_FRAGMENTATION_NEEDED)).isOne();
                    assertThat(h.changedSince(before)).as("no send failed").isEmpty();
                    assertThat(h.counters.get(DriverCounter.DATAGRAMS_SENT)).isEqualTo(2);
                    assertThat(received).as("both datagrams arrived").isEqualTo(2);
                }
            });
        }
    }

    /**
     * Don't Fragment [ENC-021]: the driver's sockets set {@code IP_PMTUDISC_DO}, so once the network
     * has reported a path MTU of 1200 a datagram of 1300 B is refused and counted
     * ({@code SEND_MESSAGE_TOO_LONG}) instead of leaving as two fragments; with the kernel's default
     * ({@code IP_PMTUDISC_WANT}) it was fragmented and arrived. Smaller datagrams still pass.
     */
    @Test
    void aDatagramLargerThanAReportedPathMtuIsRefusedNotFragmented() throws Exception {
        try (NetworkNamespace ns = new NetworkNamespace("h2-dontfrag")) {
            ns.runInside("dont-fragment-sink", 30, () -> {
                try (Harness h = new Harness(); ReceiveBatch arrived = new ReceiveBatch(4, 2048)) {
                    assertThat(((NativeUdpSocket) h.entropy).linuxSocket().getOption(0 /* IPPROTO_IP */,
                        10 /* IP_MTU_DISCOVER */)).as("IP_PMTUDISC_DO on the driver's socket").isEqualTo(2);
                    h.send(1, 100);
                    IcmpInjector.fragmentationNeeded(h.entropy.localAddress(), h.receiver.localAddress(), 1200);
                    Thread.sleep(50); // the route learns the path MTU
                    h.send(1, 100); // takes the pending report (see the test above) and passes
                    final long[] before = h.sendCounters();
                    h.send(1, 1300);
                    h.send(1, 100);
                    Thread.sleep(50);
                    final int received = h.receiver.receive(arrived);
                    System.out.printf("1300 B after a path MTU of 1200: counters %s, %d received%n", h.counters, received);
                    assertThat(h.changedSince(before)).as("the 1300 B datagram refused, nothing else")
                        .containsOnly(java.util.Map.entry(DriverCounter.SEND_ERRORS, 1L),
                            java.util.Map.entry(DriverCounter.SEND_MESSAGE_TOO_LONG, 1L));
                    assertThat(received).as("the three 100 B datagrams arrived, no fragments").isEqualTo(3);
                    for (int i = 0; i < received; i++) {
                        assertThat(arrived.length(i)).isEqualTo(100);
                    }
                }
            });
        }
    }

    private static void assumeTc() {
        final String tc = NetworkNamespace.tcUnavailableReason();
        assumeTrue(tc == null, () -> "skipped: " + tc);
    }

    private static LinuxUdpSocket bound() throws IOException {
        final LinuxUdpSocket s = LinuxUdpSocket.open(false);
        s.bind(new InetSocketAddress(LO, 0));
        return s;
    }

    /** @return the namespace's {@code Udp SndbufErrors} (the calling thread's namespace) */
    private static long sndbufErrors() throws IOException {
        return udp("SndbufErrors");
    }

    /** @return one {@code Udp} counter of {@code /proc/net/snmp} in the calling thread's namespace */
    private static long udp(final String name) throws IOException {
        final String[] lines = Files.readAllLines(Path.of("/proc/thread-self/net/snmp")).stream()
            .filter(l -> l.startsWith("Udp:")).toArray(String[]::new);
        final String[] names = lines[0].split("\\s+");
        final String[] values = lines[1].split("\\s+");
        for (int i = 0; i < names.length; i++) {
            if (names[i].equals(name)) {
                return Long.parseLong(values[i]);
            }
        }
        throw new IllegalStateException("no " + name + " in /proc/thread-self/net/snmp");
    }

    /**
     * The driver's send path on native sockets opened by the calling thread: the sink, one entropy
     * socket bound to 127.0.0.1 (so the sink connects it to its first peer), the endpoint socket,
     * and a receiver the datagrams go to.
     */
    private static final class Harness implements AutoCloseable {
        final DriverCounters counters = new DriverCounters(1);
        final NativeUdpTransport transport = new NativeUdpTransport(65_536, 8, false, counters);
        final LinuxUdpSocket receiver;
        final UdpSocket entropy;
        final UdpSocket endpoint;
        final NettySink sink;
        final int peer;
        final int entropyPort;

        Harness() throws IOException {
            receiver = bound();
            entropy = transport.open(new SocketOptions(new InetSocketAddress(LO, 0), 4096, 1 << 20, 0), null);
            endpoint = transport.open(new SocketOptions(new InetSocketAddress(LO, 0), 4096, 1 << 20, 0), null);
            entropyPort = entropy.localAddress().getPort();
            final PeerTable peers = new PeerTable();
            peer = peers.peerId(receiver.localAddress());
            sink = new NettySink(transport, 1 << 20, 1024, peers, counters, new UdpSocket[] {entropy},
                new int[] {entropyPort}, endpoint, false, 3, true, true);
        }

        /** One duty cycle: {@code datagrams} datagrams of {@code bytes} committed, then flushed. */
        void send(final int datagrams, final int bytes) {
            sink.beginCycle();
            for (int i = 0; i < datagrams; i++) {
                final int offset = sink.claim(bytes, entropyPort);
                assertThat(offset).as("claim %d", i).isNotEqualTo(TransmitSink.NO_ROOM);
                sink.buffer().setMemory(offset, bytes, (byte) i);
                sink.commit(offset, bytes, peer, entropyPort);
            }
            sink.flush();
        }

        long[] sendCounters() {
            final long[] values = new long[DriverCounter.values().length];
            for (final DriverCounter c : DriverCounter.values()) {
                values[c.ordinal()] = c.name().startsWith("SEND_") ? counters.get(c) : 0;
            }
            return values;
        }

        Map<DriverCounter, Long> changedSince(final long[] before) {
            final long[] after = sendCounters();
            final Map<DriverCounter, Long> changed = new EnumMap<>(DriverCounter.class);
            for (final DriverCounter c : DriverCounter.values()) {
                if (after[c.ordinal()] != before[c.ordinal()]) {
                    changed.put(c, after[c.ordinal()] - before[c.ordinal()]);
                }
            }
            return changed;
        }

        @Override
        public void close() {
            sink.close();
            entropy.close();
            endpoint.close();
            receiver.close();
        }
    }
}
