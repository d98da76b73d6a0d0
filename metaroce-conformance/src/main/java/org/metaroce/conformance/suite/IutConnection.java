// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.conformance.suite;

import org.metaroce.conformance.tester.TesterQp;

/**
 * A connection between the lower tester and a queue pair of the IUT.
 *
 * @param qp the agent's handle of the IUT's queue pair
 * @param tester the tester's side
 */
public record IutConnection(int qp, TesterQp tester) {
}
