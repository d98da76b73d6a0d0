// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.collectives;

/**
 * Slurm host lists ({@code node[01-04,07],gpu-a,rack[1-2]-n[3-5]}): enough of the syntax to name
 * the first host, the one Slurm starts task 0 on by default [COLL-024].
 */
public final class NodeList {
    private NodeList() {
    }

    /**
     * @param list a Slurm node list
     * @return its first host, bracket ranges expanded to their first value (zero padding kept)
     * @throws IllegalArgumentException if the list is empty or its brackets do not balance
     */
    public static String firstHost(final String list) {
        final String s = list.trim();
        int depth = 0;
        int end = s.length();
        for (int i = 0; i < s.length(); i++) {
            final char ch = s.charAt(i);
            if (ch == '[') {
                depth++;
            } else if (ch == ']') {
                depth--;
                if (depth < 0) {
                    throw new IllegalArgumentException("unbalanced ']' in Slurm node list '" + list + "'");
                }
            } else if (ch == ',' && depth == 0) {
                end = i;
                break;
            }
        }
        if (depth != 0 && end == s.length()) {
            throw new IllegalArgumentException("unbalanced '[' in Slurm node list '" + list + "'");
        }
        final String first = s.substring(0, end);
        final StringBuilder host = new StringBuilder();
        int i = 0;
        while (i < first.length()) {
            final char ch = first.charAt(i);
            if (ch != '[') {
                host.append(ch);
                i++;
                continue;
            }
            final int close = first.indexOf(']', i);
            if (close < 0) {
                throw new IllegalArgumentException("unbalanced '[' in Slurm node list '" + list + "'");
            }
            final String range = first.substring(i + 1, close);
            String value = range.split(",", 2)[0];
            value = value.split("-", 2)[0].trim();
            if (value.isEmpty()) {
                throw new IllegalArgumentException("empty range in Slurm node list '" + list + "'");
            }
            host.append(value);
            i = close + 1;
        }
        if (host.length() == 0) {
            throw new IllegalArgumentException("empty Slurm node list '" + list + "'");
        }
        return host.toString();
    }
}
