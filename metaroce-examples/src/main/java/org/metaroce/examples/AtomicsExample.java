// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.examples;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.function.Consumer;

import org.agrona.BufferUtil;
import org.metaroce.core.connection.Connection;
import org.metaroce.core.connection.RegionInfo;
import org.metaroce.core.verbs.AccessFlags;
import org.metaroce.core.verbs.MemoryRegion;
import org.metaroce.core.verbs.SendFlags;
import org.metaroce.core.verbs.SendRequest;
import org.metaroce.core.verbs.WrOpcode;

/**
 * Atomics, both sides: the server publishes one 64-bit counter (8-byte aligned, REMOTE_ATOMIC);
 * the client adds {@link #ADDEND} to it with FETCH_ADD, which returns the value before the add,
 * then replaces the sum with {@link #SWAP} by COMPARE_SWAP, which swaps only when the counter
 * still holds the value compared with and returns the value it found either way. Each result
 * lands in 8 bytes of the client's memory. Counter values are in the hosts' byte order.
 *
 * <p>Run without arguments for both sides on loopback, or {@code server [PORT]} and
 * {@code client HOST [PORT]} in two processes.
 */
public final class AtomicsExample {
    /** The service the server listens on. */
    public static final long SERVICE_ID = 0x4558_4154_4F4DL; // "EXATOM"
    /** The counter's value before the client touches it. */
    public static final long INITIAL = 1000;
    /** What FETCH_ADD adds. */
    public static final long ADDEND = 42;
    /** What COMPARE_SWAP stores when the counter holds INITIAL + ADDEND. */
    public static final long SWAP = 7;

    /** What the client saw: the values FETCH_ADD and COMPARE_SWAP returned. */
    public record Results(long fetchAddReturned, long compareSwapReturned) {
    }

    private AtomicsExample() {
    }

    /**
     * Publishes the counter to one client and waits until it has disconnected.
     *
     * @param bind where to listen
     * @param listening told the address once the server listens
     * @return the counter's final value
     * @throws Exception if the exchange fails
     */
    public static long server(final InetSocketAddress bind, final Consumer<InetSocketAddress> listening)
        throws Exception {
        try (VerbsContext ctx = VerbsContext.open(bind)) {
            // Atomics need an 8-byte aligned target.
            final MemoryRegion mr = ctx.pd().registerMemory(BufferUtil.allocateDirectAligned(64, 64),
                AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_ATOMIC);
            mr.buffer().putLong(0, INITIAL);
            final Connection connection = ctx.acceptOne(SERVICE_ID, AccessFlags.REMOTE_ATOMIC,
                new RegionInfo(mr.address(), mr.rkey(), 8).encode(), listening);
            ctx.cm().awaitDisconnected(connection, Duration.ofSeconds(30));
            return mr.buffer().getLong(0);
        }
    }

    /**
     * FETCH_ADD, then COMPARE_SWAP, on the server's counter.
     *
     * @param server the server's address
     * @return what the two operations returned
     * @throws Exception if the exchange fails
     */
    public static Results client(final InetSocketAddress server) throws Exception {
        try (VerbsContext ctx = VerbsContext.open(new InetSocketAddress(0))) {
            // Each result (the value found) is written into local memory by the device: LOCAL_WRITE.
            final MemoryRegion mr = ctx.pd().registerMemory(BufferUtil.allocateDirectAligned(64, 64),
                AccessFlags.LOCAL_WRITE);
            final Connection connection = ctx.connect(server, SERVICE_ID);
            final RegionInfo counter = RegionInfo.decode(connection.peerPrivateData());
            final SendRequest atomic = new SendRequest(1);
            Posting.require(connection.queuePair().postSend(atomic.wrId(1).opcode(WrOpcode.ATOMIC_FETCH_ADD)
                .sendFlags(SendFlags.SIGNALED).addSge(mr.address(), 8, mr.lkey())
                .remoteAddr(counter.address()).rkey(counter.rkey()).compareAdd(ADDEND)));
            Completions.next(ctx.device(), ctx.cq());
            final long beforeAdd = mr.buffer().getLong(0);
            // The request object is reusable once posted: posting copies it.
            Posting.require(connection.queuePair().postSend(atomic.clear().wrId(2).opcode(WrOpcode.ATOMIC_CMP_SWAP)
                .sendFlags(SendFlags.SIGNALED).addSge(mr.address() + 8, 8, mr.lkey())
                .remoteAddr(counter.address()).rkey(counter.rkey()).compareAdd(beforeAdd + ADDEND).swap(SWAP)));
            Completions.next(ctx.device(), ctx.cq());
            final long beforeSwap = mr.buffer().getLong(8);
            ctx.cm().disconnect(connection, Duration.ofSeconds(5));
            return new Results(beforeAdd, beforeSwap);
        }
    }

    /**
     * @return the counter's final value and what the client's operations returned, with both sides
     *     in this JVM on loopback
     * @throws Exception if the exchange fails
     */
    public static TwoSided.Outcome<Long, Results> runOnLoopback() throws Exception {
        return TwoSided.onLoopback(AtomicsExample::server, AtomicsExample::client);
    }

    /**
     * @param args none (both sides on loopback), {@code server [PORT]} or {@code client HOST [PORT]}
     * @throws Exception if the example fails
     */
    public static void main(final String[] args) throws Exception {
        TwoSided.main(args, AtomicsExample::server, value -> "counter is now " + value,
            AtomicsExample::client, r -> "FETCH_ADD returned " + r.fetchAddReturned()
                + ", COMPARE_SWAP returned " + r.compareSwapReturned());
    }
}
