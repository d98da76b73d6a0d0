// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.collectives;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.TreeSet;

/**
 * The small TCP rendezvous at the master that tells every rank every rank's endpoint address
 * [COLL-025]. Each rank other than 0 connects to {@code MASTER_ADDR:MASTER_PORT} (retrying until
 * the master is up), sends a hello (magic, rank, world size, endpoint host and port) and waits
 * for the table; rank 0 listens, collects a hello from every other rank, and answers every one
 * with the table, or with an error naming the contradiction or the ranks that never showed up.
 */
final class Rendezvous {
    static final int MAGIC = 0x4D52_5256; // "MRRV"
    private static final int OK = 0;
    private static final int ERROR = 1;

    private Rendezvous() {
    }

    /** Rank 0: collects every hello on {@code server}, then answers with the table. */
    static List<InetSocketAddress> master(final ServerSocket server, final int worldSize, final InetSocketAddress self,
                                          final long deadlineNs) throws IOException {
        final InetSocketAddress[] table = new InetSocketAddress[worldSize];
        final Socket[] sockets = new Socket[worldSize];
        table[0] = self;
        int missing = worldSize - 1;
        try {
            while (missing > 0) {
                final long leftMs = (deadlineNs - System.nanoTime()) / 1_000_000;
                if (leftMs <= 0) {
                    final TreeSet<Integer> absent = new TreeSet<>();
                    for (int r = 1; r < worldSize; r++) {
                        if (table[r] == null) {
                            absent.add(r);
                        }
                    }
                    final String why = "rendezvous at the master timed out: rank(s) " + absent
                        + " never showed up (of world size " + worldSize + ")";
                    failAll(sockets, why);
                    throw new CollectiveException(why, "rendezvous", absent.first(), null);
                }
                server.setSoTimeout((int) Math.min(Integer.MAX_VALUE, leftMs));
                final Socket s;
                try {
                    s = server.accept();
                } catch (final SocketTimeoutException ex) {
                    continue;
                }
                s.setSoTimeout((int) Math.max(1, Math.min(10_000, leftMs)));
                final DataInputStream in = new DataInputStream(s.getInputStream());
                final int magic;
                final int rank;
                final int size;
                final InetSocketAddress endpoint;
                try {
                    magic = in.readInt();
                    rank = in.readInt();
                    size = in.readInt();
                    endpoint = new InetSocketAddress(InetAddress.getByName(in.readUTF()), in.readInt());
                } catch (final IOException ex) {
                    s.close(); // not one of ours, or gone: ignore it
                    continue;
                }
                String problem = null;
                if (magic != MAGIC) {
                    problem = "not a MetaRoCE rendezvous hello";
                } else if (size != worldSize) {
                    problem = "rank " + rank + " at " + s.getInetAddress().getHostAddress() + " says world size " + size
                        + ", the master has " + worldSize;
                } else if (rank <= 0 || rank >= worldSize) {
                    problem = "rank " + rank + " from " + s.getInetAddress().getHostAddress() + " is not in 1.."
                        + (worldSize - 1);
                } else if (table[rank] != null) {
                    problem = "rank " + rank + " showed up twice (" + table[rank] + " and " + endpoint + ")";
                }
                if (problem != null) {
                    reply(s, ERROR, problem, null);
                    s.close();
                    if (magic != MAGIC) {
                        continue;
                    }
                    failAll(sockets, problem);
                    throw new CollectiveException("rendezvous: " + problem, "rendezvous", rank, null);
                }
                table[rank] = endpoint;
                sockets[rank] = s;
                missing--;
            }
            final List<InetSocketAddress> list = Arrays.asList(table);
            for (int r = 1; r < worldSize; r++) {
                reply(sockets[r], OK, null, list);
            }
            return new ArrayList<>(list);
        } finally {
            for (final Socket s : sockets) {
                if (s != null) {
                    s.close();
                }
            }
        }
    }

    private static void failAll(final Socket[] sockets, final String why) {
        for (final Socket s : sockets) {
            if (s != null) {
                try {
                    reply(s, ERROR, why, null);
                } catch (final IOException ex) {
                    // That rank is gone as well.
                }
            }
        }
    }

    private static void reply(final Socket s, final int status, final String error, final List<InetSocketAddress> table)
        throws IOException {
        final DataOutputStream out = new DataOutputStream(s.getOutputStream());
        out.writeInt(status);
        if (status == OK) {
            out.writeInt(table.size());
            for (final InetSocketAddress a : table) {
                out.writeUTF(a.getAddress().getHostAddress());
                out.writeInt(a.getPort());
            }
        } else {
            out.writeUTF(error);
        }
        out.flush();
    }

    /**
     * Rank 1..n-1: sends the hello over {@code toMaster} (already connected) and reads the table.
     */
    static List<InetSocketAddress> join(final Socket toMaster, final int rank, final int worldSize,
                                        final InetSocketAddress self, final long deadlineNs) throws IOException {
        final DataOutputStream out = new DataOutputStream(toMaster.getOutputStream());
        out.writeInt(MAGIC);
        out.writeInt(rank);
        out.writeInt(worldSize);
        out.writeUTF(self.getAddress().getHostAddress());
        out.writeInt(self.getPort());
        out.flush();
        // A grace period past the deadline: the master, which has the same deadline, then names
        // the missing ranks before this side gives up on its own.
        final long leftMs = Math.max(1, (deadlineNs - System.nanoTime()) / 1_000_000) + 5_000;
        toMaster.setSoTimeout((int) Math.min(Integer.MAX_VALUE, leftMs));
        final DataInputStream in = new DataInputStream(toMaster.getInputStream());
        try {
            final int status = in.readInt();
            if (status != OK) {
                final String why = in.readUTF();
                throw new CollectiveException("rank " + rank + ": the master refused the rendezvous: " + why,
                    "rendezvous", -1, null);
            }
            final int n = in.readInt();
            if (n != worldSize) {
                throw new CollectiveException("rank " + rank + ": the master sent a table of " + n + " ranks, expected "
                    + worldSize, "rendezvous", 0, null);
            }
            final List<InetSocketAddress> table = new ArrayList<>(n);
            for (int i = 0; i < n; i++) {
                table.add(new InetSocketAddress(InetAddress.getByName(in.readUTF()), in.readInt()));
            }
            return table;
        } catch (final SocketTimeoutException ex) {
            throw new CollectiveException("rank " + rank + ": no table from the master at "
                + toMaster.getRemoteSocketAddress() + " within the setup timeout (other ranks have not all shown up)",
                "rendezvous", 0, ex);
        }
    }

    /** Connects to the master, retrying while it is not listening yet, until the deadline. */
    static Socket connect(final InetSocketAddress master, final int rank, final long deadlineNs)
        throws InterruptedException {
        IOException last = null;
        while (System.nanoTime() - deadlineNs < 0) {
            final Socket s = new Socket();
            try {
                s.connect(master, (int) Math.max(1, Math.min(2_000, (deadlineNs - System.nanoTime()) / 1_000_000)));
                s.setTcpNoDelay(true);
                return s;
            } catch (final IOException ex) {
                last = ex;
                try {
                    s.close();
                } catch (final IOException ignored) {
                    // Nothing to release.
                }
            }
            Thread.sleep(100);
        }
        throw new CollectiveException("rank " + rank + ": the master (rank 0) at " + master
            + " did not accept the rendezvous connection within the setup timeout" + (last != null ? " (" + last + ")"
            : ""), "rendezvous", 0, last);
    }
}
