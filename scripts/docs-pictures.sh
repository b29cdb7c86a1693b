#!/usr/bin/env bash
# Regenerates the SVG pictures in docs/img from the commands in docs/img/cases.txt.
#   scripts/docs-pictures.sh [path/to/attn]      (default: build/attn)
# Old pictures are removed first, so a picture no command makes any more does not linger.
# Look at the result (in a browser) and at `git status docs/img` before committing.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
attn=$(realpath "${1:-$root/build/attn}")
cd "$root"
rm -f docs/img/*.svg
grep -v '^#' docs/img/cases.txt | while read -r line; do
  [ -n "$line" ] || continue
  eval "set -- $line"
  "$attn" "$@" --svg docs/img > /dev/null
done
ls docs/img/*.svg
