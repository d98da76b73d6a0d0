#!/usr/bin/env bash
# Side by side in one run: metaroce all_reduce_perf (4 ranks in one process, and 4 JVMs launched by
# mpirun) against Open MPI's MPI_Allreduce over TCP (--mca btl tcp,self) and, for reference, shared
# memory (vader), float32 sum, same sizes, iterations and warm-up. Prints one table: time per
# all-reduce (us, the slowest rank's mean, out of place) and median, and metaroce / Open MPI TCP per
# size. Every result is checked in every run (metaroce -c 1; the MPI program checks every element).
#
# Usage: compare.sh [-b 8] [-e 32M] [-f 4] [-n 50] [-w 10] [-r 4] [--driver invoker] [--rounds 1]
#                   [--jar PATH]   (another build of the CLI, e.g. an older commit's, for before/after)
#                   [--no-launched]   (skip the ranks launched as separate JVMs)
#                   [--pin-ranks]   (pin the in-process ranks' threads round robin over the CPUs,
#                   and bind every mpirun-launched rank, the 4 JVMs' and Open MPI's, the same way:
#                   rank i to core i mod cores; without it nothing is bound)
#   Rounds alternate the contenders (metaroce in one process, metaroce launched, MPI TCP, MPI shared
#   memory) so that each sees the same load; a shared host's figures drift by 2x between minutes, so
#   read the per-round ratios. Each round prints the cross-CPU hop (cross_cpu_hop.c) before metaroce,
#   before MPI TCP and at its end: on a VM it says where the host placed the CPUs (about 35 ns or
#   about 150-230 ns on this project's machines; in the second the kernel's UDP loopback between the
#   two CPUs moves about a third as much); compare rounds whose contenders ran in the same placement.
#   With --rounds N > 1 a summary ends the output: per size, the median over rounds of the rounds'
#   ratios (min-max), over all rounds, the rounds run wholly close and those run wholly far apart.
# Environment: JAVA=/path/to/java runs metaroce on that JVM (a JDK 22+ one uses the native transport);
#   without it, $JAVA_HOME's java, else the newest JDK >= 22 under /usr/lib/jvm, else `java` on the
#   PATH (the header names the one used: in the same loaded minutes JDK 17's rows took 146-158 us
#   against JDK 25's 115-142);
#   METAROCE_ARGS="--rabenseifner 0" passes more options to every metaroce run (e.g. an algorithm's
#   threshold, to compare algorithms against the same Open MPI rounds).
# Needs: the CLI jar (./mvnw -B -q package -DskipTests -pl metaroce-cli -am), mpicc and mpirun
#   (Debian: apt-get install -y openmpi-bin libopenmpi-dev).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
b=8 e=32M f=4 n=50 w=10 ranks=4 driver=invoker rounds=1 jar="$repo/metaroce-cli/target/metaroce.jar" launched=1 pin=""
while [ $# -gt 0 ]; do
  case "$1" in
    -b) b=$2; shift 2 ;; -e) e=$2; shift 2 ;; -f) f=$2; shift 2 ;; -n) n=$2; shift 2 ;;
    -w) w=$2; shift 2 ;; -r) ranks=$2; shift 2 ;; --driver) driver=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;; --jar) jar=$2; shift 2 ;; --no-launched) launched=0; shift ;; --pin-ranks) pin="--pin-ranks"; shift ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
done
[ -f "$jar" ] || { echo "build the CLI first: ./mvnw -B -q package -DskipTests -pl metaroce-cli -am" >&2; exit 2; }
if [ -z "${JAVA:-}" ]; then
  # The native transport needs JDK 22+, and the default `java` may be older.
  . "$repo/scripts/jdk.sh"
  metaroce_pick_java
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mpicc -O2 -o "$work/mpi_allreduce_perf" "$here/mpi_allreduce_perf.c"
# Where the host placed this machine's CPUs decides a round's speed on a VM (docs/collectives.md,
# "The host's slow mode"): the probe runs around the contenders and the round's header shows it.
mpicc -O2 -pthread -o "$work/cross_cpu_hop" "$here/cross_cpu_hop.c"
hop() { "$work/cross_cpu_hop" | sed -n 's/^cross-CPU hop \([0-9na/]*\).*/\1/p'; }
# Pinned in-process ranks meet bound launched ranks: unbound, Open MPI's ranks took 60-65 us where
# bound ones took 44-46 (8 B-2 KiB, CPUs close; alike with the CPUs far apart), and the launched
# JVMs 1.2-1.4 x the pinned in-process ranks' medians from 8 KiB (docs/collectives.md, "Bound ranks").
if [ -n "$pin" ]; then
  mpi=(mpirun --allow-run-as-root -np "$ranks" --map-by core:OVERSUBSCRIBE --bind-to core:overload-allowed)
else
  mpi=(mpirun --allow-run-as-root --oversubscribe -np "$ranks" --bind-to none)
fi
# all_reduce_perf's rows: size ... root (col 5), oop time (col 6), then "# median iteration: out-of-place X us"
metaroce_rows() {
  awk '/^ +[0-9]/ {size=$1; t=$6; w=$9 + $13} /^# median iteration/ {print size, t, $5, w}' "$1"
}

echo "# $(date -u +%FT%TZ) $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
echo "# $ranks ranks, float32 sum, -b $b -e $e -f $f, $n iterations after $w warm-up; metaroce --driver $driver $pin ${METAROCE_ARGS:-}"
echo "# mpirun (Open MPI and the launched JVMs): ${mpi[*]:1}"
echo "# metaroce on $("$JAVA" -XshowSettings:properties -version 2>&1 | sed -n 's/^ *java.vm.version = //p' | head -1) ($JAVA)"
for round in $(seq 1 "$rounds"); do
  load_before=$(cut -d' ' -f1 /proc/loadavg)
  hop_metaroce=$(hop)
  "$JAVA" --add-exports java.base/jdk.internal.misc=ALL-UNNAMED --enable-native-access=ALL-UNNAMED -jar "$jar" all_reduce_perf --ranks "$ranks" \
    -b "$b" -e "$e" -f "$f" -n "$n" -w "$w" -c 1 --median --driver "$driver" $pin ${METAROCE_ARGS:-} > "$work/metaroce.txt"
  if [ "$launched" = 1 ]; then
    # The same tool as N JVMs, rank and size from Open MPI's variables, rendezvous on a free port.
    port=$(( 30000 + RANDOM % 20000 ))
    "${mpi[@]}" -x PATH -x MASTER_ADDR=127.0.0.1 -x MASTER_PORT="$port" "$JAVA" \
      --add-exports java.base/jdk.internal.misc=ALL-UNNAMED --enable-native-access=ALL-UNNAMED -jar "$jar" \
      all_reduce_perf -b "$b" -e "$e" -f "$f" -n "$n" -w "$w" -c 1 --median --driver "$driver" ${METAROCE_ARGS:-} > "$work/launched.txt"
    grep -q '^# Out of bounds values : 0 OK' "$work/launched.txt" && ! grep -q '^rank [0-9]*: [1-9]' "$work/launched.txt" \
      || { echo "metaroce launched: wrong results" >&2; cat "$work/launched.txt" >&2; exit 1; }
  fi
  hop_tcp=$(hop)
  "${mpi[@]}" --mca btl tcp,self "$work/mpi_allreduce_perf" -b "$b" -e "$e" -f "$f" -n "$n" -w "$w" > "$work/tcp.txt"
  "${mpi[@]}" --mca btl vader,self "$work/mpi_allreduce_perf" -b "$b" -e "$e" -f "$f" -n "$n" -w "$w" > "$work/sm.txt"
  load_after=$(cut -d' ' -f1 /proc/loadavg)
  hop_after=$(hop)
  grep -q '^# Out of bounds values : 0 OK' "$work/metaroce.txt" || { echo "metaroce: wrong results" >&2; cat "$work/metaroce.txt" >&2; exit 1; }
  echo "# round $round, load average $load_before -> $load_after; $(grep '^# JIT warm-up' "$work/metaroce.txt" | sed 's/^# //')"
  echo "# round $round, cross-CPU hop (ns): $hop_metaroce before metaroce, $hop_tcp before MPI TCP, $hop_after after MPI shm"
  metaroce_rows "$work/metaroce.txt" > "$work/m.rows"
  if [ "$launched" = 1 ]; then
    metaroce_rows "$work/launched.txt" > "$work/l.rows"
  else
    awk '{print $1, 0, 0, 0}' "$work/m.rows" > "$work/l.rows"
  fi
  awk '/^ +[0-9]/ {print $1, $3, $4, $7}' "$work/tcp.txt" > "$work/t.rows"
  awk '/^ +[0-9]/ {print $1, $3, $4, $7}' "$work/sm.txt" > "$work/s.rows"
  printf '%10s | %12s %10s | %12s %10s | %12s %10s | %12s %10s | %14s %14s %14s\n' "bytes" "metaroce us" "median" \
    "4 JVMs us" "median" "MPI TCP us" "median" "MPI shm us" "median" "metaroce/TCP" "median ratio" "JVMs median/TCP"
  # Columns after the joins: size, metaroce (t, median, wrong), launched (t, median, wrong), TCP (3), shm (3).
  # The placement a round ran in, from its three probes: close (all under 100 ns), far (all at or
  # above), or mixed (the contenders may not have run in the same one).
  placement=$(echo "$hop_metaroce $hop_tcp $hop_after" | awk '{c = 0; f = 0; for (i = 1; i <= NF; i++) { if ($i ~ /^[0-9]+$/) { if ($i < 100) c++; else f++ } }
    print (f == 0 && c == 3) ? "close" : (c == 0 && f == 3) ? "far" : "mixed"}')
  join "$work/m.rows" "$work/l.rows" | join - "$work/t.rows" | sort -n \
    | awk -v p="$placement" -v launched="$launched" '{print p, $1, $2 / $8, $3 / $9, (launched == 1 ? $6 / $9 : "-")}' >> "$work/ratios"
  join "$work/m.rows" "$work/l.rows" | join - "$work/t.rows" | join - "$work/s.rows" | sort -n | awk -v launched="$launched" '{
    if ($4 != 0 || $7 != 0 || $10 != 0 || $13 != 0) { print "wrong results at size " $1 > "/dev/stderr"; bad = 1 }
    if (launched == 1) {
      printf "%10d | %12.1f %10.1f | %12.1f %10.1f | %12.1f %10.1f | %12.1f %10.1f | %14.2f %14.2f %14.2f\n", $1, $2, $3, $5, $6, \
        $8, $9, $11, $12, $2 / $8, $3 / $9, $6 / $9
    } else {
      printf "%10d | %12.1f %10.1f | %12s %10s | %12.1f %10.1f | %12.1f %10.1f | %14.2f %14.2f %14s\n", $1, $2, $3, "-", "-", \
        $8, $9, $11, $12, $2 / $8, $3 / $9, "-"
    }
  } END { exit bad }'
done
if [ "$rounds" -gt 1 ]; then
  # Per size, the median over rounds of each round's ratio (a round's ratio compares contenders that
  # ran minutes apart; the median over rounds is what a shared host's drift leaves alone), for all
  # rounds and for each placement's rounds.
  echo "# summary over $rounds rounds: per size, the median of the rounds' ratios to Open MPI TCP (min-max), by the mean / by the median"
  for which in all close far; do
    awk -v w="$which" 'w == "all" || $1 == w' "$work/ratios" > "$work/sel"
    [ -s "$work/sel" ] || continue
    echo "# $which rounds ($(awk '{print $2}' "$work/sel" | sort | uniq -c | awk 'NR == 1 {print $1}'))"
    for size in $(awk '{print $2}' "$work/sel" | sort -n | uniq); do
      awk -v s="$size" '$2 == s {print $3, $4}' "$work/sel" | sort -n -k1,1 > "$work/c1"
      mean_ratio=$(awk '{v[NR] = $1} END {printf "%.2f (%.2f-%.2f)", (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2), v[1], v[NR]}' "$work/c1")
      sort -n -k2,2 "$work/c1" | awk -v s="$size" -v m="$mean_ratio" '{v[NR] = $2} END {printf "%10d | by the mean %s | by the median %.2f (%.2f-%.2f)\n", s, m, (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2), v[1], v[NR]}'
    done
  done
fi
