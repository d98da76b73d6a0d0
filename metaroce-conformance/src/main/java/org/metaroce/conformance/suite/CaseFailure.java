// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.conformance.suite;

/** A failed check: what the requirement allows and what the IUT did. */
public final class CaseFailure extends RuntimeException {
    private static final long serialVersionUID = 1L;
    private final String expected;
    private final String actual;

    public CaseFailure(final String expected, final String actual) {
        super("expected " + expected + ", actual " + actual);
        this.expected = expected;
        this.actual = actual;
    }

    public String expected() {
        return expected;
    }

    public String actual() {
        return actual;
    }
}
