#!/usr/bin/env bash
# Benchmark: one training step of learn-heads in attn and in PyTorch, same machine, same run.
#   tests/bench/run_train.sh [reps]
# Builds bench_train in build-bench/ (Release, -DATTN_BENCH=ON), then runs PyTorch (Debian's
# python3-torch under /usr/bin/python3) with 1 and 2 threads. Timings are not tests.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
reps=${1:-100}
cmake -S "$root" -B "$root/build-bench" -DCMAKE_BUILD_TYPE=Release -DATTN_BENCH=ON >/dev/null
cmake --build "$root/build-bench" --target bench_train -j2 >/dev/null
uptime
"$root/build-bench/bench_train" "$reps"
if /usr/bin/python3 -c "import torch" 2>/dev/null; then
  /usr/bin/python3 "$root/tests/bench/bench_train.py" "$reps" 1
  /usr/bin/python3 "$root/tests/bench/bench_train.py" "$reps" 2
else
  echo "# PyTorch not found under /usr/bin/python3: apt-get install python3-torch to compare"
fi
