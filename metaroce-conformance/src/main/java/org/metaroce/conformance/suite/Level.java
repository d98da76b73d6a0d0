// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.conformance.suite;

/** Strength of the requirements a case checks [CONF-003]. */
public enum Level {
    /** MUST, MUST NOT, REQUIRED, SHALL: checked by default; a failure fails conformance. */
    MUST,
    /** SHOULD, SHOULD NOT, RECOMMENDED: checked with --strict only. */
    SHOULD
}
