# SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
# SPDX-License-Identifier: Apache-2.0
#
# Sourced (POSIX sh) by the comparison scripts, which need a JDK >= 22 for the native transport
# (java.lang.foreign) while the machine's default `java` may be older.
# metaroce_pick_java sets JAVA to $JAVA_HOME/bin/java when JAVA_HOME is set, else to the newest
# JDK >= 22 under /usr/lib/jvm (exporting JAVA_HOME to it, so that a build the script starts uses
# it too), else to `java` on the PATH.
metaroce_pick_java() {
  JAVA=java
  if [ -n "${JAVA_HOME:-}" ]; then
    JAVA="$JAVA_HOME/bin/java"
    return
  fi
  metaroce_best=21
  for metaroce_home in /usr/lib/jvm/*/; do
    [ -x "${metaroce_home}bin/java" ] && [ -f "${metaroce_home}release" ] || continue
    metaroce_major=$(sed -n 's/^JAVA_VERSION="\([0-9]*\).*/\1/p' "${metaroce_home}release")
    if [ -n "$metaroce_major" ] && [ "$metaroce_major" -gt "$metaroce_best" ]; then
      metaroce_best=$metaroce_major
      JAVA="${metaroce_home}bin/java"
      JAVA_HOME="${metaroce_home%/}"
      export JAVA_HOME
    fi
  done
}
