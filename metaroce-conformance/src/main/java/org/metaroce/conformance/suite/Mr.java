// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.conformance.suite;

/**
 * A memory region registered on the IUT through the agent.
 *
 * @param handle the agent's handle
 * @param addr its virtual address (the RETH address of byte 0)
 * @param rkey its rkey
 * @param lkey its lkey
 * @param length its length in bytes
 */
public record Mr(int handle, long addr, int rkey, int lkey, int length) {
}
