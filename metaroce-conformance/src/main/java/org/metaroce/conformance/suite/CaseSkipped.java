// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.conformance.suite;

/** The case cannot apply to this IUT (a feature it does not declare or a command it does not offer). */
public final class CaseSkipped extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public CaseSkipped(final String reason) {
        super(reason);
    }
}
