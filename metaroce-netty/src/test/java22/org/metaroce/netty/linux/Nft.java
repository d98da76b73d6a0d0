// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.netty.linux;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** nftables rules for tests that need a real marker or filter on loopback (root only). */
final class Nft {
    private Nft() {
    }

    /** Skips the calling test, saying why, unless it runs as root with nft installed. */
    static void assumeUsable() {
        assumeTrue("root".equals(System.getProperty("user.name")), "nftables needs root: skipped");
        assumeTrue(run("nft", "--version") == 0, "nft is not installed: skipped");
    }

    /** @return a table name of this JVM, so that parallel runs do not collide */
    static String table(final String purpose) {
        return "metaroce_" + purpose + "_" + ProcessHandle.current().pid();
    }

    /**
     * Adds table {@code table} (family inet) with chain C on {@code hook}, priority 0, and one rule.
     *
     * @return whether nft accepted all three
     */
    static boolean addRule(final String table, final String hook, final String... rule) {
        if (run("nft", "add", "table", "inet", table) != 0
            || run("nft", "add", "chain", "inet", table, "C", "{ type filter hook " + hook + " priority 0; }") != 0) {
            return false;
        }
        final String[] cmd = new String[5 + rule.length];
        cmd[0] = "nft";
        cmd[1] = "add";
        cmd[2] = "rule";
        cmd[3] = "inet";
        cmd[4] = table;
        final String[] withChain = new String[cmd.length + 1];
        System.arraycopy(cmd, 0, withChain, 0, 5);
        withChain[5] = "C";
        System.arraycopy(rule, 0, withChain, 6, rule.length);
        return run(withChain) == 0;
    }

    /** Deletes the table (in a finally block). */
    static void deleteTable(final String table) {
        run("nft", "delete", "table", "inet", table);
    }

    /** @return the exit code of a command (output echoed), or -1 when it cannot run */
    static int run(final String... command) {
        try {
            final Process p = new ProcessBuilder(List.of(command)).redirectErrorStream(true).start();
            final String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
            if (!p.waitFor(10, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                return -1;
            }
            if (!out.isEmpty()) {
                System.out.println(String.join(" ", command) + ": " + out);
            }
            return p.exitValue();
        } catch (final java.io.IOException ex) {
            return -1;
        } catch (final InterruptedException ex) {
            Thread.currentThread().interrupt();
            return -1;
        }
    }
}
