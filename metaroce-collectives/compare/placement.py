#!/usr/bin/env python3
# SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
# SPDX-License-Identifier: Apache-2.0
"""Where the scheduler put the rank threads of one all_reduce_perf run, and what that cost.

Runs `metaroce all_reduce_perf --ranks N --driver invoker` (in-process ranks), samples every rank
thread's CPU (/proc/<pid>/task/<tid>/stat) every 10 ms during the sweep (after the JIT warm-up), and
prints the sweep's medians with, for the whole sweep, the CPU this process and everything else used,
how often the ranks were split evenly over two CPUs, and per rank the CPU time, context switches
and migrations per all-reduce. Linux only (it reads /proc/<pid>/task/*/sched and schedstat).

It explains the two speeds of small all-reduces on a 2-core host (docs/collectives.md, "What selects
a run's speed"): the speed of a run is where its four rank threads sit. `--pin even|one|three-one`
sets the rank threads' affinity as soon as they exist (ranks alternate over CPUs 0 and 1; all on
CPU 0; rank 3 alone on CPU 1), to time each placement on purpose.

Usage: placement.py [--java PATH] [--jar PATH] [--pin even|one|three-one] [--tag T] [-- TOOL ARGS]
  TOOL ARGS replace the defaults (-b 8 -e 2K -f 4 -n 200 -w 20 -c 1, the small rows of compare.sh).
"""
import argparse
import os
import re
import subprocess
import threading
import time

ap = argparse.ArgumentParser()
ap.add_argument("--java", default="java")
ap.add_argument("--jar", default=os.path.join(os.path.dirname(__file__), "../../metaroce-cli/target/metaroce.jar"))
ap.add_argument("--ranks", type=int, default=4)
ap.add_argument("--pin", choices=["even", "one", "three-one"])
ap.add_argument("--tag", default="run")
ap.add_argument("tool", nargs="*", default=["-b", "8", "-e", "2K", "-f", "4", "-n", "200", "-w", "20", "-c", "1"])
args = ap.parse_args()

cmd = [args.java, "--enable-native-access=ALL-UNNAMED", "--add-exports", "java.base/jdk.internal.misc=ALL-UNNAMED",
       "-jar", args.jar, "all_reduce_perf", "--ranks", str(args.ranks), "--driver", "invoker", "--median"] + args.tool


def opt(name, default):
    """A tool option's value from the command line (for the number of all-reduces in the sweep)."""
    for i, a in enumerate(args.tool[:-1]):
        if a == name:
            return args.tool[i + 1]
    return default


def size(s):
    m = re.fullmatch(r"(\d+)([KMG]?)", s)
    return int(m.group(1)) * {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}[m.group(2)]


def pinned_cpu(rank):
    return {"even": rank % 2, "one": 0, "three-one": 1 if rank == 3 else 0}[args.pin]


def threads(pid):
    """Scheduler figures of every thread of pid, by tid."""
    out = {}
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except FileNotFoundError:
        return None
    for t in tids:
        try:
            base = f"/proc/{pid}/task/{t}"
            comm = open(f"{base}/comm").read().strip()
            st = open(f"{base}/stat").read()
            cpu = int(st[st.rindex(")") + 2:].split()[36])
            run_ns, wait_ns, slices = map(int, open(f"{base}/schedstat").read().split()[:3])
            sched = open(f"{base}/sched").read()

            def field(k):
                m = re.search(re.escape(k) + r"\s*:\s*([0-9.]+)", sched)
                return float(m.group(1)) if m else 0.0
            out[t] = dict(comm=comm, cpu=cpu, run=run_ns, wait=wait_ns, slices=slices,
                          mig=field("se.nr_migrations"), vol=field("nr_voluntary_switches"))
        except (FileNotFoundError, ProcessLookupError, ValueError, IndexError):
            pass
    return out


def host_cpu():
    """(busy jiffies without steal, steal jiffies) of the whole host."""
    v = list(map(int, open("/proc/stat").readline().split()[1:]))
    return sum(v[:7]) - v[3] - v[4], v[7]


proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, bufsize=1)
load = open("/proc/loadavg").read().split()[0]
marks, history, pinned, done = {}, {}, set(), [False]
stamps, rows = [], []


def sample():
    while not done[0]:
        snap = threads(proc.pid) or {}
        for t, v in snap.items():
            if not v["comm"].startswith("metaroce-rank-"):
                continue
            if args.pin and t not in pinned:
                os.sched_setaffinity(int(t), {pinned_cpu(int(v["comm"].rsplit("-", 1)[1]))})
                pinned.add(t)
            if "t0" in marks and "t1" not in marks:
                history.setdefault(v["comm"], []).append(v["cpu"])
        if "t0" in marks and "t1" not in marks and snap:
            # (time, how many rank threads sat on CPU 0) for the per-size split below
            on0 = [v["cpu"] for v in snap.values() if v["comm"].startswith("metaroce-rank-")]
            stamps.append((time.time(), sum(1 for c in on0 if c == 0), len(on0)))
        time.sleep(0.01)


threading.Thread(target=sample, daemon=True).start()
medians = []
for line in proc.stdout:
    # The sweep starts after the table's header, or after the JIT warm-up when there is one.
    if line.startswith("# JIT warm-up") or "(elements)" in line:
        marks.update(t0=time.time(), a=threads(proc.pid), h0=host_cpu())
    if line.startswith("# median iteration"):
        medians.append(line.split()[4])
        rows.append(time.time())
    if line.startswith("# Out of bounds"):
        marks.update(t1=time.time(), b=threads(proc.pid), h1=host_cpu())
proc.wait()
done[0] = True
print(f"{args.tag} load={load} pin={args.pin or '-'} medians(us)={' '.join(medians)}")
# Per row: the ranks on CPU 0 in each sample between the previous row and this one (e.g. 2222 is an
# even split throughout, 4444 or 0000 all on one CPU, 3333 or 1111 three and one).
start = marks.get("t0", 0)
for m, end in zip(medians, rows):
    counts = "".join(str(k) for t, k, n in stamps if start <= t < end and n == args.ranks)
    print(f"  row {m:>6} us: ranks on CPU 0 per sample {counts[:40]}")
    start = end
if "t1" not in marks:
    print("  (no sweep window: the run failed or printed no rows)")
    raise SystemExit(1)
a, b = marks["a"], marks["b"]
window = marks["t1"] - marks["t0"]
hz = os.sysconf("SC_CLK_TCK")
ours = sum(v["run"] - a[t]["run"] for t, v in b.items() if t in a) / 1e9
busy = (marks["h1"][0] - marks["h0"][0]) / hz
steal = (marks["h1"][1] - marks["h0"][1]) / hz
ranks = [f"metaroce-rank-{r}" for r in range(args.ranks)]
hist = [history.get(k, []) for k in ranks]
n = min(len(h) for h in hist)
even = sum(1 for i in range(n) if sum(h[i] for h in hist) == args.ranks // 2) if args.ranks == 4 else 0
# All-reduces in the window per rank: each size's warm-up and timed iterations of both variants,
# two checks and three reductions of the statistics.
lo, hi, f = size(opt("-b", "8")), size(opt("-e", "32M")), int(opt("-f", "2"))
sizes = 0
while lo <= hi:
    sizes, lo = sizes + 1, lo * f
ops = sizes * (2 * (int(opt("-n", "20")) + int(opt("-w", "5"))) + 5)
print(f"  sweep {window:.2f} s: this process {ours / window:.2f} CPUs, everything else {(busy - ours) / window:.2f},"
      f" steal {steal / window:.2f}; ranks split 2+2 in {even} of {n} samples")
for k in ranks:
    t = next((t for t in b if b[t]["comm"] == k and t in a), None)
    if t is None:
        continue
    d = {f: b[t][f] - a[t][f] for f in ("run", "wait", "slices", "mig", "vol")}
    cpus = "".join(str(c) for c in history.get(k, []))
    print(f"  {k}: CPU {d['run'] / 1e3 / ops:6.1f} us/op, runnable-waiting {d['wait'] / 1e3 / ops:6.1f} us/op,"
          f" switches {d['slices'] / ops:5.1f}/op (voluntary {d['vol'] / ops:4.2f}), migrations {d['mig']:.0f},"
          f" CPU samples {cpus[:48]}")
