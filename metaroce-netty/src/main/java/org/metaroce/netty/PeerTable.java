// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.netty;

import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import org.agrona.MutableDirectBuffer;
import org.agrona.collections.Long2LongHashMap;
import org.agrona.collections.Object2IntHashMap;
import org.metaroce.core.engine.PeerDirectory;

/**
 * The driver's map between UDP socket addresses and the core's integer peer ids, and from peer ids
 * to hosts (IP addresses) for the engine's origin check [ENC-004].
 *
 * <p>Two kinds of ids:
 * <ul>
 *   <li><b>Pinned</b> ids ({@code 0, 1, 2, ...}) stay valid while pinned.
 *       {@link #peerId(InetSocketAddress)} hands out <em>permanent</em> ones for destinations (a
 *       QP's remote endpoint address, connected by hand); the connection manager pins the peers it
 *       has verified with {@link #pin(int)} and releases them with {@link #unpin(int)}: pins count,
 *       and an id whose pins are all released (and that {@code peerId} never made permanent) is
 *       recycled.</li>
 *   <li><b>Transient</b> ids (bit 30 set) name senders nobody asked about: every datagram's source
 *       address needs an id, and a peer sends from many entropy ports. They live in a bounded
 *       ring, overwritten cyclically, so a flood of spoofed source addresses cannot grow memory.
 *       A transient id carries a generation, so a stale one is recognised as unknown rather than
 *       silently naming the address that replaced it.</li>
 * </ul>
 *
 * <p>Hosts: every address's IP address has a host id, shared by all ids with that IP address
 * and reference-counted (host ids of evicted senders are recycled). A pinned id holds its host, so
 * a QP whose remote peer is pinned keeps a stable host id.
 *
 * <p>Lookups on the receive path and {@link #addressBytes} allocate nothing: IPv4 addresses are
 * keyed by address and port packed in a long, IPv6 ones by the socket address itself and by the
 * raw address; every entry keeps its 16-byte address form. A transport that reports senders as raw
 * addresses looks them up with {@link #lookupOrAssign(int, int)} or
 * {@link #lookupOrAssign(long, long, int)}, which build an address object only for a new sender.
 *
 * <p>Not thread-safe: the device's owning thread uses it.
 */
public final class PeerTable implements PeerDirectory {
    /** Returned by lookups that find nothing. */
    public static final int NO_PEER = -1;
    /** Bit set in every transient peer id. */
    public static final int TRANSIENT_FLAG = 1 << 30;
    /** Default number of transient ids. */
    public static final int DEFAULT_TRANSIENT_CAPACITY = 4096;

    private static final boolean INET4_HASH_IS_ADDRESS = inet4HashIsAddress();
    /** The first 8 bytes of an IPv4-mapped IPv6 address ::ffff:a.b.c.d, as a long. */
    private static final long V4_MAPPED_HIGH = 0L;
    private static final long V4_MAPPED_LOW_PREFIX = 0xFFFFL << 32;

    private final int transientBits;
    private final int transientMask;
    private final int generationMask;

    // Pinned entries, indexed by id; a released id is null in pinned[] and sits in freePinned.
    private InetSocketAddress[] pinned = new InetSocketAddress[16];
    private int[] pinnedHost = new int[16];
    private int[] pinCount = new int[16];
    private boolean[] permanent = new boolean[16];
    private long[] pinnedHigh = new long[16];
    private long[] pinnedLow = new long[16];
    private int pinnedHighWater;
    private int pinnedLive;
    private int[] freePinned = new int[16];
    private int freePinnedCount;

    private final InetSocketAddress[] transientAddress;
    private final int[] transientId;
    private final int[] transientHost;
    private final long[] transientHigh;
    private final long[] transientLow;
    private int transientNext;
    private int generation;
    private int transientCount;

    private final Long2LongHashMap v4Peers = new Long2LongHashMap(NO_PEER);
    private final Object2IntHashMap<InetSocketAddress> v6Peers = new Object2IntHashMap<>(NO_PEER);
    /** The same ids as {@link #v6Peers}, keyed by the raw address, for transports that report raw addresses. */
    private final Ipv6PeerIndex v6Index = new Ipv6PeerIndex();

    private final Long2LongHashMap v4Hosts = new Long2LongHashMap(NO_PEER);
    private final Object2IntHashMap<InetAddress> v6Hosts = new Object2IntHashMap<>(NO_PEER);
    private InetAddress[] hostAddress = new InetAddress[16];
    private int[] hostRefs = new int[16];
    private int[] freeHosts = new int[16];
    private int freeHostCount;
    private int hostHighWater;

    /** A table with {@link #DEFAULT_TRANSIENT_CAPACITY} transient ids. */
    public PeerTable() {
        this(DEFAULT_TRANSIENT_CAPACITY);
    }

    /**
     * @param transientCapacity number of transient ids, a power of two in 16..2^20
     */
    public PeerTable(final int transientCapacity) {
        if (transientCapacity < 16 || transientCapacity > (1 << 20) || Integer.bitCount(transientCapacity) != 1) {
            throw new IllegalArgumentException("transientCapacity must be a power of two in 16..2^20, got "
                + transientCapacity);
        }
        transientBits = Integer.numberOfTrailingZeros(transientCapacity);
        transientMask = transientCapacity - 1;
        generationMask = (1 << (30 - transientBits)) - 1;
        transientAddress = new InetSocketAddress[transientCapacity];
        transientId = new int[transientCapacity];
        transientHost = new int[transientCapacity];
        transientHigh = new long[transientCapacity];
        transientLow = new long[transientCapacity];
        Arrays.fill(transientId, NO_PEER);
    }

    // ------------------------------------------------------------------ receive path

    /**
     * The id of a datagram's sender: its pinned or transient id, or a new transient id (evicting the
     * oldest transient one when the ring is full). Allocates nothing when the sender is known.
     *
     * @param sender source address of a received datagram
     * @return its peer id
     */
    public int lookupOrAssign(final InetSocketAddress sender) {
        final int id = lookup(sender);
        return id != NO_PEER ? id : assignTransient(sender);
    }

    /**
     * {@link #lookupOrAssign(InetSocketAddress)} for a sender a transport reports as a raw IPv4
     * address: builds an {@link InetSocketAddress} only when the sender is new.
     *
     * @param ipv4 the IPv4 address, most significant byte first
     * @param port the UDP port
     * @return its peer id
     */
    public int lookupOrAssign(final int ipv4, final int port) {
        final int id = (int) v4Peers.get(v4Key(ipv4, port));
        return id != NO_PEER ? id : assignTransient(new InetSocketAddress(inet4(ipv4), port));
    }

    /**
     * {@link #lookupOrAssign(InetSocketAddress)} for a sender a transport reports as a raw IPv6
     * address: builds an {@link InetSocketAddress} only when the sender is new. An IPv4-mapped
     * address ({@code ::ffff:a.b.c.d}, what a dual-stack socket reports for an IPv4 sender) is the
     * IPv4 sender's id, as the JDK reports such senders as IPv4 addresses. A new sender's address
     * carries no scope id (a link-local sender is named by its address alone).
     *
     * @param high first 8 bytes of the address, big-endian
     * @param low last 8 bytes, big-endian
     * @param port the UDP port
     * @return its peer id
     */
    public int lookupOrAssign(final long high, final long low, final int port) {
        if (high == V4_MAPPED_HIGH && (low & ~0xFFFF_FFFFL) == V4_MAPPED_LOW_PREFIX) {
            return lookupOrAssign((int) low, port);
        }
        final int id = v6Index.get(high, low, port, NO_PEER);
        return id != NO_PEER ? id : assignTransient(new InetSocketAddress(inet6(high, low), port));
    }

    /**
     * @param address a socket address
     * @return its peer id (pinned or transient), or {@link #NO_PEER}
     */
    public int lookup(final InetSocketAddress address) {
        final InetAddress ip = address.getAddress();
        if (ip instanceof Inet4Address) {
            return (int) v4Peers.get(v4Key((Inet4Address) ip, address.getPort()));
        }
        return v6Peers.getValue(address);
    }

    // ------------------------------------------------------------------ setup path

    /**
     * The permanent id of a destination (a QP's remote endpoint address), allocating one, pinning
     * its transient id, or making its pinned id permanent, as needed. Permanent ids are never
     * recycled.
     *
     * @param address a resolved socket address
     * @return its permanent peer id
     */
    public int peerId(final InetSocketAddress address) {
        final InetSocketAddress normalized = normalize(address);
        int id = lookup(normalized);
        if (id == NO_PEER) {
            id = addPinned(normalized);
        } else if (isTransient(id)) {
            id = pin(id);
            // Permanence, not a counted pin: the connection manager's pins stay balanced.
            pinCount[id]--;
        }
        permanent[id] = true;
        return id;
    }

    /**
     * Pins a peer id (the connection manager calls this once a peer has proved it receives packets
     * at its address). A transient id is replaced by a pinned id for the same address (the
     * transient one becomes unknown). Pins count: each is released by one {@link #unpin}.
     *
     * @param peerId a current pinned or transient id
     * @return the pinned id of that address
     * @throws IllegalArgumentException if the id is unknown or stale
     */
    @Override
    public int pin(final int peerId) {
        if (isLivePinned(peerId)) {
            pinCount[peerId]++;
            return peerId;
        }
        final int slot = currentTransientSlot(peerId);
        if (slot < 0) {
            throw new IllegalArgumentException("unknown or expired peer id " + peerId);
        }
        final InetSocketAddress address = transientAddress[slot];
        // Take the pinned reference on the host before dropping the transient one, so that the host
        // keeps its id (other ids of the same IP address may hold it).
        final int host = acquireHost(address.getAddress());
        evictTransient(slot);
        final int id = addPinned(address);
        releaseHost(host);
        pinCount[id] = 1;
        return id;
    }

    /**
     * Releases one {@link #pin}. When no pins remain and the id is not permanent, the id and its
     * address are forgotten and the id may be handed out again.
     *
     * @param peerId an id {@link #pin} returned
     */
    @Override
    public void unpin(final int peerId) {
        if (!isLivePinned(peerId) || pinCount[peerId] == 0) {
            throw new IllegalArgumentException("peer id " + peerId + " is not pinned");
        }
        if (--pinCount[peerId] == 0 && !permanent[peerId]) {
            removePinned(peerId);
        }
    }

    /**
     * Writes the address {@code peerId} stands for in the 18-byte form of [CM-015]: the IPv6
     * address (IPv4 as {@code ::ffff:a.b.c.d}) then the UDP port, big-endian. Allocates nothing.
     * An unknown id writes its own 4 bytes (which no address form can equal, being shorter).
     */
    @Override
    public int addressBytes(final int peerId, final MutableDirectBuffer dst, final int offset) {
        final long high;
        final long low;
        final int port;
        if (isLivePinned(peerId)) {
            high = pinnedHigh[peerId];
            low = pinnedLow[peerId];
            port = pinned[peerId].getPort();
        } else {
            final int slot = currentTransientSlot(peerId);
            if (slot < 0) {
                dst.putInt(offset, peerId, ByteOrder.BIG_ENDIAN);
                return Integer.BYTES;
            }
            high = transientHigh[slot];
            low = transientLow[slot];
            port = transientAddress[slot].getPort();
        }
        dst.putLong(offset, high, ByteOrder.BIG_ENDIAN);
        dst.putLong(offset + 8, low, ByteOrder.BIG_ENDIAN);
        dst.putShort(offset + 16, (short) port, ByteOrder.BIG_ENDIAN);
        return MAX_ADDRESS_BYTES;
    }

    /**
     * @param peerId a peer id
     * @return the socket address it names, or null if unknown, stale or released
     */
    public InetSocketAddress address(final int peerId) {
        if (isLivePinned(peerId)) {
            return pinned[peerId];
        }
        final int slot = currentTransientSlot(peerId);
        return slot < 0 ? null : transientAddress[slot];
    }

    /**
     * @param peerId a peer id
     * @return whether it is a transient id (bit 30 set)
     */
    public static boolean isTransient(final int peerId) {
        return peerId >= 0 && (peerId & TRANSIENT_FLAG) != 0;
    }

    @Override
    public int hostOf(final int peerId) {
        if (isLivePinned(peerId)) {
            return pinnedHost[peerId];
        }
        final int slot = currentTransientSlot(peerId);
        if (slot >= 0) {
            return transientHost[slot];
        }
        // Unknown ids get a negative value of their own: it equals no host and no other unknown id.
        return -2 - (peerId & Integer.MAX_VALUE);
    }

    /** @return number of live pinned ids */
    public int pinnedCount() {
        return pinnedLive;
    }

    /** @return number of live transient ids */
    public int transientCount() {
        return transientCount;
    }

    /** @return number of hosts currently known */
    public int hostCount() {
        return v4Hosts.size() + v6Hosts.size();
    }

    /** @return every address with a live id, pinned ones first (a copy, for diagnostics and tests) */
    public List<InetSocketAddress> addresses() {
        final List<InetSocketAddress> out = new ArrayList<>(pinnedLive + transientCount);
        for (int i = 0; i < pinnedHighWater; i++) {
            if (pinned[i] != null) {
                out.add(pinned[i]);
            }
        }
        for (int i = 0; i < transientAddress.length; i++) {
            if (transientId[i] != NO_PEER) {
                out.add(transientAddress[i]);
            }
        }
        return out;
    }

    // ------------------------------------------------------------------ internals

    private boolean isLivePinned(final int peerId) {
        return peerId >= 0 && peerId < pinnedHighWater && pinned[peerId] != null;
    }

    private int addPinned(final InetSocketAddress address) {
        final int id;
        if (freePinnedCount > 0) {
            id = freePinned[--freePinnedCount];
        } else {
            id = pinnedHighWater;
            if (id == TRANSIENT_FLAG - 1) {
                throw new IllegalStateException("too many pinned peers");
            }
            if (id == pinned.length) {
                final int n = id * 2;
                pinned = Arrays.copyOf(pinned, n);
                pinnedHost = Arrays.copyOf(pinnedHost, n);
                pinCount = Arrays.copyOf(pinCount, n);
                permanent = Arrays.copyOf(permanent, n);
                pinnedHigh = Arrays.copyOf(pinnedHigh, n);
                pinnedLow = Arrays.copyOf(pinnedLow, n);
            }
            pinnedHighWater = id + 1;
        }
        pinned[id] = address;
        pinnedHost[id] = acquireHost(address.getAddress());
        pinCount[id] = 0;
        permanent[id] = false;
        pinnedHigh[id] = addressHigh(address.getAddress());
        pinnedLow[id] = addressLow(address.getAddress());
        pinnedLive++;
        putPeer(address, id);
        return id;
    }

    private void removePinned(final int id) {
        removePeer(pinned[id]);
        releaseHost(pinnedHost[id]);
        pinned[id] = null;
        pinnedHost[id] = NO_PEER;
        pinnedLive--;
        if (freePinnedCount == freePinned.length) {
            freePinned = Arrays.copyOf(freePinned, freePinnedCount * 2);
        }
        freePinned[freePinnedCount++] = id;
    }

    private int assignTransient(final InetSocketAddress sender) {
        final int slot = transientNext;
        if (transientId[slot] != NO_PEER) {
            evictTransient(slot);
        }
        final int id = TRANSIENT_FLAG | (generation << transientBits) | slot;
        final InetAddress ip = sender.getAddress();
        transientAddress[slot] = sender;
        transientId[slot] = id;
        transientHost[slot] = acquireHost(ip);
        transientHigh[slot] = addressHigh(ip);
        transientLow[slot] = addressLow(ip);
        transientCount++;
        putPeer(sender, id);
        transientNext = (slot + 1) & transientMask;
        if (transientNext == 0) {
            generation = (generation + 1) & generationMask;
        }
        return id;
    }

    private void evictTransient(final int slot) {
        final InetSocketAddress address = transientAddress[slot];
        removePeer(address);
        releaseHost(transientHost[slot]);
        transientAddress[slot] = null;
        transientId[slot] = NO_PEER;
        transientHost[slot] = NO_PEER;
        transientCount--;
    }

    private int currentTransientSlot(final int peerId) {
        if (!isTransient(peerId)) {
            return -1;
        }
        final int slot = peerId & transientMask;
        return transientId[slot] == peerId ? slot : -1;
    }

    private void putPeer(final InetSocketAddress address, final int id) {
        final InetAddress ip = address.getAddress();
        if (ip instanceof Inet4Address) {
            v4Peers.put(v4Key((Inet4Address) ip, address.getPort()), id);
        } else {
            v6Peers.put(address, id);
            v6Index.put(addressHigh(ip), addressLow(ip), address.getPort(), id);
        }
    }

    private void removePeer(final InetSocketAddress address) {
        final InetAddress ip = address.getAddress();
        if (ip instanceof Inet4Address) {
            v4Peers.remove(v4Key((Inet4Address) ip, address.getPort()));
        } else {
            v6Peers.removeKey(address);
            v6Index.remove(addressHigh(ip), addressLow(ip), address.getPort());
        }
    }

    private int acquireHost(final InetAddress ip) {
        int host = ip instanceof Inet4Address ? (int) v4Hosts.get(ipv4((Inet4Address) ip) & 0xFFFF_FFFFL)
            : v6Hosts.getValue(ip);
        if (host != NO_PEER) {
            hostRefs[host]++;
            return host;
        }
        if (freeHostCount > 0) {
            host = freeHosts[--freeHostCount];
        } else {
            host = hostHighWater++;
            if (host == hostAddress.length) {
                hostAddress = Arrays.copyOf(hostAddress, host * 2);
                hostRefs = Arrays.copyOf(hostRefs, host * 2);
            }
        }
        hostAddress[host] = ip;
        hostRefs[host] = 1;
        if (ip instanceof Inet4Address) {
            v4Hosts.put(ipv4((Inet4Address) ip) & 0xFFFF_FFFFL, host);
        } else {
            v6Hosts.put(ip, host);
        }
        return host;
    }

    private void releaseHost(final int host) {
        if (--hostRefs[host] > 0) {
            return;
        }
        final InetAddress ip = hostAddress[host];
        if (ip instanceof Inet4Address) {
            v4Hosts.remove(ipv4((Inet4Address) ip) & 0xFFFF_FFFFL);
        } else {
            v6Hosts.removeKey(ip);
        }
        hostAddress[host] = null;
        if (freeHostCount == freeHosts.length) {
            freeHosts = Arrays.copyOf(freeHosts, freeHostCount * 2);
        }
        freeHosts[freeHostCount++] = host;
    }

    /** First 8 bytes of the 16-byte form (IPv4 as ::ffff:a.b.c.d). */
    private static long addressHigh(final InetAddress ip) {
        if (ip instanceof Inet4Address) {
            return V4_MAPPED_HIGH;
        }
        final byte[] b = ip.getAddress();
        long v = 0;
        for (int i = 0; i < 8; i++) {
            v = (v << 8) | (b[i] & 0xFF);
        }
        return v;
    }

    /** Last 8 bytes of the 16-byte form. */
    private static long addressLow(final InetAddress ip) {
        if (ip instanceof Inet4Address) {
            return V4_MAPPED_LOW_PREFIX | (ipv4((Inet4Address) ip) & 0xFFFF_FFFFL);
        }
        final byte[] b = ip.getAddress();
        long v = 0;
        for (int i = 8; i < 16; i++) {
            v = (v << 8) | (b[i] & 0xFF);
        }
        return v;
    }

    private static long v4Key(final Inet4Address ip, final int port) {
        return v4Key(ipv4(ip), port);
    }

    private static long v4Key(final int ipv4, final int port) {
        return ((ipv4 & 0xFFFF_FFFFL) << 16) | port;
    }

    private static InetAddress inet4(final int ipv4) {
        try {
            return InetAddress.getByAddress(new byte[] {(byte) (ipv4 >>> 24), (byte) (ipv4 >>> 16), (byte) (ipv4 >>> 8),
                (byte) ipv4});
        } catch (final UnknownHostException ex) {
            throw new IllegalStateException("4 bytes are an IPv4 address", ex);
        }
    }

    private static InetAddress inet6(final long high, final long low) {
        final byte[] b = new byte[16];
        for (int i = 0; i < 8; i++) {
            b[i] = (byte) (high >>> (56 - 8 * i));
            b[8 + i] = (byte) (low >>> (56 - 8 * i));
        }
        try {
            return InetAddress.getByAddress(b);
        } catch (final UnknownHostException ex) {
            throw new IllegalStateException("16 bytes are an IPv6 address", ex);
        }
    }

    /** The IPv4 address as an int, without allocating where the JDK allows. */
    static int ipv4(final Inet4Address ip) {
        return INET4_HASH_IS_ADDRESS ? ip.hashCode() : toInt(ip.getAddress());
    }

    private static int toInt(final byte[] b) {
        return ((b[0] & 0xFF) << 24) | ((b[1] & 0xFF) << 16) | ((b[2] & 0xFF) << 8) | (b[3] & 0xFF);
    }

    /** OpenJDK's Inet4Address.hashCode() is the address itself; check rather than assume. */
    private static boolean inet4HashIsAddress() {
        try {
            final byte[][] samples = {{(byte) 192, 0, 2, (byte) 171}, {10, 1, 2, 3}, {(byte) 255, (byte) 255, 0, 1}};
            for (final byte[] s : samples) {
                if (InetAddress.getByAddress(s).hashCode() != toInt(s)) {
                    return false;
                }
            }
            return true;
        } catch (final UnknownHostException ex) {
            return false;
        }
    }

    private static InetSocketAddress normalize(final InetSocketAddress address) {
        if (address == null) {
            throw new IllegalArgumentException("address must not be null");
        }
        if (address.isUnresolved()) {
            throw new IllegalArgumentException("address " + address + " is unresolved; resolve it first");
        }
        if (address.getPort() == 0) {
            throw new IllegalArgumentException("address " + address + " has port 0");
        }
        return address;
    }
}
