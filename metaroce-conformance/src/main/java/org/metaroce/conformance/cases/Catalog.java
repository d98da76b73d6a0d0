// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.conformance.cases;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import org.metaroce.conformance.suite.ConformanceCase;

/** Every case of the suite, grouped and ordered by specification section. */
public final class Catalog {
    private Catalog() {
    }

    /** @return all cases, ordered by section then as listed; IDs are unique */
    public static List<ConformanceCase> all() {
        final List<ConformanceCase> l = new ArrayList<>();
        l.addAll(WireCases.cases());
        l.addAll(OperationCases.cases());
        l.addAll(ReliabilityCases.cases());
        l.addAll(MemoryCases.cases());
        l.addAll(QpCases.cases());
        l.addAll(ConnectionCases.cases());
        l.addAll(RobustnessCases.cases());
        l.addAll(ProxyCases.cases());
        l.addAll(RecoveryCases.cases());
        l.addAll(CongestionCases.cases());
        l.addAll(GoBackNCases.cases());
        l.addAll(ResourceCases.cases());
        l.addAll(HandshakeCases.cases());
        l.addAll(VerbsCases.cases());
        l.addAll(WindowCases.cases());
        l.addAll(PathCases.cases());
        l.addAll(TimerCases.cases());
        l.addAll(ResponseCases.cases());
        final Set<String> ids = new HashSet<>();
        for (final ConformanceCase c : l) {
            if (!ids.add(c.id())) {
                throw new IllegalStateException("duplicate case ID " + c.id());
            }
        }
        l.sort(Comparator.comparing(ConformanceCase::section, Comparator.comparingInt(Catalog::sectionNumber)));
        return List.copyOf(l);
    }

    private static int sectionNumber(final String section) {
        final int space = section.indexOf(' ');
        return Integer.parseInt(space < 0 ? section : section.substring(0, space));
    }
}
