// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.cli;

/** A failure the command reports as one line on stderr with exit code 1 (no stack trace). */
final class BenchException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    BenchException(final String message) {
        super(message);
    }

    BenchException(final String message, final Throwable cause) {
        super(message, cause);
    }
}
