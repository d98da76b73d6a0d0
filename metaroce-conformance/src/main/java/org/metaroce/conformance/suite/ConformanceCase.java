// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.conformance.suite;

import java.util.List;

/**
 * One case of the suite: an ID, the specification section it belongs to, the requirement IDs it
 * checks [CONF-005], their level, the optional feature it needs, and its code.
 *
 * @param id stable case ID, e.g. {@code wire.integrity-check}
 * @param section section title, e.g. {@code 3 Packet formats}
 * @param level MUST or SHOULD
 * @param requirements requirement IDs checked
 * @param title one line: the behaviour checked
 * @param feature optional feature the IUT must declare, or null
 * @param body the code
 */
public record ConformanceCase(String id, String section, Level level, List<String> requirements, String title,
                              String feature, CaseBody body) {
    public ConformanceCase {
        if (requirements.isEmpty()) {
            throw new IllegalArgumentException("case " + id + " cites no requirement [CONF-005]");
        }
        requirements = List.copyOf(requirements);
    }
}
