// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

/**
 * MetaRoCE core: the sans-I/O protocol engine. Nothing in this module reads a clock, opens a
 * socket or starts a thread; time enters as {@code long nowNs} and randomness through an
 * injected source, so every behaviour is reproducible from a seed.
 */
package org.metaroce.core;
