#!/usr/bin/env bash
# Rewrites every golden output from a built attn and shows what changed: <name>.txt for every
# lesson `attn list --names` prints (its default run, `attn lesson <name>`), then every line of
# cases.txt (the variants).
#   tests/golden/refresh.sh [path/to/attn]      (default: build/attn)
# Then read `git diff tests/golden` line by line before committing: a golden file is only as
# honest as the reading of its diff. A case line "file | arguments | exit=N" expects status N;
# any other status stops the refresh (the file is left as it was).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
attn=$(realpath "${1:-$root/build/attn}")
cd "$root/tests/golden"
# Each lesson's default run: a new lesson gets its file here, with no line in cases.txt.
names=$("$attn" list --names)
for name in $names; do
  status=0
  "$attn" lesson "$name" > "$name.txt.new" || status=$?
  if [ "$status" != 0 ]; then
    rm -f "$name.txt.new"
    echo "refresh: attn lesson $name exited with $status; $name.txt left as it was" >&2
    exit 1
  fi
  mv "$name.txt.new" "$name.txt"
done
grep -v '^#' cases.txt | grep '|' | while IFS='|' read -r file args expect; do
  file=$(echo "$file" | xargs)
  expect=$(echo "${expect:-exit=0}" | xargs)
  want=${expect#exit=}
  eval "set -- $args"
  status=0
  "$attn" "$@" > "$file.new" || status=$?
  if [ "$status" != "$want" ]; then
    rm -f "$file.new"
    echo "refresh: attn $* exited with $status, cases.txt expects $want; $file left as it was" >&2
    exit 1
  fi
  mv "$file.new" "$file"
done
git -C "$root" --no-pager diff --stat -- tests/golden || true
git -C "$root" status --short --untracked-files=all -- tests/golden | grep '^??' || true  # a new lesson's file
echo "refresh: now read 'git diff tests/golden' before committing"
