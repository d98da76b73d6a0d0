// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.netty;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.metaroce.core.verbs.PostStatus;
import org.metaroce.core.verbs.RecvRequest;
import org.metaroce.core.verbs.SendFlags;
import org.metaroce.core.verbs.SendRequest;
import org.metaroce.core.verbs.WcStatus;
import org.metaroce.core.verbs.WrOpcode;

/**
 * Payloads by reference on the native transport ({@link SocketCapabilities#gather()}): a WRITE
 * and a SEND leave with their payloads gathered from the registered memory by the kernel (one
 * copy instead of two), in GSO messages and in datagrams of their own, and arrive intact, with
 * every integrity check good. A device that captures its packets copies instead, so that the
 * capture sees each payload byte; so does a transport that cannot gather.
 */
class PayloadByReferenceTest {
    private static final int LENGTH = 1 << 20;
    private DevicePair pair;

    @TempDir
    Path dir;

    @AfterEach
    void closeDevices() {
        if (pair != null) {
            pair.close();
        }
    }

    /** Posts a 1 MiB WRITE and a 6,000-byte SEND (two packets, the second short) from a to b and checks what b got. */
    private void writeAndSend() {
        EndToEndTest.fill(pair.a.mr.buffer(), 0, LENGTH, 23);
        final int sendAt = LENGTH + 4096;
        final int sendLength = 6_000;
        EndToEndTest.fill(pair.a.mr.buffer(), sendAt, sendLength, 41);
        assertThat((int) pair.b.device.call(ep -> pair.b.qp.postRecv(new RecvRequest(1).wrId(9)
            .addSge(pair.b.address(sendAt), sendLength, pair.b.mr.lkey())))).isEqualTo(PostStatus.OK);
        assertThat((int) pair.a.device.call(ep -> pair.a.qp.postSend(new SendRequest(1).wrId(1)
            .opcode(WrOpcode.RDMA_WRITE).sendFlags(SendFlags.SIGNALED).addSge(pair.a.address(0), LENGTH, pair.a.mr.lkey())
            .remoteAddr(pair.b.address(0)).rkey(pair.b.mr.rkey())))).isEqualTo(PostStatus.OK);
        assertThat((int) pair.a.device.call(ep -> pair.a.qp.postSend(new SendRequest(1).wrId(2)
            .opcode(WrOpcode.SEND).sendFlags(SendFlags.SIGNALED).addSge(pair.a.address(sendAt), sendLength,
                pair.a.mr.lkey())))).isEqualTo(PostStatus.OK);
        assertThat(pair.awaitCompletions(2, 1)).as(pair::describe).isTrue();
        assertThat(pair.a.sendCompletions).allSatisfy(wc -> assertThat(wc.status()).isEqualTo(WcStatus.SUCCESS));
        assertThat(pair.b.recvCompletions.get(0).status()).isEqualTo(WcStatus.SUCCESS);
        assertThat(pair.b.recvCompletions.get(0).byteLen()).isEqualTo(sendLength);
        pair.b.device.call(ep -> {
            EndToEndTest.assertSameBytes(pair.a.mr.buffer(), 0, pair.b.mr.buffer(), 0, LENGTH);
            EndToEndTest.assertSameBytes(pair.a.mr.buffer(), sendAt, pair.b.mr.buffer(), sendAt, sendLength);
            return null;
        });
        System.out.println(pair.transport + " " + pair.mode + ": sender " + pair.a.device.counters() + ", receiver "
            + pair.b.device.endpoint().counters() + " " + pair.b.device.endpoint().wireCounters());
        assertThat(pair.a.device.counters().get(DriverCounter.SEND_ERRORS)).isZero();
        assertThat(pair.b.device.endpoint().wireCounters().dropped(org.metaroce.core.wire.DropReason.INTEGRITY_CHECK_FAILED))
            .as("integrity checks failed at the receiver").isZero();
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(value = ThreadingMode.class, names = {"INVOKER", "DEDICATED"})
    void payloadsLeaveFromRegisteredMemoryAndArriveIntact(final ThreadingMode mode) {
        EndToEndTest.assumeTransport(Transport.NATIVE);
        pair = new DevicePair(Transport.NATIVE, mode, 1).connect(4096); // one path: runs go as GSO messages
        writeAndSend();
        final DriverCounters sent = pair.a.device.counters();
        // 256 packets of the WRITE and 2 of the SEND, retransmissions aside: all by reference.
        assertThat(sent.get(DriverCounter.PAYLOADS_BY_REFERENCE)).as("payloads by reference").isGreaterThanOrEqualTo(258);
        assertThat(sent.get(DriverCounter.GSO_WRITES)).as("gathered GSO messages").isPositive();
        assertThat(pair.b.device.endpoint().wireCounters().droppedTotal()).as("packets the receiver dropped").isZero();
    }

    @Test
    void aCapturingDeviceCopiesSoItsCaptureHoldsThePayloads() throws Exception {
        EndToEndTest.assumeTransport(Transport.NATIVE);
        final Path file = dir.resolve("copy.pcap");
        try (PcapWriter writer = PcapWriter.open(file)) {
            pair = new DevicePair(Transport.NATIVE, ThreadingMode.INVOKER, 2,
                c -> c.observability(new ObservabilityConfig().counters(false).capture(writer, true)), c -> { });
            pair.connect(4096);
            writeAndSend();
            assertThat(pair.a.device.counters().get(DriverCounter.PAYLOADS_BY_REFERENCE)).isZero();
            pair.close();
            pair = null;
        }
        // The WRITE's first payload byte pattern appears in the capture: the payloads are in it.
        final byte[] pcap = Files.readAllBytes(file);
        final byte[] first = new byte[64];
        for (int i = 0; i < first.length; i++) {
            first[i] = (byte) (i * 31 + 23 + (i >>> 8));
        }
        assertThat(indexOf(pcap, first)).as("the WRITE's first 64 payload bytes in the capture").isNotNegative();
    }

    @Test
    void aTransportThatCannotGatherCopies() {
        final Transport other = Transport.epollAvailable() ? Transport.EPOLL : Transport.NIO;
        pair = new DevicePair(other, ThreadingMode.INVOKER, 2).connect(4096);
        writeAndSend();
        assertThat(pair.a.device.counters().get(DriverCounter.PAYLOADS_BY_REFERENCE)).isZero();
    }

    private static int indexOf(final byte[] haystack, final byte[] needle) {
        outer:
        for (int i = 0; i + needle.length <= haystack.length; i++) {
            for (int j = 0; j < needle.length; j++) {
                if (haystack[i + j] != needle[j]) {
                    continue outer;
                }
            }
            return i;
        }
        return -1;
    }
}
