// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.conformance.suite;

/** The code of one case: drive the IUT, inject and expect packets, check. */
@FunctionalInterface
public interface CaseBody {
    void run(CaseContext ctx) throws Exception;
}
