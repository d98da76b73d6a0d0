// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.netty.linux;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.foreign.Arena;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** epoll_wait returns for a readable socket and for a wake-up from another thread. */
class EpollTest {
    @BeforeEach
    void nativeSockets() {
        Loopback.assumeNative();
    }

    @Test
    void aFullSendSocketIsWatchedForWritabilityWithoutAllocating() throws Exception {
        // The sink registers a send socket (EPOLLOUT) when its buffer fills and removes it when the
        // batch is gone: on the data path, which must not allocate.
        final java.lang.management.ThreadMXBean plain = java.lang.management.ManagementFactory.getThreadMXBean();
        org.junit.jupiter.api.Assumptions.assumeTrue(plain instanceof com.sun.management.ThreadMXBean,
            "no per-thread allocation counter");
        final com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) plain;
        try (Epoll epoll = new Epoll(2); LinuxUdpSocket reader = Loopback.bound(false);
             LinuxUdpSocket sender = Loopback.bound(false)) {
            epoll.add(reader, 0L);
            long allocated = Long.MAX_VALUE;
            for (int round = 0; round < 20 && allocated > 0; round++) {
                final long before = threads.getCurrentThreadAllocatedBytes();
                for (int i = 0; i < 10_000; i++) {
                    epoll.add(sender.fd(), Epoll.EPOLLOUT, 0L);
                    epoll.modify(reader.fd(), Epoll.EPOLLIN | Epoll.EPOLLOUT, 0L);
                    epoll.modify(reader.fd(), Epoll.EPOLLIN, 0L);
                    epoll.remove(sender.fd());
                }
                allocated = threads.getCurrentThreadAllocatedBytes() - before;
            }
            assertThat(allocated).as("bytes allocated by 10,000 rounds of epoll_ctl after warm-up").isZero();
            // And the registration works: an idle UDP socket is writable at once.
            epoll.add(sender.fd(), Epoll.EPOLLOUT, 7L);
            assertThat(epoll.await(1000)).isOne();
            assertThat(epoll.readyToken(0)).isEqualTo(7L);
            assertThat(epoll.readyEvents(0) & Epoll.EPOLLOUT).isEqualTo(Epoll.EPOLLOUT);
        }
    }

    @Test
    void aBlockedWaitIsWokenUpFromAnotherThread() throws Exception {
        try (Epoll epoll = new Epoll(8)) {
            final CompletableFuture<Long> waited = CompletableFuture.supplyAsync(() -> {
                final long t0 = System.nanoTime();
                final int n = epoll.await(-1);
                assertThat(n).isZero();
                assertThat(epoll.wokenUp()).isTrue();
                return (System.nanoTime() - t0) / 1_000_000;
            });
            Thread.sleep(100);
            assertThat(waited).as("still blocked before the wake-up").isNotDone();
            epoll.wakeUp();
            final long millis = waited.get(5, TimeUnit.SECONDS);
            System.out.println("woken up after " + millis + " ms");
            assertThat(millis).isGreaterThanOrEqualTo(90);
        }
    }

    /**
     * A driver thread closes its epoll while other threads wake it (stopping a shared driver): the
     * close used to fail with "Session is acquired by 1 clients" when a wake-up's write held the
     * arena, the driver thread died before reporting its end, and a second stop failed with
     * "Already closed". Wake-ups racing or following the close now do nothing.
     */
    @Test
    void wakeUpsRacingTheCloseNeitherFailItNorFailThemselves() throws Exception {
        for (int round = 0; round < 50; round++) {
            final Epoll epoll = new Epoll(8);
            final java.util.concurrent.atomic.AtomicBoolean stop = new java.util.concurrent.atomic.AtomicBoolean();
            final CompletableFuture<Void> wakers = CompletableFuture.runAsync(() -> {
                while (!stop.get()) {
                    epoll.wakeUp();
                }
            });
            Thread.sleep(1);
            epoll.close();
            stop.set(true);
            wakers.get(5, TimeUnit.SECONDS);
            epoll.wakeUp();
            epoll.close();
        }
    }

    @Test
    void aWakeUpBeforeTheWaitIsNotLostAndIsConsumedOnce() throws Exception {
        try (Epoll epoll = new Epoll(8)) {
            epoll.wakeUp();
            epoll.wakeUp();
            assertThat(epoll.await(5_000)).isZero();
            assertThat(epoll.wokenUp()).isTrue();
            assertThat(epoll.await(0)).isZero();
            assertThat(epoll.wokenUp()).as("both wake-ups were drained at once").isFalse();
        }
    }

    @Test
    void aReadableSocketIsReportedWithItsToken() throws Exception {
        try (Epoll epoll = new Epoll(8); LinuxUdpSocket rx = Loopback.bound(false);
             LinuxUdpSocket tx = Loopback.bound(false); Arena arena = Arena.ofConfined();
             SendBatch send = new SendBatch(1)) {
            epoll.add(rx, 42L);
            assertThat(epoll.await(0)).isZero();
            send.destinationIpv4(send.add(Loopback.pattern(arena, 10, 0)), Loopback.IPV4, rx.localAddress().getPort());
            assertThat(tx.send(send, 0)).isEqualTo(1);
            assertThat(epoll.await(5_000)).isEqualTo(1);
            assertThat(epoll.readyToken(0)).isEqualTo(42L);
            assertThat(epoll.readyEvents(0) & Epoll.EPOLLIN).isEqualTo(Epoll.EPOLLIN);
            epoll.remove(rx.fd());
            assertThat(epoll.await(0)).isZero();
        }
    }
}
