package org.metaroce.conformance.cases;

import java.util.ArrayList;
import java.util.List;

import org.metaroce.conformance.suite.ConformanceCase;

/** Section 6, reliability. */
final class ReliabilityCases {
    static final String S = "6 Reliability";

    private ReliabilityCases() {
    }

    static List<ConformanceCase> cases() {
        return new ArrayList<>();
    }
}
