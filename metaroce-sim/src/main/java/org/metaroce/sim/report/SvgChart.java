// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.sim.report;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * A small dependency-free SVG line chart: several series, linear or log-10 axes, ticks, a legend.
 * Output depends only on the data (fixed number formatting), so charts are byte-identical across
 * runs with the same seed.
 */
public final class SvgChart {
    private static final String[] COLORS = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b"};
    private static final int WIDTH = 720;
    private static final int HEIGHT = 420;
    private static final int LEFT = 80;
    private static final int RIGHT = 20;
    private static final int TOP = 40;
    private static final int BOTTOM = 60;

    private final String title;
    private final String xLabel;
    private final String yLabel;
    private boolean logX;
    private boolean logY;
    private final List<String> names = new ArrayList<>();
    private final List<double[]> xs = new ArrayList<>();
    private final List<double[]> ys = new ArrayList<>();

    /**
     * @param title chart title
     * @param xLabel x-axis label
     * @param yLabel y-axis label
     */
    public SvgChart(final String title, final String xLabel, final String yLabel) {
        this.title = title;
        this.xLabel = xLabel;
        this.yLabel = yLabel;
    }

    /** @return this, with a log-10 x axis */
    public SvgChart logX() {
        this.logX = true;
        return this;
    }

    /** @return this, with a log-10 y axis */
    public SvgChart logY() {
        this.logY = true;
        return this;
    }

    /**
     * @param name legend entry
     * @param x x values
     * @param y y values, same length
     * @return this
     */
    public SvgChart series(final String name, final double[] x, final double[] y) {
        if (x.length != y.length) {
            throw new IllegalArgumentException("series " + name + ": " + x.length + " x values but " + y.length + " y values");
        }
        names.add(name);
        xs.add(x.clone());
        ys.add(y.clone());
        return this;
    }

    private double tx(final double v) {
        return logX ? Math.log10(Math.max(v, 1e-12)) : v;
    }

    private double ty(final double v) {
        return logY ? Math.log10(Math.max(v, 1e-12)) : v;
    }

    /** @return the SVG document */
    public String render() {
        double minX = Double.POSITIVE_INFINITY;
        double maxX = Double.NEGATIVE_INFINITY;
        double minY = Double.POSITIVE_INFINITY;
        double maxY = Double.NEGATIVE_INFINITY;
        for (int s = 0; s < xs.size(); s++) {
            for (int i = 0; i < xs.get(s).length; i++) {
                final double x = tx(xs.get(s)[i]);
                final double y = ty(ys.get(s)[i]);
                if (Double.isFinite(x) && Double.isFinite(y)) {
                    minX = Math.min(minX, x);
                    maxX = Math.max(maxX, x);
                    minY = Math.min(minY, y);
                    maxY = Math.max(maxY, y);
                }
            }
        }
        if (minX > maxX) {
            minX = 0;
            maxX = 1;
            minY = 0;
            maxY = 1;
        }
        if (!logY) {
            minY = Math.min(0, minY);
        }
        if (maxX == minX) {
            maxX = minX + 1;
        }
        if (maxY == minY) {
            maxY = minY + 1;
        }
        final double plotW = WIDTH - LEFT - RIGHT;
        final double plotH = HEIGHT - TOP - BOTTOM;
        final StringBuilder sb = new StringBuilder();
        sb.append("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"").append(WIDTH).append("\" height=\"").append(HEIGHT)
            .append("\" viewBox=\"0 0 ").append(WIDTH).append(' ').append(HEIGHT)
            .append("\" font-family=\"sans-serif\" font-size=\"12\">\n");
        sb.append("<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n");
        sb.append("<text x=\"").append(WIDTH / 2).append("\" y=\"22\" text-anchor=\"middle\" font-size=\"15\">")
            .append(escape(title)).append("</text>\n");
        sb.append("<rect x=\"").append(LEFT).append("\" y=\"").append(TOP).append("\" width=\"").append(fmt(plotW))
            .append("\" height=\"").append(fmt(plotH)).append("\" fill=\"none\" stroke=\"#444\"/>\n");
        for (int i = 0; i <= 5; i++) {
            final double fx = minX + (maxX - minX) * i / 5;
            final double px = LEFT + plotW * i / 5;
            sb.append("<line x1=\"").append(fmt(px)).append("\" y1=\"").append(TOP).append("\" x2=\"").append(fmt(px))
                .append("\" y2=\"").append(fmt(TOP + plotH)).append("\" stroke=\"#ddd\"/>\n");
            sb.append("<text x=\"").append(fmt(px)).append("\" y=\"").append(fmt(TOP + plotH + 18))
                .append("\" text-anchor=\"middle\">").append(label(logX ? Math.pow(10, fx) : fx)).append("</text>\n");
            final double fy = minY + (maxY - minY) * i / 5;
            final double py = TOP + plotH - plotH * i / 5;
            sb.append("<line x1=\"").append(LEFT).append("\" y1=\"").append(fmt(py)).append("\" x2=\"")
                .append(fmt(LEFT + plotW)).append("\" y2=\"").append(fmt(py)).append("\" stroke=\"#ddd\"/>\n");
            sb.append("<text x=\"").append(LEFT - 6).append("\" y=\"").append(fmt(py + 4))
                .append("\" text-anchor=\"end\">").append(label(logY ? Math.pow(10, fy) : fy)).append("</text>\n");
        }
        sb.append("<text x=\"").append(fmt(LEFT + plotW / 2)).append("\" y=\"").append(HEIGHT - 15)
            .append("\" text-anchor=\"middle\">").append(escape(xLabel)).append("</text>\n");
        sb.append("<text x=\"18\" y=\"").append(fmt(TOP + plotH / 2)).append("\" text-anchor=\"middle\" transform=\"rotate(-90 18 ")
            .append(fmt(TOP + plotH / 2)).append(")\">").append(escape(yLabel)).append("</text>\n");
        for (int s = 0; s < xs.size(); s++) {
            final String color = COLORS[s % COLORS.length];
            sb.append("<polyline fill=\"none\" stroke=\"").append(color).append("\" stroke-width=\"1.6\" points=\"");
            final double[] x = xs.get(s);
            final double[] y = ys.get(s);
            for (int i = 0; i < x.length; i++) {
                final double vx = tx(x[i]);
                final double vy = ty(y[i]);
                if (!Double.isFinite(vx) || !Double.isFinite(vy)) {
                    continue;
                }
                final double px = LEFT + (vx - minX) / (maxX - minX) * plotW;
                final double py = TOP + plotH - (vy - minY) / (maxY - minY) * plotH;
                sb.append(fmt(px)).append(',').append(fmt(py)).append(' ');
            }
            sb.append("\"/>\n");
            final int ly = TOP + 16 + 18 * s;
            sb.append("<line x1=\"").append(LEFT + 12).append("\" y1=\"").append(ly - 4).append("\" x2=\"")
                .append(LEFT + 36).append("\" y2=\"").append(ly - 4).append("\" stroke=\"").append(color)
                .append("\" stroke-width=\"3\"/>\n");
            sb.append("<text x=\"").append(LEFT + 42).append("\" y=\"").append(ly).append("\">")
                .append(escape(names.get(s))).append("</text>\n");
        }
        sb.append("</svg>\n");
        return sb.toString();
    }

    private static String fmt(final double v) {
        return String.format(Locale.ROOT, "%.1f", v);
    }

    private static String label(final double v) {
        final double a = Math.abs(v);
        if (a != 0 && (a >= 1e6 || a < 1e-2)) {
            return String.format(Locale.ROOT, "%.2g", v);
        }
        if (a >= 100 || v == Math.rint(v)) {
            return String.format(Locale.ROOT, "%.0f", v);
        }
        return String.format(Locale.ROOT, "%.2f", v);
    }

    private static String escape(final String s) {
        return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;");
    }
}
