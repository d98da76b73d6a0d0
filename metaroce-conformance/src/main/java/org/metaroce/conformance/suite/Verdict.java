// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.conformance.suite;

/** Outcome of one case (specification 12.4.4, [CONF-015]). */
public enum Verdict {
    /** Every check held. */
    PASS,
    /** A check failed: Expected and Actual say how. */
    FAIL,
    /** Not run: the IUT does not declare a feature the case needs, or it is a SHOULD case outside strict mode. */
    SKIP,
    /** Failed, but the IUT's deviations list names one of the case's requirements [CONF-004]. */
    DEVIATION,
    /** The environment prevented a verdict (the agent failed a command, a socket error). */
    INCONCLUSIVE
}
