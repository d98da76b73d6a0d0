// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.engine;

/**
 * Sizes fixed when a queue pair is created (verbs ibv_qp_init_attr.cap): everything the QP
 * preallocates so that posting and the data path never allocate.
 *
 * @param sendQueueDepth send work requests outstanding at most (1..65536)
 * @param recvQueueDepth receive work requests posted at most (1..65536)
 * @param maxSendSge scatter-gather entries per send request (1..64)
 * @param maxRecvSge scatter-gather entries per receive request (1..64)
 * @param maxDestRdAtomic READ/atomic requests this QP answers concurrently (1..255)
 */
public record QueuePairCapabilities(int sendQueueDepth, int recvQueueDepth, int maxSendSge, int maxRecvSge,
                                    int maxDestRdAtomic) {
    /** Validates every size, naming the one out of range. */
    public QueuePairCapabilities {
        check("sendQueueDepth", sendQueueDepth, 1, 65536);
        check("recvQueueDepth", recvQueueDepth, 1, 65536);
        check("maxSendSge", maxSendSge, 1, 64);
        check("maxRecvSge", maxRecvSge, 1, 64);
        check("maxDestRdAtomic", maxDestRdAtomic, 1, 255);
    }

    /** @return a configuration suitable for tests and small tools: 256-deep queues, 4 SGEs, 16 reads */
    public static QueuePairCapabilities defaults() {
        return new QueuePairCapabilities(256, 256, 4, 4, 16);
    }

    private static void check(final String name, final int value, final int min, final int max) {
        if (value < min || value > max) {
            throw new IllegalArgumentException(name + " must be in " + min + ".." + max + ", got " + value);
        }
    }
}
