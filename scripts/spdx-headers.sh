#!/usr/bin/env bash
# The SPDX licence header of every Java source file: src/**/*.java of every module (main, test,
# java22, module-info.java, and Java files kept under src/test/resources).
#
#   scripts/spdx-headers.sh          add the header to each file that lacks it (idempotent)
#   scripts/spdx-headers.sh --check  list the files that lack it; exit 1 if any
#
# LicenseHeaderTest (metaroce-cli) runs the same check in the build. After merging branches that
# add Java files, run this script once and commit the result on its own.
set -euo pipefail
cd "$(dirname "$0")/.."

HEADER='// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0'
MARK='SPDX-License-Identifier: Apache-2.0'

check=false
[ "${1:-}" = "--check" ] && check=true

missing=0
while IFS= read -r -d '' f; do
  [ -f "$f" ] || continue
  if head -n 5 "$f" | grep -qF "$MARK"; then
    continue
  fi
  missing=$((missing + 1))
  if $check; then
    echo "$f"
  else
    tmp=$(mktemp)
    { printf '%s\n\n' "$HEADER"; cat "$f"; } > "$tmp"
    cat "$tmp" > "$f"
    rm -f "$tmp"
  fi
done < <(git ls-files -z --cached --others --exclude-standard -- ':(glob)*/src/**/*.java')

if $check; then
  [ "$missing" -eq 0 ] || { echo "$missing Java files lack '$MARK': run scripts/spdx-headers.sh" >&2; exit 1; }
  echo "every Java source file has the SPDX header"
else
  echo "added the SPDX header to $missing files"
fi
