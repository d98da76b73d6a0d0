#!/usr/bin/env python3
# SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
# SPDX-License-Identifier: Apache-2.0
"""Which calls C2 did not inline on a benchmark's path, for two builds, and the difference.

Runs a JMH benchmark of each benchmarks jar once with -XX:+LogCompilation (or reads logs given with
--logs), then follows the compiled code from the benchmark's JMH stub: every call C2 did not
inline into a MetaRoCE method leads to that method's latest C2 compilation, and so on. Prints each
such call with HotSpot's reason ("hot method too big": more than FreqInlineSize bytes of bytecode;
"inlining too deep"; "already compiled into a big method", which depends on compilation order and
varies from run to run), the deepest inlining per compiled method, and what one build has that the
other has not. Run it more than once before believing an "already compiled" difference.

Usage: scripts/inlining-diff.py BASE.jar NEW.jar [--bench EnginePingPongBenchmark]
                                [--stub sendPingPong_avgt_jmhStub]     (JAVA selects the java binary)
       scripts/inlining-diff.py --logs BASE.xml NEW.xml [--stub ...]
Used for docs/architecture.md, "Keeping the hot path inlined".
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("base")
parser.add_argument("new")
parser.add_argument("--logs", action="store_true", help="the arguments are LogCompilation files, not jars")
parser.add_argument("--bench", default="EnginePingPongBenchmark")
parser.add_argument("--stub", default="sendPingPong_avgt_jmhStub", help="regex naming the JMH stub method")
args = parser.parse_args()


def run(jar):
    """Runs the benchmark briefly with LogCompilation; returns the log's path."""
    log = tempfile.NamedTemporaryFile(prefix="inlining-", suffix=".xml", delete=False).name
    java = os.environ.get("JAVA", "java")
    subprocess.run([java, "-jar", jar, args.bench, "-f", "1", "-wi", "3", "-i", "2", "-w", "2s", "-r", "2s",
                    "-jvmArgsAppend", "-XX:+UnlockDiagnosticVMOptions -XX:+LogCompilation -XX:LogFile=" + log],
                   check=True, stdout=subprocess.DEVNULL)
    return log


def c2_tasks(path):
    """The C2 compilation tasks of a log (C1 tasks carry a level other than 4)."""
    text = open(path, encoding="utf-8", errors="replace").read()
    for m in re.finditer(r"<task (?:(?!<task ).)*?</task>", text, re.S):
        chunk = m.group(0)
        head = chunk[:chunk.index(">") + 1]
        if "level='" in head and "level='4'" not in head:
            continue
        try:
            yield ET.fromstring(chunk)
        except ET.ParseError:
            continue


def inline_tree(task):
    """(depth, callee 'Class::method', size, inlined?, reason) for every call site C2 decided on."""
    methods, klasses, out = {}, {}, []
    state = {"depth": 0, "call": None}

    def walk(element):
        for c in element:
            if c.tag == "klass":
                klasses[c.get("id")] = c.get("name")
            elif c.tag == "method":
                methods[c.get("id")] = (klasses.get(c.get("holder"), "?"), c.get("name"), c.get("bytes", "?"))
            elif c.tag == "call":
                state["call"] = c.get("method")
            elif c.tag in ("inline_success", "inline_fail", "intrinsic") and state["call"]:
                holder, name, size = methods.get(state["call"], ("?", state["call"], "?"))
                out.append((state["depth"], holder.replace("/", ".") + "::" + name, size,
                            c.tag != "inline_fail", c.get("reason") or c.tag))
                state["call"] = None
            elif c.tag == "parse":
                state["depth"] += 1
                walk(c)
                state["depth"] -= 1
            elif c.tag == "phase":
                walk(c)

    walk(task)
    return out


def short(name):
    return re.sub(r"org\.metaroce\.(core\.)?(engine\.)?|org\.agrona\.", "", name)


def not_inlined(path):
    """The calls left in the compiled path from the stub, and the deepest inlining per method."""
    latest = {}
    for task in c2_tasks(path):
        holder, name = task.get("method").split(" ")[:2]
        latest[holder + "::" + name] = inline_tree(task)
    stack = [k for k in latest if re.search(args.stub, k)]
    if not stack:
        sys.exit(path + ": no C2 compilation of a method matching " + args.stub)
    seen, calls, depth = set(), set(), {}
    while stack:
        method = stack.pop()
        if method in seen:
            continue
        seen.add(method)
        tree = latest.get(method, [])
        depth[short(method)] = max([d for d, *_ in tree] or [0])
        for d, callee, size, inlined, reason in tree:
            if not inlined and "metaroce" in callee:
                calls.add("%s -> %s (%s bytes) [%s]" % (short(method), short(callee), size, reason))
                stack.append(callee)
    return calls, depth


base_log, new_log = (args.base, args.new) if args.logs else (run(args.base), run(args.new))
base, base_depth = not_inlined(base_log)
new, new_depth = not_inlined(new_log)
for title, calls, depth in (("base " + base_log, base, base_depth), ("new " + new_log, new, new_depth)):
    print("== " + title)
    for c in sorted(calls):
        print("  " + c)
    print("  deepest inlining: " + ", ".join("%s %d" % (m, d) for m, d in sorted(depth.items(), key=lambda x: -x[1])[:3]))
strip = lambda c: re.sub(r" \(\d+ bytes\)", "", c)
print("== only in base")
for c in sorted(set(map(strip, base)) - set(map(strip, new))):
    print("  " + c)
print("== only in new")
for c in sorted(set(map(strip, new)) - set(map(strip, base))):
    print("  " + c)
