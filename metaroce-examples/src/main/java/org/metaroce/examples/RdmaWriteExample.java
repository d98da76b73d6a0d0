// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.examples;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.function.Consumer;

import org.metaroce.core.connection.Connection;
import org.metaroce.core.connection.RegionInfo;
import org.metaroce.core.verbs.AccessFlags;
import org.metaroce.core.verbs.MemoryRegion;
import org.metaroce.core.verbs.SendFlags;
import org.metaroce.core.verbs.SendRequest;
import org.metaroce.core.verbs.WrOpcode;

/**
 * RDMA WRITE, both sides: the server registers a region peers may write, listens, and hands the
 * region's address and rkey to the client in the private data of its CONNECT_REPLY
 * ({@link RegionInfo}); the client writes a message there. The server's CPU takes no part in the
 * WRITE: it learns that the bytes are in place when the client disconnects, which the client does
 * only once its WRITE completed — that is, once the server acknowledged the placed bytes.
 *
 * <p>Run without arguments for both sides on loopback, or {@code server [PORT]} and
 * {@code client HOST [PORT]} in two processes.
 */
public final class RdmaWriteExample {
    /** The service the server listens on (rdma_cm's port space; any 64-bit value both sides agree on). */
    public static final long SERVICE_ID = 0x4558_5752_4954L; // "EXWRIT"
    /** What the client writes. */
    public static final byte[] MESSAGE = "written by RDMA WRITE".getBytes(StandardCharsets.UTF_8);

    private RdmaWriteExample() {
    }

    // [readme-begin]
    /** Serves one client: returns the first MESSAGE.length bytes of its region once the client is done. */
    public static byte[] server(InetSocketAddress bind, Consumer<InetSocketAddress> listening) throws Exception {
        try (VerbsContext ctx = VerbsContext.open(bind)) {
            MemoryRegion mr = ctx.pd().registerMemory(ByteBuffer.allocateDirect(4096),
                AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE);
            // The client's queue pair may WRITE here; the reply tells it where (address, rkey, length).
            Connection connection = ctx.acceptOne(SERVICE_ID, AccessFlags.REMOTE_WRITE, RegionInfo.of(mr).encode(),
                listening);
            // A WRITE completes nothing here. The client disconnects once its WRITE completed, which
            // it does only after this side placed the bytes and acknowledged them.
            ctx.cm().awaitDisconnected(connection, Duration.ofSeconds(30));
            byte[] received = new byte[MESSAGE.length];
            mr.buffer().getBytes(0, received);
            return received;
        }
    }

    /** Connects to the server and writes MESSAGE at the start of its region. */
    public static void client(InetSocketAddress server) throws Exception {
        try (VerbsContext ctx = VerbsContext.open(new InetSocketAddress(0))) {
            MemoryRegion mr = ctx.pd().registerMemory(ByteBuffer.allocateDirect(4096), AccessFlags.LOCAL_WRITE);
            mr.buffer().putBytes(0, MESSAGE);
            Connection connection = ctx.connect(server, SERVICE_ID);
            RegionInfo remote = RegionInfo.decode(connection.peerPrivateData());
            SendRequest write = new SendRequest(1).wrId(1).opcode(WrOpcode.RDMA_WRITE)
                .sendFlags(SendFlags.SIGNALED).addSge(mr.address(), MESSAGE.length, mr.lkey())
                .remoteAddr(remote.address()).rkey(remote.rkey());
            Posting.require(connection.queuePair().postSend(write)); // a PostStatus code: OK, or why not
            Completions.next(ctx.device(), ctx.cq());                // polls the CQ, driving the device
            ctx.cm().disconnect(connection, Duration.ofSeconds(5));
        }
    }
    // [readme-end]

    /** @return what the server saw, with both sides in this JVM on loopback */
    public static byte[] runOnLoopback() throws Exception {
        return TwoSided.onLoopback(RdmaWriteExample::server, RdmaWriteExample::clientSide).server();
    }

    private static String clientSide(final InetSocketAddress server) throws Exception {
        client(server);
        return "wrote \"" + new String(MESSAGE, StandardCharsets.UTF_8) + '"';
    }

    /**
     * @param args none (both sides on loopback), {@code server [PORT]} or {@code client HOST [PORT]}
     * @throws Exception if the example fails
     */
    public static void main(final String[] args) throws Exception {
        TwoSided.main(args, RdmaWriteExample::server, b -> "received \"" + new String(b, StandardCharsets.UTF_8) + '"',
            RdmaWriteExample::clientSide, String::valueOf);
    }
}
