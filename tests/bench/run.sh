#!/usr/bin/env bash
# Benchmark: attn's core forward pass against PyTorch, same sizes, same machine, same run.
#   tests/bench/run.sh [reps]
# Builds bench_attention in build-bench/ (Release), then runs PyTorch if /usr/bin/python3 has
# torch (apt-get install python3-torch). Timings are not tests: compare the two columns.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
reps=${1:-5}
cmake -S "$root" -B "$root/build-bench" -DCMAKE_BUILD_TYPE=Release -DATTN_BENCH=ON >/dev/null
cmake --build "$root/build-bench" --target bench_attention -j2 >/dev/null
"$root/build-bench/tests/bench/bench_attention" "$reps"
if /usr/bin/python3 -c "import torch" 2>/dev/null; then
  /usr/bin/python3 "$root/tests/bench/bench_torch.py" "$reps"
else
  echo "# PyTorch not found under /usr/bin/python3: apt-get install python3-torch to compare"
fi
