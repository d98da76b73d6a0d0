// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

/**
 * The connection manager (specification section 9): an rdma_cm-like in-band handshake on QPN 0
 * that connects a client's queue pair to a service a server listens on, with a stateless
 * HMAC cookie so that spoofed connection requests cost the server nothing.
 *
 * <p>{@link org.metaroce.core.connection.ConnectionManager} plugs into an
 * {@link org.metaroce.core.engine.Endpoint} as its connection-manager handler. Applications call
 * {@code listen}, {@code connect}, {@code accept}, {@code reject} and {@code disconnect}, and learn
 * what happened from {@link org.metaroce.core.connection.CmEvent}s (rdma_cm event names), either
 * by polling or through a {@link org.metaroce.core.connection.CmEventHandler}. Sans-I/O and
 * single-threaded like the endpoint: time comes in as {@code nowNs}, randomness from the
 * endpoint's random source, and every call comes from the endpoint's owning thread.
 */
package org.metaroce.core.connection;
