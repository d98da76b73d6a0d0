// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

/**
 * MetaRoCE over UDP: the device ({@link org.metaroce.netty.MetaRoceDevice}) driven by Netty (epoll
 * or NIO) or, on JDK 22 and newer, by the native Linux transport.
 *
 * <p>This is a multi-release module: {@code META-INF/versions/22} adds classes to the packages
 * {@code org.metaroce.netty} and {@code org.metaroce.netty.linux} (no new package, so this one
 * descriptor covers both releases). The native transport calls libc through
 * {@code java.lang.foreign}: on the module path run with
 * {@code --enable-native-access=org.metaroce.netty}. {@code org.metaroce.netty.linux} (the raw
 * socket calls) is exported only to the project's benchmarks.
 */
@SuppressWarnings({"module", "requires-automatic", "requires-transitive-automatic"})
module org.metaroce.netty {
    requires transitive org.metaroce.core;
    requires transitive org.agrona;
    requires org.slf4j;
    requires io.netty.common;
    requires io.netty.buffer;
    requires io.netty.transport;
    requires io.netty.transport.unix.common;
    requires io.netty.transport.classes.epoll;

    exports org.metaroce.netty;
    exports org.metaroce.netty.linux to org.metaroce.bench;
}
