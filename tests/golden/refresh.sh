#!/usr/bin/env bash
# Rewrites every golden output from a built attn and shows what changed.
#   tests/golden/refresh.sh [path/to/attn]      (default: build/attn)
# Then read `git diff tests/golden` line by line before committing: a golden file is only as
# honest as the reading of its diff.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
attn=$(realpath "${1:-$root/build/attn}")
cd "$root/tests/golden"
grep -v '^#' cases.txt | while IFS='|' read -r file args; do
  file=$(echo "$file" | xargs)
  eval "set -- $args"
  "$attn" "$@" > "$file.new"
  mv "$file.new" "$file"
done
git -C "$root" --no-pager diff --stat -- tests/golden || true
echo "refresh: now read 'git diff tests/golden' before committing"
