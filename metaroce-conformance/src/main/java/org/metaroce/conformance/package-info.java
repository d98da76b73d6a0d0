/**
 * The MetaRoCE compliance suite (specification section 12): a lower tester that speaks the wire
 * protocol to an implementation under test (IUT) over UDP, the agent contract through which the
 * suite drives the IUT's verbs, cases keyed by requirement ID, reports, and a seeded fault proxy.
 */
package org.metaroce.conformance;
