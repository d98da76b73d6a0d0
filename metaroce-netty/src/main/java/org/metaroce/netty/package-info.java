// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

/**
 * The UDP driver of MetaRoCE-J: runs a sans-I/O core {@link org.metaroce.core.engine.Endpoint}
 * over real sockets with Netty (the epoll native transport when present, NIO otherwise).
 *
 * <p>Entry point: {@link org.metaroce.netty.MetaRoceDevice}, built from a
 * {@link org.metaroce.netty.DeviceConfig}. One device binds one receive socket on its endpoint
 * port and one send socket per entropy value, owns one endpoint, and drives it from exactly one
 * thread (see {@link org.metaroce.netty.ThreadingMode}).
 *
 * <p>Transports plug in behind {@link org.metaroce.netty.UdpTransport} and
 * {@link org.metaroce.netty.UdpSocket}; batching, GSO, send order, backpressure and the receive
 * path above them are written once, for every transport.
 */
package org.metaroce.netty;
