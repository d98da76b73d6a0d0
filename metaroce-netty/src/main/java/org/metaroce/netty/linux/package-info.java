// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

/**
 * Linux UDP sockets through the JDK's Foreign Function &amp; Memory API ({@code java.lang.foreign},
 * final in JDK 22): {@code sendmmsg}/{@code recvmmsg} straight on off-heap memory, UDP GSO and GRO,
 * the ECN field of every received datagram ({@code IP_RECVTOS}/{@code IPV6_RECVTCLASS}) and
 * {@code epoll_wait} with an {@code eventfd} wake-up. No JNI library, no C compiler.
 *
 * <p>The metaroce-netty jar is a multi-release jar: {@link org.metaroce.netty.linux.NativeUdp} is
 * compiled for Java 17 and tells whether the socket classes, which exist only under
 * {@code META-INF/versions/22}, can be used in this JVM, and if not, why. The socket classes
 * ({@code LinuxUdpSocket}, {@code SendBatch}, {@code ReceiveBatch}, {@code Epoll}) are public but
 * can only be referenced from code compiled for Java 22 or newer.
 */
package org.metaroce.netty.linux;
