package org.metaroce.netty.linux;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.lang.foreign.Arena;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The receiver reads the ECN field of every datagram: ECT(0) as sent with IP_TOS / IPV6_TCLASS,
 * and CE when a real marker (an nftables rule on the input hook, as root) sets it on the way.
 */
class EcnTest {
    /** DSCP 46 (EF) with ECT(0): both parts of the byte must arrive. */
    private static final int EF_ECT0 = 46 << 2 | LinuxUdpSocket.ECT_0;

    @BeforeEach
    void nativeSockets() {
        Loopback.assumeNative();
    }

    @Test
    void ect0SentIsEct0ReceivedOverIpv4() throws Exception {
        assertThat(receivedTrafficClass(false)).isEqualTo(EF_ECT0);
    }

    @Test
    void ect0SentIsEct0ReceivedOverIpv6() throws Exception {
        assertThat(receivedTrafficClass(true)).isEqualTo(EF_ECT0);
    }

    @Test
    void anNftablesRuleMarksCongestionExperienced() throws Exception {
        assumeTrue("root".equals(System.getProperty("user.name")), "nftables needs root: skipped");
        assumeTrue(run("nft", "--version") == 0, "nft is not installed: skipped");
        final String table = "metaroce_ecn_" + ProcessHandle.current().pid();
        try (LinuxUdpSocket rx = Loopback.bound(false); LinuxUdpSocket tx = Loopback.bound(false);
             Arena arena = Arena.ofConfined(); SendBatch send = new SendBatch(1);
             ReceiveBatch receive = new ReceiveBatch(1, 2048)) {
            final int port = rx.localAddress().getPort();
            try {
                assertThat(run("nft", "add", "table", "inet", table)).isZero();
                assertThat(run("nft", "add", "chain", "inet", table, "C",
                    "{ type filter hook input priority 0; }")).isZero();
                assertThat(run("nft", "add", "rule", "inet", table, "C", "udp", "dport", Integer.toString(port),
                    "ip", "ecn", "set", "ce")).isZero();
                tx.setTrafficClass(EF_ECT0);
                rx.setReceiveTrafficClass(true);
                send.destinationIpv4(send.add(Loopback.pattern(arena, 100, 0)), Loopback.IPV4, port);
                assertThat(tx.send(send, 0)).isEqualTo(1);
                assertThat(Loopback.receive(rx, receive, 1, (b, slot, index) -> {
                    assertThat(b.ecn(slot)).isEqualTo(LinuxUdpSocket.CE);
                    assertThat(b.trafficClass(slot) >> 2).as("DSCP kept").isEqualTo(46);
                })).isEqualTo(1);
            } finally {
                run("nft", "delete", "table", "inet", table);
            }
        }
    }

    private static int receivedTrafficClass(final boolean ipv6) throws Exception {
        try (LinuxUdpSocket rx = Loopback.bound(ipv6); LinuxUdpSocket tx = Loopback.bound(ipv6);
             Arena arena = Arena.ofConfined(); SendBatch send = new SendBatch(2);
             ReceiveBatch receive = new ReceiveBatch(2, 2048)) {
            tx.setTrafficClass(EF_ECT0);
            rx.setReceiveTrafficClass(true);
            final int port = rx.localAddress().getPort();
            for (int m = 0; m < 2; m++) {
                final int i = send.add(Loopback.pattern(arena, 100, m));
                if (ipv6) {
                    send.destinationIpv6(i, 0L, 1L, port);
                } else {
                    send.destinationIpv4(i, Loopback.IPV4, port);
                }
            }
            assertThat(tx.send(send, 0)).isEqualTo(2);
            final int[] tc = {-1};
            assertThat(Loopback.receive(rx, receive, 2, (b, slot, index) -> {
                assertThat(b.ecn(slot)).isEqualTo(LinuxUdpSocket.ECT_0);
                tc[0] = b.trafficClass(slot);
            })).isEqualTo(2);
            return tc[0];
        }
    }

    /** @return the exit code of a command (output echoed), or -1 when it cannot run */
    private static int run(final String... command) {
        final List<String> cmd = new ArrayList<>(List.of(command));
        try {
            final Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
            final String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
            if (!p.waitFor(10, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                return -1;
            }
            if (!out.isEmpty()) {
                System.out.println(String.join(" ", cmd) + ": " + out);
            }
            return p.exitValue();
        } catch (final java.io.IOException ex) {
            return -1;
        } catch (final InterruptedException ex) {
            Thread.currentThread().interrupt();
            return -1;
        }
    }
}
