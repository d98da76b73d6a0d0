package org.metaroce.conformance.cases;

import java.util.ArrayList;
import java.util.List;

import org.metaroce.conformance.suite.ConformanceCase;

/** Section 5, operations. */
final class OperationCases {
    static final String S = "5 Operations";

    private OperationCases() {
    }

    static List<ConformanceCase> cases() {
        return new ArrayList<>();
    }
}
