// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.examples;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.function.Consumer;

import org.metaroce.core.connection.Connection;
import org.metaroce.core.verbs.AccessFlags;
import org.metaroce.core.verbs.CompletionQueue;
import org.metaroce.core.verbs.MemoryRegion;
import org.metaroce.core.verbs.RecvRequest;
import org.metaroce.core.verbs.SendFlags;
import org.metaroce.core.verbs.SendRequest;
import org.metaroce.core.verbs.WorkCompletion;
import org.metaroce.core.verbs.WrOpcode;

/**
 * SEND/RECV, both sides: a request and its reply. The client posts a receive for the reply, then
 * SENDs a request; the server receives it into the buffer of a posted receive and SENDs the
 * request back in upper case. Nothing but the queue pairs is exchanged: a SEND names no remote
 * address, so no region information travels in the private data.
 *
 * <p>Run without arguments for both sides on loopback, or {@code server [PORT]} and
 * {@code client HOST [PORT]} in two processes.
 */
public final class SendRecvExample {
    /** The service the server listens on. */
    public static final long SERVICE_ID = 0x4558_5345_4E44L; // "EXSEND"
    /** What the client sends. */
    public static final String REQUEST = "hello over SEND/RECV";
    /** Largest message either side receives. */
    private static final int MAX_MESSAGE = 1024;

    private SendRecvExample() {
    }

    /**
     * Serves one client: receives its request, replies with it in upper case.
     *
     * @param bind where to listen
     * @param listening told the address once the server listens
     * @return the request as received
     * @throws Exception if the exchange fails
     */
    public static String server(final InetSocketAddress bind, final Consumer<InetSocketAddress> listening)
        throws Exception {
        try (VerbsContext ctx = VerbsContext.open(bind)) {
            // Receive buffers are written by the device: LOCAL_WRITE. No remote access at all.
            final MemoryRegion mr = ctx.pd().registerMemory(ByteBuffer.allocateDirect(2 * MAX_MESSAGE),
                AccessFlags.LOCAL_WRITE);
            final Connection connection = ctx.acceptOne(SERVICE_ID, 0, null, listening);
            // The queue pair exists once accepted. A request that arrives before this receive is
            // posted is answered RNR NAK and sent again (the connection manager's QPs retry RNR
            // without limit, as rnr_retry 7 does), so it is not lost.
            Posting.require(connection.queuePair().postRecv(new RecvRequest(1).wrId(1)
                .addSge(mr.address(), MAX_MESSAGE, mr.lkey())));
            final WorkCompletion received = Completions.next(ctx.device(), ctx.cq());
            final byte[] bytes = new byte[received.byteLen()];
            mr.buffer().getBytes(0, bytes);
            final String text = new String(bytes, StandardCharsets.UTF_8);

            final byte[] reply = text.toUpperCase(java.util.Locale.ROOT).getBytes(StandardCharsets.UTF_8);
            mr.buffer().putBytes(MAX_MESSAGE, reply);
            Posting.require(connection.queuePair().postSend(new SendRequest(1).wrId(2).opcode(WrOpcode.SEND)
                .sendFlags(SendFlags.SIGNALED).addSge(mr.address() + MAX_MESSAGE, reply.length, mr.lkey())));
            Completions.next(ctx.device(), ctx.cq());
            ctx.cm().awaitDisconnected(connection, Duration.ofSeconds(30));
            return text;
        }
    }

    /**
     * Sends {@link #REQUEST} and waits for the reply.
     *
     * @param server the server's address
     * @return the reply
     * @throws Exception if the exchange fails
     */
    public static String client(final InetSocketAddress server) throws Exception {
        try (VerbsContext ctx = VerbsContext.open(new InetSocketAddress(0))) {
            // A queue of its own for receives: the reply's completion is not mistaken for the request's.
            final CompletionQueue recvCq = ctx.device().endpoint().createCompletionQueue(16);
            final MemoryRegion mr = ctx.pd().registerMemory(ByteBuffer.allocateDirect(2 * MAX_MESSAGE),
                AccessFlags.LOCAL_WRITE);
            final Connection connection = ctx.connect(server, SERVICE_ID, recvCq);
            // The reply's receive goes first, so the reply always finds one.
            Posting.require(connection.queuePair().postRecv(new RecvRequest(1).wrId(1)
                .addSge(mr.address() + MAX_MESSAGE, MAX_MESSAGE, mr.lkey())));
            final byte[] request = REQUEST.getBytes(StandardCharsets.UTF_8);
            mr.buffer().putBytes(0, request);
            Posting.require(connection.queuePair().postSend(new SendRequest(1).wrId(2).opcode(WrOpcode.SEND)
                .sendFlags(SendFlags.SIGNALED).addSge(mr.address(), request.length, mr.lkey())));
            Completions.next(ctx.device(), ctx.cq());
            final WorkCompletion replied = Completions.next(ctx.device(), recvCq);
            final byte[] reply = new byte[replied.byteLen()];
            mr.buffer().getBytes(MAX_MESSAGE, reply);
            ctx.cm().disconnect(connection, Duration.ofSeconds(5));
            return new String(reply, StandardCharsets.UTF_8);
        }
    }

    /**
     * @return what the server received and what the client got back, with both sides in this JVM on loopback
     * @throws Exception if the exchange fails
     */
    public static TwoSided.Outcome<String, String> runOnLoopback() throws Exception {
        return TwoSided.onLoopback(SendRecvExample::server, SendRecvExample::client);
    }

    /**
     * @param args none (both sides on loopback), {@code server [PORT]} or {@code client HOST [PORT]}
     * @throws Exception if the example fails
     */
    public static void main(final String[] args) throws Exception {
        TwoSided.main(args, SendRecvExample::server, request -> "received \"" + request + '"',
            SendRecvExample::client, reply -> "received reply \"" + reply + '"');
    }
}
