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
 * RDMA READ, both sides: the server publishes a region holding a message — its address, rkey and
 * length in the private data of its CONNECT_REPLY ({@link RegionInfo}) — and its queue pair grants
 * REMOTE_READ; the client READs the whole region into its own memory. The server's CPU takes no
 * part in the READ.
 *
 * <p>Run without arguments for both sides on loopback, or {@code server [PORT]} and
 * {@code client HOST [PORT]} in two processes.
 */
public final class RdmaReadExample {
    /** The service the server listens on. */
    public static final long SERVICE_ID = 0x4558_5245_4144L; // "EXREAD"
    /** What the server's region holds. */
    public static final byte[] PUBLISHED = "read by RDMA READ, no server CPU involved".getBytes(StandardCharsets.UTF_8);

    private RdmaReadExample() {
    }

    /**
     * Publishes {@link #PUBLISHED} to one client and waits until it has disconnected.
     *
     * @param bind where to listen
     * @param listening told the address once the server listens
     * @return the region the client was given
     * @throws Exception if the exchange fails
     */
    public static RegionInfo server(final InetSocketAddress bind, final Consumer<InetSocketAddress> listening)
        throws Exception {
        try (VerbsContext ctx = VerbsContext.open(bind)) {
            final ByteBuffer memory = ByteBuffer.allocateDirect(PUBLISHED.length);
            memory.put(0, PUBLISHED);
            final MemoryRegion mr = ctx.pd().registerMemory(memory, AccessFlags.REMOTE_READ);
            // Both the region and each client's queue pair must allow READ.
            final RegionInfo published = RegionInfo.of(mr);
            final Connection connection = ctx.acceptOne(SERVICE_ID, AccessFlags.REMOTE_READ, published.encode(),
                listening);
            ctx.cm().awaitDisconnected(connection, Duration.ofSeconds(30));
            return published;
        }
    }

    /**
     * READs the server's whole region.
     *
     * @param server the server's address
     * @return the bytes read
     * @throws Exception if the exchange fails
     */
    public static byte[] client(final InetSocketAddress server) throws Exception {
        try (VerbsContext ctx = VerbsContext.open(new InetSocketAddress(0))) {
            // A READ's response is written into local memory by the device: LOCAL_WRITE.
            final MemoryRegion mr = ctx.pd().registerMemory(ByteBuffer.allocateDirect(4096), AccessFlags.LOCAL_WRITE);
            final Connection connection = ctx.connect(server, SERVICE_ID);
            final RegionInfo remote = RegionInfo.decode(connection.peerPrivateData());
            final int length = (int) Math.min(remote.length(), mr.length());
            Posting.require(connection.queuePair().postSend(new SendRequest(1).wrId(1).opcode(WrOpcode.RDMA_READ)
                .sendFlags(SendFlags.SIGNALED).addSge(mr.address(), length, mr.lkey())
                .remoteAddr(remote.address()).rkey(remote.rkey())));
            Completions.next(ctx.device(), ctx.cq());
            final byte[] read = new byte[length];
            mr.buffer().getBytes(0, read);
            ctx.cm().disconnect(connection, Duration.ofSeconds(5));
            return read;
        }
    }

    /**
     * @return the region the server published and what the client read, with both sides in this JVM on loopback
     * @throws Exception if the exchange fails
     */
    public static TwoSided.Outcome<RegionInfo, byte[]> runOnLoopback() throws Exception {
        return TwoSided.onLoopback(RdmaReadExample::server, RdmaReadExample::client);
    }

    /**
     * @param args none (both sides on loopback), {@code server [PORT]} or {@code client HOST [PORT]}
     * @throws Exception if the example fails
     */
    public static void main(final String[] args) throws Exception {
        TwoSided.main(args, RdmaReadExample::server, region -> "published " + region,
            RdmaReadExample::client, read -> "read \"" + new String(read, StandardCharsets.UTF_8) + '"');
    }
}
