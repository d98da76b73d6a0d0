#!/bin/sh
# MetaRoCE against Aeron, raw UDP and TCP on this machine; writes docs/benchmarks.md and
# docs/benchmarks/compare.svg. Usage: metaroce-bench/compare.sh [--quick] [--help]
# A script (not a `metaroce` subcommand) so that Aeron stays out of the tools' jar.
set -e
cd "$(dirname "$0")/.."
JAR=metaroce-bench/target/metaroce-benchmarks.jar
if [ ! -f "$JAR" ]; then
  ./mvnw -B -q install -DskipTests
fi
exec java --add-exports=java.base/jdk.internal.misc=ALL-UNNAMED -Xmx256m \
  -cp "$JAR" org.metaroce.bench.compare.Compare "$@"
