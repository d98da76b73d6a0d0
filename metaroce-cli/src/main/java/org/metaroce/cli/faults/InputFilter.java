// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.cli.faults;

import java.io.IOException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Faults on the receiving side: an nftables table in one namespace whose chain on the input hook
 * drops UDP datagrams arriving on that host's veth end, at random (loss) or all of them
 * (blackhole). The input hook is used because it is the one that works on every machine this runs
 * on (tc netem does not); it sees datagrams after IP reassembly, so one drop is one whole datagram.
 * Every drop is counted in the named counter {@value #COUNTER}, which outlives rule changes.
 */
public final class InputFilter {
    static final String TABLE = "mrf_faults";
    static final String COUNTER = "dropped";
    private static final Pattern PACKETS = Pattern.compile("packets (\\d+)");

    private final String ns;
    private final String device;

    /**
     * Creates the table, chain and counter (no drops yet).
     *
     * @param ns the receiving host's namespace
     * @param device its veth end: only datagrams arriving there are dropped
     * @throws IOException when nft fails
     */
    public InputFilter(final String ns, final String device) throws IOException {
        this.ns = ns;
        this.device = device;
        // A fresh table, so the counter starts at 0 (one left by a killed campaign goes too).
        nftOutput("delete", "table", "inet", TABLE);
        nft("add", "table", "inet", TABLE);
        nft("add", "counter", "inet", TABLE, COUNTER);
        nft("add", "chain", "inet", TABLE, "in", "{ type filter hook input priority 0; policy accept; }");
    }

    /**
     * Drops each arriving datagram with probability {@code permille}/1000 (nft's numgen random).
     *
     * @param permille 0..1000
     */
    public void loss(final int permille) throws IOException {
        if (permille > 0) {
            nft("add", "rule", "inet", TABLE, "in", "iifname", device, "meta", "l4proto", "udp", "numgen", "random",
                "mod", "1000", "<", Integer.toString(permille), "counter", "name", COUNTER, "drop");
        }
    }

    /** Drops every arriving datagram until {@link #clear()}. */
    public void blackhole() throws IOException {
        nft("add", "rule", "inet", TABLE, "in", "iifname", device, "meta", "l4proto", "udp", "counter", "name",
            COUNTER, "drop");
    }

    /** Removes every drop rule (the counter keeps its value). */
    public void clear() throws IOException {
        nft("flush", "chain", "inet", TABLE, "in");
    }

    /** Deletes the table (best effort: deleting the namespace deletes it too). */
    public void remove() {
        try {
            nftOutput("delete", "table", "inet", TABLE);
        } catch (final IOException ex) {
            // Best effort.
        }
    }

    /** @return datagrams dropped so far by this filter */
    public long dropped() throws IOException {
        final TwoHosts.Output r = nftOutput("list", "counter", "inet", TABLE, COUNTER);
        final Matcher m = PACKETS.matcher(r.out());
        if (r.exit() != 0 || !m.find()) {
            throw new IOException("cannot read nft counter " + COUNTER + " in " + ns + ": " + r);
        }
        return Long.parseLong(m.group(1));
    }

    private void nft(final String... args) throws IOException {
        TwoHosts.mustNft(ns, args);
    }

    private TwoHosts.Output nftOutput(final String... args) throws IOException {
        return TwoHosts.nft(ns, args);
    }
}
