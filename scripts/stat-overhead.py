#!/usr/bin/env python3
# SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
# SPDX-License-Identifier: Apache-2.0
"""What attaching `metaroce stat` costs a running write_bw, as an A/B in one run.

One `write_bw --loopback` runs for DURATION seconds; one `metaroce stat PID` starts after its first
progress line and stays attached for WARM seconds (its own JIT warm-up), then is stopped and
continued (SIGSTOP/SIGCONT) in WINDOW-second windows until write_bw ends. Bandwidth per second
comes from write_bw's progress lines; seconds that straddle a switch are left out.

Usage: scripts/stat-overhead.py [--jar metaroce-cli/target/metaroce.jar] [--duration 100]
                                [--warm 15] [--window 6]      (JAVA selects the java binary)
Used for docs/observability.md, "Measured cost".
"""
import argparse
import os
import re
import signal
import statistics
import subprocess
import threading
import time

parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("--jar", default="metaroce-cli/target/metaroce.jar")
parser.add_argument("--duration", type=int, default=100)
parser.add_argument("--warm", type=float, default=15)
parser.add_argument("--window", type=float, default=6)
args = parser.parse_args()
java = os.environ.get("JAVA", "java")
size = 65536

writer = subprocess.Popen([java, "--enable-native-access=ALL-UNNAMED", "-jar", args.jar, "write_bw", "--loopback",
                           "-D", str(args.duration), "-s", str(size)],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
progress = []  # (arrival time, cumulative messages)


def read_progress():
    for line in writer.stderr:
        m = re.match(r"write_bw: [0-9.]+ s, (\d+) messages", line)
        if m:
            progress.append((time.time(), int(m.group(1))))


threading.Thread(target=read_progress, daemon=True).start()
while not progress:
    if writer.poll() is not None:
        raise SystemExit("write_bw ended before its first progress line")
    time.sleep(0.1)
stat = subprocess.Popen([java, "-jar", args.jar, "stat", str(writer.pid), "--interval", "1"],
                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
time.sleep(args.warm)
switches = []  # (time, attached)
attached = True
while writer.poll() is None:
    attached = not attached
    os.kill(stat.pid, signal.SIGCONT if attached else signal.SIGSTOP)
    switches.append((time.time(), attached))
    time.sleep(args.window)
os.kill(stat.pid, signal.SIGCONT)
stat.kill()
summary = writer.stdout.read().strip().splitlines()

seconds = {True: [], False: []}
bounds = switches + [(float("inf"), None)]
for (ta, ma), (tb, mb) in zip(progress, progress[1:]):
    for (start, state), (end, _) in zip(bounds, bounds[1:]):
        if start <= ta and tb <= end:
            seconds[state].append((mb - ma) * size * 8 / 1e9 / (tb - ta))
for state in (True, False):
    v = seconds[state]
    if len(v) < 2:
        raise SystemExit("too few whole seconds in the %s windows: raise --duration" % state)
    print("%-13s %2d s  mean %6.2f  median %6.2f  sd %5.2f Gb/s" % (
        "attached" if state else "not attached", len(v), statistics.mean(v), statistics.median(v),
        statistics.pstdev(v)))
print("attached / not attached (means): %.2f" % (statistics.mean(seconds[True]) / statistics.mean(seconds[False])))
print("write_bw: " + (summary[-2].strip() if len(summary) >= 2 else "no summary"))
