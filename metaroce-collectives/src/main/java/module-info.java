// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

/**
 * MetaRoCE collectives: a communicator over MetaRoCE devices, its bootstrap, all-reduce and the
 * other collective operations.
 */
@SuppressWarnings({"requires-automatic", "requires-transitive-automatic"})
module org.metaroce.collectives {
    requires transitive org.metaroce.netty;
    requires transitive org.metaroce.core;
    requires org.agrona;
    requires org.slf4j;
    // LocalCluster's rank threads are Netty FastThreadLocalThreads.
    requires io.netty.common;

    exports org.metaroce.collectives;
}
