// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.conformance.suite;

/**
 * The result of one case.
 *
 * @param testCase the case
 * @param verdict its verdict
 * @param expected what the requirement allows (failures), else null
 * @param actual what the IUT did (failures), else null
 * @param message skip reason or error text, else null
 * @param durationMs wall-clock duration
 */
public record CaseResult(ConformanceCase testCase, Verdict verdict, String expected, String actual, String message,
                         long durationMs) {
}
