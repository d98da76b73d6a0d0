// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.netty;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.net.InetSocketAddress;
import java.util.List;
import java.util.stream.Stream;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.metaroce.core.engine.EndpointCounter;
import org.metaroce.core.verbs.PostStatus;
import org.metaroce.core.verbs.RecvRequest;
import org.metaroce.core.verbs.SendFlags;
import org.metaroce.core.verbs.SendRequest;
import org.metaroce.core.verbs.WcOpcode;
import org.metaroce.core.verbs.WcStatus;
import org.metaroce.core.verbs.WorkCompletion;
import org.metaroce.core.verbs.WrOpcode;

/**
 * Every operation end to end between two devices over real UDP sockets on 127.0.0.1, for each
 * transport (EPOLL when available, NIO) and each threading mode; data verified byte for byte.
 */
class EndToEndTest {
    private DevicePair pair;

    static Stream<Arguments> combinations() {
        // Each transport and threading mode with each way of reading the endpoint socket.
        final Stream.Builder<Arguments> all = Stream.builder();
        for (final ReceivePath path : new ReceivePath[] {ReceivePath.POLLED, ReceivePath.BATCHED}) {
            for (final Transport transport : new Transport[] {Transport.EPOLL, Transport.NIO}) {
                for (final ThreadingMode mode : ThreadingMode.values()) {
                    all.add(Arguments.of(transport, mode, path));
                }
            }
        }
        // The native transport reads every socket itself: POLLED only.
        for (final ThreadingMode mode : ThreadingMode.values()) {
            all.add(Arguments.of(Transport.NATIVE, mode, ReceivePath.POLLED));
        }
        return all.build();
    }

    static void assumeTransport(final Transport transport) {
        if (transport == Transport.NATIVE) {
            assumeTrue(org.metaroce.netty.linux.NativeUdp.isAvailable(), () -> "native transport not available here: "
                + org.metaroce.netty.linux.NativeUdp.unavailabilityReason().orElse(""));
        }
        if (transport == Transport.EPOLL) {
            assumeTrue(Transport.epollAvailable(),
                () -> "epoll native transport not available here: " + Transport.epollUnavailabilityCause());
        }
    }

    @AfterEach
    void closeDevices() {
        if (pair != null) {
            pair.close();
            assertThat(pair.a.device.isClosed()).isTrue();
            assertThat(pair.b.device.isClosed()).isTrue();
        }
    }

    private DevicePair open(final Transport transport, final ThreadingMode mode, final ReceivePath path,
                            final int mtu) {
        assumeTransport(transport);
        pair = new DevicePair(transport, mode, 4, c -> c.receivePath(path), c -> c.receivePath(path)).connect(mtu);
        assertThat(pair.a.device.transport()).isEqualTo(transport);
        assertThat(pair.a.device.receivePath()).isEqualTo(path);
        assertThat(pair.b.device.receivePath()).isEqualTo(path);
        assertThat(pair.a.device.entropyPorts()).hasSize(4).doesNotHaveDuplicates();
        return pair;
    }

    static void fill(final UnsafeBuffer b, final int offset, final int length, final int seed) {
        for (int i = 0; i < length; i++) {
            b.putByte(offset + i, (byte) (i * 31 + seed + (i >>> 8)));
        }
    }

    static void assertSameBytes(final UnsafeBuffer x, final int xOffset, final UnsafeBuffer y, final int yOffset,
                                final int length) {
        for (int i = 0; i < length; i++) {
            if (x.getByte(xOffset + i) != y.getByte(yOffset + i)) {
                throw new AssertionError("byte " + i + " of " + length + " differs: " + x.getByte(xOffset + i)
                    + " vs " + y.getByte(yOffset + i));
            }
        }
    }

    @ParameterizedTest(name = "{0} {1} {2}")
    @MethodSource("combinations")
    void sendDeliversIntoTheReceiveBuffer(final Transport transport, final ThreadingMode mode,
                                       final ReceivePath path) {
        final DevicePair p = open(transport, mode, path, 4096);
        final int length = 100_000;
        fill(p.a.mr.buffer(), 0, length, 5);
        final int recv = p.b.device.call(ep -> p.b.qp.postRecv(new RecvRequest(1).wrId(77)
            .addSge(p.b.address(8192), 200_000, p.b.mr.lkey())));
        assertThat(recv).isEqualTo(PostStatus.OK);
        final int send = p.a.device.call(ep -> p.a.qp.postSend(new SendRequest(1).wrId(1).opcode(WrOpcode.SEND)
            .sendFlags(SendFlags.SIGNALED).addSge(p.a.address(0), length, p.a.mr.lkey())));
        assertThat(send).isEqualTo(PostStatus.OK);

        assertThat(p.awaitCompletions(1, 1)).as(() -> "completions on " + p.describe()).isTrue();
        final WorkCompletion sendWc = p.a.sendCompletions.get(0);
        assertThat(sendWc.status()).as(() -> p.describe()).isEqualTo(WcStatus.SUCCESS);
        assertThat(sendWc.opcode()).isEqualTo(WcOpcode.SEND);
        final WorkCompletion recvWc = p.b.recvCompletions.get(0);
        assertThat(recvWc.status()).isEqualTo(WcStatus.SUCCESS);
        assertThat(recvWc.wrId()).isEqualTo(77);
        assertThat(recvWc.byteLen()).isEqualTo(length);
        assertSameBytes(p.a.mr.buffer(), 0, p.b.mr.buffer(), 8192, length);
    }

    @ParameterizedTest(name = "{0} {1} {2}")
    @MethodSource("combinations")
    void writeOfOneMebibyteSpraysOverEveryEntropyPort(final Transport transport, final ThreadingMode mode,
                                       final ReceivePath path) {
        final DevicePair p = open(transport, mode, path, 4096);
        final int length = 1 << 20;
        fill(p.a.mr.buffer(), 100, length, 3);
        final int status = p.a.device.call(ep -> p.a.qp.postSend(new SendRequest(1).wrId(9)
            .opcode(WrOpcode.RDMA_WRITE).sendFlags(SendFlags.SIGNALED).addSge(p.a.address(100), length, p.a.mr.lkey())
            .remoteAddr(p.b.address(500)).rkey(p.b.mr.rkey())));
        assertThat(status).isEqualTo(PostStatus.OK);

        assertThat(p.awaitCompletions(1, 0)).as(() -> "completion on " + p.describe()).isTrue();
        final WorkCompletion wc = p.a.sendCompletions.get(0);
        assertThat(wc.status()).as(() -> p.describe()).isEqualTo(WcStatus.SUCCESS);
        assertThat(wc.opcode()).isEqualTo(WcOpcode.RDMA_WRITE);
        // B's driver wrote B's memory: compare on B's owning thread.
        p.b.device.call(ep -> {
            assertSameBytes(p.a.mr.buffer(), 100, p.b.mr.buffer(), 500, length);
            return null;
        });
        assertThat(p.b.recvCompletions).isEmpty();

        // At least 256 data packets of 4096 bytes left, from every entropy port.
        final int[] ports = p.a.device.entropyPorts();
        final long[] pathSent = p.a.device.call(ep -> {
            final long[] out = new long[ports.length];
            for (int i = 0; i < ports.length; i++) {
                out[i] = p.a.qp.paths().sent(i);
            }
            return out;
        });
        for (int i = 0; i < pathSent.length; i++) {
            assertThat(pathSent[i]).as("packets on path " + i).isPositive();
        }
        assertThat(p.a.device.endpoint().counters().get(EndpointCounter.REQUEST_PACKETS_OUT)).isGreaterThanOrEqualTo(256);
        for (int i = 0; i < ports.length; i++) {
            assertThat(p.a.device.counters().sentFromEntropyPort(i)).as("datagrams from entropy port " + ports[i])
                .isPositive();
        }
        // The receiver really saw those source ports (and still matched the packets to the QP).
        final List<InetSocketAddress> seenByB = p.b.device.call(ep -> p.b.device.peers().addresses());
        for (final int port : ports) {
            assertThat(seenByB).contains(new InetSocketAddress(p.a.device.localAddress().getAddress(), port));
        }
        assertThat(p.b.device.endpoint().counters().get(EndpointCounter.PEER_MISMATCH)).isZero();
        assertThat(p.a.device.counters().get(DriverCounter.DATAGRAMS_SENT))
            .isGreaterThanOrEqualTo(256);
        assertThat(p.b.device.counters().get(DriverCounter.DATAGRAMS_RECEIVED)).isGreaterThanOrEqualTo(256);
    }

    @ParameterizedTest(name = "{0} {1} {2}")
    @MethodSource("combinations")
    void readFetchesRemoteMemory(final Transport transport, final ThreadingMode mode,
                                       final ReceivePath path) {
        final DevicePair p = open(transport, mode, path, 4096);
        final int length = 500_000;
        fill(p.b.mr.buffer(), 1000, length, 77);
        final int status = p.a.device.call(ep -> p.a.qp.postSend(new SendRequest(1).wrId(4)
            .opcode(WrOpcode.RDMA_READ).sendFlags(SendFlags.SIGNALED).addSge(p.a.address(2000), length, p.a.mr.lkey())
            .remoteAddr(p.b.address(1000)).rkey(p.b.mr.rkey())));
        assertThat(status).isEqualTo(PostStatus.OK);

        assertThat(p.awaitCompletions(1, 0)).as(() -> "completion on " + p.describe()).isTrue();
        final WorkCompletion wc = p.a.sendCompletions.get(0);
        assertThat(wc.status()).as(() -> p.describe()).isEqualTo(WcStatus.SUCCESS);
        assertThat(wc.opcode()).isEqualTo(WcOpcode.RDMA_READ);
        assertThat(wc.byteLen()).isEqualTo(length);
        assertSameBytes(p.b.mr.buffer(), 1000, p.a.mr.buffer(), 2000, length);
    }

    @ParameterizedTest(name = "{0} {1} {2}")
    @MethodSource("combinations")
    void fetchAddReturnsTheOriginalAndAddsOnce(final Transport transport, final ThreadingMode mode,
                                       final ReceivePath path) {
        final DevicePair p = open(transport, mode, path, 1024);
        p.b.mr.buffer().putLongVolatile(64, 1000);
        for (int i = 0; i < 3; i++) {
            final int n = i;
            final int status = p.a.device.call(ep -> p.a.qp.postSend(new SendRequest(1).wrId(n)
                .opcode(WrOpcode.ATOMIC_FETCH_ADD).sendFlags(SendFlags.SIGNALED).addSge(p.a.address(8L * n), 8,
                    p.a.mr.lkey()).remoteAddr(p.b.address(64)).rkey(p.b.mr.rkey()).compareAdd(5)));
            assertThat(status).isEqualTo(PostStatus.OK);
        }
        assertThat(p.awaitCompletions(3, 0)).as(() -> "completions on " + p.describe()).isTrue();
        assertThat(p.a.sendCompletions).as(() -> p.describe()).extracting(WorkCompletion::status)
            .containsOnly(WcStatus.SUCCESS);
        assertThat(p.a.sendCompletions).extracting(WorkCompletion::opcode).containsOnly(WcOpcode.FETCH_ADD);
        assertThat(p.a.sendCompletions).extracting(WorkCompletion::wrId).containsExactly(0L, 1L, 2L);
        // Read B's memory on B's owning thread: its driver wrote it.
        final long remote = p.b.device.call(ep -> p.b.mr.buffer().getLong(64));
        assertThat(remote).isEqualTo(1015L);
        assertThat(p.a.mr.buffer().getLong(0)).isEqualTo(1000);
        assertThat(p.a.mr.buffer().getLong(8)).isEqualTo(1005);
        assertThat(p.a.mr.buffer().getLong(16)).isEqualTo(1010);
    }
}
