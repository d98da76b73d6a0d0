// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.bench.loopback;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.net.InetSocketAddress;

import io.aeron.Aeron;
import io.aeron.CommonContext;
import io.aeron.driver.MediaDriver;
import io.aeron.driver.ThreadingMode;
import org.agrona.concurrent.AgentInvoker;

/**
 * One end of an Aeron contender: an embedded media driver in {@link ThreadingMode#INVOKER} mode and
 * an Aeron client whose conductor is also invoked, both driven by the thread that owns this end
 * (like a MetaRoCE device in INVOKER mode). Each end has its own driver, as two hosts would: the
 * sending end's thread runs its driver's conductor and sender, the receiving end's thread its
 * driver's receiver, so the work splits over the two busy threads as it does for MetaRoCE.
 *
 * <p>Tuned for large messages as Aeron's performance guide documents: an MTU of {@link #mtu} (8 KiB
 * by default), 2 MiB socket buffers, a 2 MiB initial receiver window and 16 MiB terms.
 */
public final class AeronEnd implements AutoCloseable {
    /** Socket buffer bytes (within this machine's net.core.[rw]mem_max of 4 MiB). */
    public static final int SOCKET_BUFFER_BYTES = 2 << 20;
    /** Initial receiver window. */
    public static final int RECEIVER_WINDOW_BYTES = 2 << 20;
    /** Term length of publications. */
    public static final int TERM_BYTES = 16 << 20;
    /** Default MTU (Aeron's recommendation for throughput; its own default is 1408). */
    public static final int DEFAULT_MTU = 8192;

    final MediaDriver driver;
    final Aeron aeron;
    final AgentInvoker driverInvoker;
    final AgentInvoker clientInvoker;
    final int mtu;

    /** @param mtu Aeron MTU (frame) length, 4 KiB .. 64 KiB */
    AeronEnd(final int mtu) {
        this.mtu = mtu;
        final String dir = CommonContext.getAeronDirectoryName() + "-metaroce-bench-" + ProcessHandle.current().pid()
            + "-" + System.nanoTime();
        final MediaDriver.Context ctx = new MediaDriver.Context().aeronDirectoryName(dir)
            .threadingMode(ThreadingMode.INVOKER).dirDeleteOnStart(true).dirDeleteOnShutdown(true)
            .warnIfDirectoryExists(false).termBufferSparseFile(false)
            .mtuLength(mtu).socketSndbufLength(SOCKET_BUFFER_BYTES).socketRcvbufLength(SOCKET_BUFFER_BYTES)
            .initialWindowLength(RECEIVER_WINDOW_BYTES).publicationTermBufferLength(TERM_BYTES);
        driver = MediaDriver.launchEmbedded(ctx);
        driverInvoker = driver.sharedAgentInvoker();
        Aeron client = null;
        try {
            client = Aeron.connect(new Aeron.Context().aeronDirectoryName(driver.aeronDirectoryName())
                .driverAgentInvoker(driverInvoker).useConductorAgentInvoker(true));
        } catch (final RuntimeException ex) {
            driver.close();
            throw ex;
        }
        aeron = client;
        clientInvoker = aeron.conductorAgentInvoker();
    }

    /** One duty cycle of the driver and the client conductor. */
    int invoke() {
        return driverInvoker.invoke() + clientInvoker.invoke();
    }

    /** @return a UDP channel to 127.0.0.1 on {@code port} with this end's tuning */
    String channel(final int port) {
        return "aeron:udp?endpoint=127.0.0.1:" + port + "|mtu=" + mtu + "|term-length=" + TERM_BYTES + "|rcv-wnd="
            + RECEIVER_WINDOW_BYTES + "|so-sndbuf=" + SOCKET_BUFFER_BYTES + "|so-rcvbuf=" + SOCKET_BUFFER_BYTES;
    }

    /** @return a UDP port free on 127.0.0.1 right now */
    static int freePort() {
        try (DatagramSocket s = new DatagramSocket(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0))) {
            return s.getLocalPort();
        } catch (final IOException ex) {
            throw new UncheckedIOException(ex);
        }
    }

    @Override
    public void close() {
        try {
            aeron.close();
        } finally {
            driver.close();
        }
    }
}
