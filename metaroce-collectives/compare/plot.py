#!/usr/bin/env python3
# SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
# SPDX-License-Identifier: Apache-2.0
"""Plots compare.sh's output: median time per all-reduce against size, one line per contender, log-log.

Usage: compare/plot.py COMPARE_OUTPUT.txt OUT.svg
Reads every round of the table compare.sh prints and plots, per size, the median over the rounds
of each contender's median iteration (metaroce in one process, 4 JVMs, Open MPI TCP and shared
memory). Plain SVG, no dependencies, so the figure can be regenerated on any machine.
"""
import math
import re
import statistics
import sys

if len(sys.argv) != 3:
    raise SystemExit(__doc__)
rows = {}  # size -> contender index -> [medians]
header = ""
for line in open(sys.argv[1]):
    if line.startswith("# ") and "cores" in line and not header:
        header = line[2:].strip()
    m = re.match(r"\s+(\d+) \|" + r"\s+([\d.]+|-)\s+([\d.]+|-) \|" * 4, line)
    if m:
        size = int(m.group(1))
        medians = [m.group(3), m.group(5), m.group(7), m.group(9)]
        for i, v in enumerate(medians):
            if v != "-":
                rows.setdefault(size, {}).setdefault(i, []).append(float(v))
if not rows:
    raise SystemExit("no compare.sh table rows in " + sys.argv[1])
names = ["metaroce, one process", "metaroce, 4 JVMs (mpirun)", "Open MPI TCP", "Open MPI shared memory"]
colours = ["#d62728", "#ff7f0e", "#1f77b4", "#7f7f7f"]
sizes = sorted(rows)
values = [v for s in sizes for l in rows[s].values() for v in l]
W, H, L, R, T, B = 760, 480, 70, 20, 30, 80
x0, x1 = math.log10(sizes[0]), math.log10(sizes[-1])
y0, y1 = math.floor(math.log10(min(values))), math.ceil(math.log10(max(values)))


def px(size):
    return L + (math.log10(size) - x0) / max(x1 - x0, 1e-9) * (W - L - R)


def py(us):
    return H - B - (math.log10(us) - y0) / (y1 - y0) * (H - T - B)


out = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="11">' % (W, H),
       '<rect width="%d" height="%d" fill="white"/>' % (W, H),
       '<text x="%.1f" y="18" text-anchor="middle" font-size="13">All-reduce, 4 ranks, float32 sum: median time per '
       'operation (µs), median of %d rounds</text>' % (W / 2, max(len(l) for s in sizes for l in rows[s].values()))]
for e in range(y0, y1 + 1):
    y = py(10 ** e)
    out.append('<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#ddd"/><text x="%d" y="%.1f" text-anchor="end">1e%d</text>'
               % (L, y, W - R, y, L - 5, y + 4, e))
for s in sizes:
    label = "%dM" % (s >> 20) if s >= 1 << 20 else "%dK" % (s >> 10) if s >= 1 << 10 else str(s)
    out.append('<text x="%.1f" y="%d" text-anchor="middle">%s</text>' % (px(s), H - B + 15, label))
out.append('<text x="%.1f" y="%d" text-anchor="middle">bytes per rank</text>' % ((L + W - R) / 2, H - B + 32))
for i, name in enumerate(names):
    pts = [(px(s), py(statistics.median(rows[s][i]))) for s in sizes if i in rows[s]]
    if not pts:
        continue
    out.append('<polyline fill="none" stroke="%s" stroke-width="2" points="%s"/>'
               % (colours[i], " ".join("%.1f,%.1f" % p for p in pts)))
    for x, y in pts:
        out.append('<circle cx="%.1f" cy="%.1f" r="2.5" fill="%s"/>' % (x, y, colours[i]))
    ly = H - B + 50 + (i // 2) * 15
    lx = L + (i % 2) * 330
    out.append('<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" stroke-width="2"/><text x="%d" y="%d">%s</text>'
               % (lx, ly - 4, lx + 20, ly - 4, colours[i], lx + 25, ly, name))
if header:
    out.append('<text x="%d" y="%d" fill="#555">%s</text>' % (L, H - 5, header.replace("&", "&amp;").replace("<", "&lt;")))
out.append("</svg>")
open(sys.argv[2], "w").write("\n".join(out) + "\n")
