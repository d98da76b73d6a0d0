// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.cli.faults;

import java.io.PrintWriter;
import java.util.Collection;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * The campaign's result table, one row per tool and fault over its runs, in Markdown so it can go
 * into docs/reliability.md as printed: passes, dropped datagrams and retransmitted packets summed
 * over the runs, their ratio, the longest run, for a killed server the longest time from the kill
 * to the client's error, and the distinct errors (and a soak's heap figures and leak reports).
 */
final class CampaignTable {
    private final Collection<List<Trial.Result>> rows;

    CampaignTable(final Collection<List<Trial.Result>> rows) {
        this.rows = rows;
    }

    void print(final PrintWriter out) {
        out.println("| tool | fault | pass | dropped | retransmitted | retx/drop | max s | error after kill s | errors |");
        out.println("|---|---|---|---|---|---|---|---|---|");
        for (final List<Trial.Result> runs : rows) {
            final Trial.Result first = runs.get(0);
            long passed = 0;
            long dropped = 0;
            long retransmits = 0;
            long maxMs = 0;
            long maxErrorMs = -1;
            final Set<String> errors = new LinkedHashSet<>();
            for (final Trial.Result r : runs) {
                passed += r.passed() ? 1 : 0;
                dropped += r.dropped();
                retransmits += Math.max(0, r.retransmits());
                maxMs = Math.max(maxMs, r.millis());
                maxErrorMs = Math.max(maxErrorMs, r.errorAfterMs());
                if (!r.error().isEmpty()) {
                    // Queue pair numbers differ from run to run: the same error should count once.
                    errors.add(r.error().replaceAll("QP \\d+", "QP n"));
                }
                if (!r.soak().isEmpty()) {
                    errors.add(r.soak());
                }
            }
            out.printf(Locale.ROOT, "| %s | %s | %d/%d | %d | %d | %s | %.1f | %s | %s |%n", first.tool(),
                first.fault().label(), passed, runs.size(), dropped, retransmits,
                dropped == 0 ? "-" : String.format(Locale.ROOT, "%.2f", (double) retransmits / dropped), maxMs / 1e3,
                maxErrorMs < 0 ? "-" : String.format(Locale.ROOT, "%.1f", maxErrorMs / 1e3),
                String.join("; ", errors).replace("|", "/"));
        }
        out.flush();
    }
}
