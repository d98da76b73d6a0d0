// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.collectives;

/**
 * A collective operation failed: a peer stopped answering or died, the operation timed out, the
 * ranks disagree on an operation's arguments, or the communicator was already broken. The message
 * names the operation and the rank(s) involved; {@link #peerRank()} is the peer at fault when one
 * is known. After this exception the communicator is broken: later operations fail at once.
 */
public class CollectiveException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final int peerRank;
    private final String operation;

    /**
     * @param message what happened, naming the operation and the ranks
     * @param operation the operation's name (e.g. {@code all_reduce}), or null
     * @param peerRank the peer at fault, or -1
     * @param cause the underlying failure, or null
     */
    public CollectiveException(final String message, final String operation, final int peerRank,
                               final Throwable cause) {
        super(message, cause);
        this.operation = operation;
        this.peerRank = peerRank;
    }

    /** @return the rank of the peer at fault, or -1 when none is known */
    public int peerRank() {
        return peerRank;
    }

    /** @return the operation that failed (e.g. {@code all_reduce}), or null outside an operation */
    public String operation() {
        return operation;
    }
}
