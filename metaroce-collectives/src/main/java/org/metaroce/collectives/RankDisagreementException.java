// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.collectives;

/**
 * The ranks called an operation with arguments that do not match (count, type, root, operation):
 * the root cause of a failure that the other ranks see only as a timeout waiting for this one
 * [COLL-028]. Where several ranks fail together ({@link LocalCluster#run}), this is the failure
 * reported first.
 */
public class RankDisagreementException extends CollectiveException {
    private static final long serialVersionUID = 1L;

    /**
     * @param message what does not match, naming the operation and the ranks
     * @param operation the operation's name
     * @param peerRank the rank whose data did not match, or -1
     * @param cause the underlying failure, or null
     */
    public RankDisagreementException(final String message, final String operation, final int peerRank,
                                     final Throwable cause) {
        super(message, operation, peerRank, cause);
    }
}
