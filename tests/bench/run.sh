#!/usr/bin/env bash
# Benchmark: attn's core forward pass, and one training step of lesson align, against PyTorch:
# same sizes, same machine, same run.
#   tests/bench/run.sh [reps]
# Builds bench_attention, bench_align and attn in build-bench/ (Release), then runs PyTorch if
# /usr/bin/python3 has torch (apt-get install python3-torch). Timings are not tests: compare the two columns.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
reps=${1:-5}
cmake -S "$root" -B "$root/build-bench" -DCMAKE_BUILD_TYPE=Release -DATTN_BENCH=ON >/dev/null
cmake --build "$root/build-bench" --target bench_attention bench_align attn -j2 >/dev/null
"$root/build-bench/tests/bench/bench_attention" "$reps"
"$root/build-bench/tests/bench/bench_align" 50
# The whole lesson at its defaults: wall time and peak memory (budget: 2 s, 50 MB), with the load.
echo "# attn lesson align at its defaults ($(cut -d" " -f1-3 /proc/loadavg) load):"
if [ -x /usr/bin/time ]; then  # GNU time (apt-get install time) also reports the peak memory
  /usr/bin/time -f "align-lesson  %e s wall  %M KB peak" "$root/build-bench/attn" lesson align >/dev/null
else
  time "$root/build-bench/attn" lesson align >/dev/null
fi
if /usr/bin/python3 -c "import torch" 2>/dev/null; then
  /usr/bin/python3 "$root/tests/bench/bench_torch.py" "$reps"
  /usr/bin/python3 "$root/tests/bench/bench_align_torch.py" 50
else
  echo "# PyTorch not found under /usr/bin/python3: apt-get install python3-torch to compare"
fi
