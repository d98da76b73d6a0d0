package org.metaroce.conformance.suite;

/** The code of one case: drive the IUT, inject and expect packets, check. */
@FunctionalInterface
public interface CaseBody {
    void run(CaseContext ctx) throws Exception;
}
