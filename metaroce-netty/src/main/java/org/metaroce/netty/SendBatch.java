// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.netty;

import java.net.InetSocketAddress;
import java.util.Arrays;

/**
 * The runs of datagrams queued for one socket, in send order, until the sink hands them over
 * with {@link UdpSocket#send(SendBatch)}. An entry is a run of datagrams that lie back to back in
 * one {@link SendChunk}: {@code bytes} in all, cut every {@code segmentBytes} (the last one may be
 * shorter), to one recipient. A <em>segmented</em> entry is to be sent as one UDP GSO message; the
 * datagrams of any other entry are separate messages (one {@code sendmmsg} slot each).
 *
 * <p>Transports read entries {@code 0..size()-1} and report why they stopped with
 * {@link #stopBecause}; the sink adds entries and removes what a socket took. Allocates nothing
 * once its arrays have grown to the largest batch seen. Owning thread only.
 */
public final class SendBatch {
    private SendChunk[] chunk = new SendChunk[16];
    private int[] offset = new int[16];
    private int[] bytes = new int[16];
    private int[] segmentBytes = new int[16];
    private boolean[] segmented = new boolean[16];
    private InetSocketAddress[] recipient = new InetSocketAddress[16];
    /** Entries live in [head, tail). */
    private int head;
    private int tail;
    private int datagrams;
    private SendFailure stop;

    // What the latest consume(...) removed, for the sink's counters.
    private long removedBytes;
    private int removedSegmentedEntries;
    private int removedSegmentedDatagrams;

    /** @return entries queued */
    public int size() {
        return tail - head;
    }

    /** @return datagrams queued (a segmented entry counts each of its segments) */
    public int datagrams() {
        return datagrams;
    }

    /**
     * @param i entry index, 0..size()-1
     * @return the chunk the entry lies in
     */
    public SendChunk chunk(final int i) {
        return chunk[head + i];
    }

    /**
     * @param i entry index
     * @return offset of its first byte in its chunk
     */
    public int offset(final int i) {
        return offset[head + i];
    }

    /**
     * @param i entry index
     * @return its bytes (all its datagrams)
     */
    public int bytes(final int i) {
        return bytes[head + i];
    }

    /**
     * @param i entry index
     * @return size of each datagram but the last, which may be shorter
     */
    public int segmentBytes(final int i) {
        return segmentBytes[head + i];
    }

    /**
     * @param i entry index
     * @return whether it goes as one UDP GSO message
     */
    public boolean segmented(final int i) {
        return segmented[head + i];
    }

    /**
     * @param i entry index
     * @return its destination, or null for the peer the socket is connected to
     */
    public InetSocketAddress recipient(final int i) {
        return recipient[head + i];
    }

    /**
     * @param i entry index
     * @return its datagrams
     */
    public int datagrams(final int i) {
        return datagramsOf(head + i);
    }

    /**
     * A socket's reason for taking fewer datagrams than queued (see {@link UdpSocket#send}).
     *
     * @param failure why the datagram after the taken ones was not taken
     */
    public void stopBecause(final SendFailure failure) {
        stop = failure;
    }

    // ------------------------------------------------------------------ the sink's side

    /** Queues a run at the end. */
    void add(final SendChunk in, final int at, final int length, final int segment, final boolean gso,
             final InetSocketAddress to) {
        if (tail == chunk.length) {
            makeRoom();
        }
        chunk[tail] = in;
        offset[tail] = at;
        bytes[tail] = length;
        segmentBytes[tail] = segment;
        segmented[tail] = gso;
        recipient[tail] = to;
        tail++;
        datagrams += datagramsOf(tail - 1);
    }

    /** @return the reason the latest send stopped, or null; clears it */
    SendFailure takeStop() {
        final SendFailure s = stop;
        stop = null;
        return s;
    }

    /**
     * Removes the first {@code count} datagrams (what a socket took). Afterwards
     * {@link #removedBytes()} and the segmented figures tell what was removed.
     *
     * @throws IllegalStateException if that would split a segmented entry (a socket must take it whole)
     */
    void consume(final int count) {
        removedBytes = 0;
        removedSegmentedEntries = 0;
        removedSegmentedDatagrams = 0;
        int left = count;
        while (left > 0) {
            if (head == tail) {
                throw new IllegalStateException("a socket took " + count + " datagrams of a batch of fewer");
            }
            final int n = datagramsOf(head);
            if (left >= n) {
                removedBytes += bytes[head];
                if (segmented[head]) {
                    removedSegmentedEntries++;
                    removedSegmentedDatagrams += n;
                }
                left -= n;
                datagrams -= n;
                removeHead();
            } else {
                if (segmented[head]) {
                    throw new IllegalStateException("a socket took part of a segmented entry (" + left + " of " + n
                        + " datagrams)");
                }
                final int cut = left * segmentBytes[head];
                removedBytes += cut;
                offset[head] += cut;
                bytes[head] -= cut;
                datagrams -= left;
                left = 0;
            }
        }
    }

    /**
     * Removes what the next send would try first: the first datagram, or the whole first entry
     * when it is segmented.
     *
     * @return datagrams removed (0 when the batch is empty)
     */
    int dropFirst() {
        if (head == tail) {
            return 0;
        }
        final int n = segmented[head] ? datagramsOf(head) : 1;
        consume(n);
        return n;
    }

    /** @return bytes the latest {@link #consume} or {@link #dropFirst} removed */
    long removedBytes() {
        return removedBytes;
    }

    /** @return segmented entries the latest {@link #consume} removed */
    int removedSegmentedEntries() {
        return removedSegmentedEntries;
    }

    /** @return datagrams of those segmented entries */
    int removedSegmentedDatagrams() {
        return removedSegmentedDatagrams;
    }

    /** @return whether an entry lies in {@code c} */
    boolean references(final SendChunk c) {
        for (int i = head; i < tail; i++) {
            if (chunk[i] == c) {
                return true;
            }
        }
        return false;
    }

    /** Drops every entry. */
    void clear() {
        Arrays.fill(chunk, head, tail, null);
        Arrays.fill(recipient, head, tail, null);
        head = 0;
        tail = 0;
        datagrams = 0;
        stop = null;
    }

    private int datagramsOf(final int index) {
        final int segment = segmentBytes[index];
        return segment == 0 ? 1 : Math.max(1, (bytes[index] + segment - 1) / segment);
    }

    private void removeHead() {
        chunk[head] = null;
        recipient[head] = null;
        head++;
        if (head == tail) {
            head = 0;
            tail = 0;
        }
    }

    /** Moves the live entries to the front, or grows the arrays when they are full of live entries. */
    private void makeRoom() {
        final int live = tail - head;
        if (head > 0 && live < chunk.length / 2) {
            System.arraycopy(chunk, head, chunk, 0, live);
            System.arraycopy(offset, head, offset, 0, live);
            System.arraycopy(bytes, head, bytes, 0, live);
            System.arraycopy(segmentBytes, head, segmentBytes, 0, live);
            System.arraycopy(segmented, head, segmented, 0, live);
            System.arraycopy(recipient, head, recipient, 0, live);
            Arrays.fill(chunk, live, tail, null);
            Arrays.fill(recipient, live, tail, null);
        } else {
            final int n = chunk.length * 2;
            final SendChunk[] c = new SendChunk[n];
            System.arraycopy(chunk, head, c, 0, live);
            chunk = c;
            offset = Arrays.copyOfRange(offset, head, head + n);
            bytes = Arrays.copyOfRange(bytes, head, head + n);
            segmentBytes = Arrays.copyOfRange(segmentBytes, head, head + n);
            segmented = Arrays.copyOfRange(segmented, head, head + n);
            final InetSocketAddress[] r = new InetSocketAddress[n];
            System.arraycopy(recipient, head, r, 0, live);
            recipient = r;
        }
        head = 0;
        tail = live;
    }
}
