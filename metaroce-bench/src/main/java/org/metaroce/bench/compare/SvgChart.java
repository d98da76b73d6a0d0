// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.bench.compare;

import java.util.List;
import java.util.Locale;

/**
 * A horizontal bar chart in plain SVG (no dependency): one panel per measure, one bar per figure
 * at its median with a whisker from minimum to maximum. MetaRoCE's bars are drawn in a darker
 * colour so that the eye finds the reference of every ratio.
 */
final class SvgChart {
    /** One bar. */
    record Bar(String label, Stats stats, boolean metaroce) {
    }

    /** One panel: a title, a unit and its bars (scaled to the panel's largest maximum). */
    record Panel(String title, String unit, List<Bar> bars) {
    }

    private static final int WIDTH = 860;
    private static final int LABEL_WIDTH = 300;
    private static final int BAR_AREA = WIDTH - LABEL_WIDTH - 150;
    private static final int ROW = 22;
    private static final int PANEL_HEADER = 34;
    private static final int PANEL_GAP = 18;

    private SvgChart() {
    }

    static String render(final String title, final List<Panel> panels) {
        int height = 40;
        for (final Panel p : panels) {
            height += PANEL_HEADER + p.bars().size() * ROW + PANEL_GAP;
        }
        final StringBuilder svg = new StringBuilder(8192);
        svg.append("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"").append(WIDTH).append("\" height=\"")
            .append(height).append("\" viewBox=\"0 0 ").append(WIDTH).append(' ').append(height)
            .append("\" font-family=\"sans-serif\" font-size=\"12\">\n");
        svg.append("<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n");
        svg.append("<text x=\"10\" y=\"22\" font-size=\"15\" font-weight=\"bold\">").append(escape(title))
            .append("</text>\n");
        int y = 40;
        for (final Panel p : panels) {
            svg.append("<text x=\"10\" y=\"").append(y + 18).append("\" font-size=\"13\" font-weight=\"bold\">")
                .append(escape(p.title() + " (" + p.unit() + "; bar = median, whisker = min–max)"))
                .append("</text>\n");
            y += PANEL_HEADER;
            // Scaled to the figures, not to a straggler: a maximum beyond 2.5 × the largest median
            // (a run the machine's load stalled) is clipped at the edge and marked with an arrow.
            double largestMedian = 0;
            for (final Bar b : p.bars()) {
                largestMedian = Math.max(largestMedian, b.stats().median());
            }
            double scale = 0;
            for (final Bar b : p.bars()) {
                scale = Math.max(scale, Math.min(b.stats().max(), 2.5 * largestMedian));
            }
            scale = scale <= 0 ? 1 : scale;
            for (final Bar b : p.bars()) {
                final double w = BAR_AREA * b.stats().median() / scale;
                final double x0 = LABEL_WIDTH + BAR_AREA * b.stats().min() / scale;
                final boolean clipped = b.stats().max() > scale;
                final double x1 = LABEL_WIDTH + BAR_AREA * Math.min(b.stats().max(), scale) / scale;
                final int mid = y + ROW / 2;
                svg.append("<text x=\"").append(LABEL_WIDTH - 8).append("\" y=\"").append(mid + 4)
                    .append("\" text-anchor=\"end\">").append(escape(b.label())).append("</text>\n");
                svg.append("<rect x=\"").append(LABEL_WIDTH).append("\" y=\"").append(y + 3).append("\" width=\"")
                    .append(fmt(w)).append("\" height=\"").append(ROW - 6).append("\" fill=\"")
                    .append(b.metaroce() ? "#1f5fa8" : "#9bb7d4").append("\"/>\n");
                svg.append("<line x1=\"").append(fmt(x0)).append("\" x2=\"").append(fmt(x1)).append("\" y1=\"")
                    .append(mid).append("\" y2=\"").append(mid).append("\" stroke=\"#333\" stroke-width=\"1.2\"/>\n");
                for (final double x : new double[] {x0, x1}) {
                    svg.append("<line x1=\"").append(fmt(x)).append("\" x2=\"").append(fmt(x)).append("\" y1=\"")
                        .append(mid - 4).append("\" y2=\"").append(mid + 4)
                        .append("\" stroke=\"#333\" stroke-width=\"1.2\"/>\n");
                }
                if (clipped) {
                    svg.append("<path d=\"M").append(fmt(x1)).append(' ').append(mid - 5).append(" L")
                        .append(fmt(x1 + 7)).append(' ').append(mid).append(" L").append(fmt(x1)).append(' ')
                        .append(mid + 5).append(" Z\" fill=\"#333\"/>\n");
                }
                svg.append("<text x=\"").append(fmt(Math.max(x1 + (clipped ? 8 : 0), LABEL_WIDTH + w) + 6))
                    .append("\" y=\"").append(mid + 4).append("\">")
                    .append(escape(Report.number(b.stats().median()) + (clipped ? " (max " + Report.number(
                        b.stats().max()) + ")" : ""))).append("</text>\n");
                y += ROW;
            }
            y += PANEL_GAP;
        }
        svg.append("</svg>\n");
        return svg.toString();
    }

    private static String fmt(final double v) {
        return String.format(Locale.ROOT, "%.1f", v);
    }

    private static String escape(final String s) {
        return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;");
    }
}
