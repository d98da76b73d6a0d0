// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

/**
 * The queue-pair engine: the {@link org.metaroce.core.engine.Endpoint} that owns queue pairs,
 * demultiplexes datagrams by destination QPN and emits packets into a caller's sink, and the
 * requester and responder state machines of each {@link org.metaroce.core.engine.QueuePair}.
 * Sans-I/O: time comes in as {@code nowNs}, randomness from an injected source.
 */
package org.metaroce.core.engine;
