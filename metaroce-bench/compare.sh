#!/bin/sh
# MetaRoCE against Aeron, raw UDP, TCP and the UDP ceiling on this machine; writes docs/benchmarks.md
# and docs/benchmarks/compare.svg. Usage: metaroce-bench/compare.sh [--quick] [--help]
# A script (not a `metaroce` subcommand) so that Aeron stays out of the tools' jar.
#
# The "UDP ceiling (native)" contender needs JDK 22 or newer (java.lang.foreign): the script runs
# on $JAVA_HOME when set, else on the newest JDK >= 22 under /usr/lib/jvm, else on `java` (the
# ceiling is then left out, with one line saying why). The jar must have been built on JDK 22+
# for the ceiling's classes (META-INF/versions/22) to be in it.
set -e
cd "$(dirname "$0")/.."
. scripts/jdk.sh
metaroce_pick_java
JAR=metaroce-bench/target/metaroce-benchmarks.jar
if [ ! -f "$JAR" ]; then
  ./mvnw -B -q install -DskipTests
fi
exec "$JAVA" --add-exports=java.base/jdk.internal.misc=ALL-UNNAMED --enable-native-access=ALL-UNNAMED -Xmx256m \
  -cp "$JAR" org.metaroce.bench.compare.Compare "$@"
