// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

/**
 * The verbs-like API that RDMA programmers already know from libibverbs: protection domains,
 * memory regions and their keys, completion queues, queue-pair states and attributes, and
 * reusable work requests. Everything here is either setup-time (may throw, may allocate) or
 * hot-path (returns int codes, never allocates); each class says which.
 *
 * <p>Threading: the key space, protection domains and memory regions belong to the thread that
 * owns the endpoint (the engine thread). The {@link org.metaroce.core.verbs.CompletionQueue}
 * is the one class built to be shared: one producer (the engine) and one consumer (the
 * application).
 */
package org.metaroce.core.verbs;
