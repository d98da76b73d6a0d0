// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

/**
 * The MetaRoCE wire format (specification section 3): one flyweight per header over Agrona
 * buffers, the opcode layout table, the CRC-32C integrity check and the validator that turns
 * hostile bytes into a counted drop reason. Nothing here allocates after construction and
 * nothing throws on malformed input.
 */
package org.metaroce.core.wire;
