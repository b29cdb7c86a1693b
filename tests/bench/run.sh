#!/usr/bin/env bash
# Benchmark: attn's attention core and forward pass against PyTorch, the same cases on the same
# machine in one run, printed as one markdown report with ratios (attn time / PyTorch time).
#   tests/bench/run.sh [reps]            reps caps each case's repetitions (best of them counts)
#   ATTN_BENCH_THREADS=N tests/bench/run.sh   threads for both sides (default: the cores)
# then one training step of lesson align, and the align lesson at its defaults, against PyTorch.
# Builds bench_attention in build-bench/ (Release), runs each attn case in its own process (so
# that its peak RSS is its own), then PyTorch (Debian's /usr/bin/python3 with python3-torch) with
# the same thread count: torch.set_num_threads(N) and OPENBLAS_NUM_THREADS=N for the OpenBLAS
# both sides call. The kernel is whatever OPENBLAS_CORETYPE says (or OpenBLAS detects); the
# report prints what each side's OpenBLAS says it runs. Timings are not tests.
#
# Memory policy: bench_attention keeps freed memory in the heap (mallopt, as attn's main does, see
# core/heap.hpp); PyTorch 1.13's CPU allocator is plain malloc, so with glibc's defaults every
# tensor above 128 KiB is a fresh mmap that page-faults in again on every call, which on this VM
# costs more than the arithmetic. The ratios compare against PyTorch given the same policy
# (MALLOC_MMAP_THRESHOLD_ and MALLOC_TRIM_THRESHOLD_ at bench_attention's 1 GiB); the column
# "PyTorch, glibc defaults" shows what a plain `python3` run gets.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
reps=${1:-5}
threads=${ATTN_BENCH_THREADS:-$(nproc)}
export OPENBLAS_NUM_THREADS=$threads
cmake -S "$root" -B "$root/build-bench" -DCMAKE_BUILD_TYPE=Release -DATTN_BENCH=ON >/dev/null
cmake --build "$root/build-bench" --target bench_attention bench_align attn -j2 >/dev/null
bench="$root/build-bench/tests/bench/bench_attention"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

load_before=$(cut -d' ' -f1-3 /proc/loadavg)
for c in $("$bench" --list); do "$bench" "$c" "$reps" >>"$work/attn.tsv"; done
have_torch=no
if /usr/bin/python3 -c "import torch" 2>/dev/null; then
  have_torch=yes
  torch="/usr/bin/python3 $root/tests/bench/bench_torch.py $threads"
  kept="env MALLOC_MMAP_THRESHOLD_=1073741824 MALLOC_TRIM_THRESHOLD_=1073741824"  # bench_attention's policy
  cases="core-512 core-1024 core-2048 gqa-512 gqa-1024 gqa-2048 mha-1-128-512-8 mha-1-512-1024-16
    mha-1-1024-1024-16 mha-4-512-768-12 llama-512 llama-1024 llama-2048"
  $kept $torch $cases >>"$work/torch.tsv"
  for T in 4096 8192; do $kept $torch "large-$T" >>"$work/torch.tsv"; done  # own process: own peak RSS
  $torch $cases >>"$work/torch_default.tsv"
  for T in 4096 8192; do $torch "large-$T" >>"$work/torch_default.tsv"; done
fi
load_after=$(cut -d' ' -f1-3 /proc/loadavg)

echo "# attn vs PyTorch: attention benchmark, $(date -u '+%Y-%m-%d %H:%M UTC')"
echo
echo "- machine: $(lscpu | sed -n 's/^Model name: *//p' | head -1), $(nproc) cores; load average $load_before before, $load_after after"
echo "- threads: $threads for both sides (OPENBLAS_NUM_THREADS=$threads; torch.set_num_threads($threads)); attn's core runs $threads worker threads, each sgemm on one"
echo "- OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-(unset: detected)}, OPENBLAS_L2_SIZE=${OPENBLAS_L2_SIZE:-(unset)}"
echo "- attn: $("$bench" --about)"
if [ "$have_torch" = yes ]; then
  echo "- PyTorch: $($torch --about)"
else
  echo "- PyTorch: not found under /usr/bin/python3 (apt-get install python3-torch to compare)"
fi
echo "- times: best of up to $reps runs, wall clock in ms; [CPU ms of all threads]. ratio = attn wall / PyTorch wall,"
echo "  PyTorch run with attn's malloc policy (freed memory kept: MALLOC_MMAP_THRESHOLD_=MALLOC_TRIM_THRESHOLD_=1 GiB);"
echo "  \"glibc defaults\" = the same PyTorch cases in a plain run, where every large tensor is a fresh mmap"
echo

awk -F'\t' -v have_torch="$have_torch" '
  FILENAME ~ /attn.tsv$/ { wall[$1] = $2; cpu[$1] = $3; heap[$1] = $4; rss[$1] = $5; next }
  FILENAME ~ /torch_default.tsv$/ { dwall[$1] = $2; dcpu[$1] = $3; drss[$1] = $5; next }
  { twall[$1] = $2; tcpu[$1] = $3; trss[$1] = $5 }
  function t(id) { return (id in wall) ? sprintf("%.1f [%.0f]", wall[id], cpu[id]) : "-" }
  function tt(id) { return (id in twall) ? sprintf("%.1f [%.0f]", twall[id], tcpu[id]) : "-" }
  function td(id) { return (id in dwall) ? sprintf("%.1f [%.0f]", dwall[id], dcpu[id]) : "-" }
  function ratio(a, b) { return (a in wall && b in twall && twall[b] > 0) ? sprintf("%.2f", wall[a] / twall[b]) : "-" }
  function mb(bytes) { return sprintf("%.1f", bytes / 1048576) }
  END {
    print "## Causal attention core at Llama-3.2-3B head sizes (B 1, h 24, d_k 128)"
    print ""
    print "scores, mask, softmax, context: q, k, v in, context out. Wanted: ratio <= 0.5."
    print ""
    print "| T | attn | attn, 1 worker, OpenBLAS threads | attn materialised | PyTorch | PyTorch, glibc defaults | ratio |"
    print "|---|---|---|---|---|---|---|"
    split("512 1024 2048", Ts, " ")
    for (i = 1; i <= 3; i++) { T = Ts[i]
      print "| " T " | " t("core-" T) " | " t("core1w-" T) " | " t("corem-" T) " | " tt("core-" T) " | " td("core-" T) " | " ratio("core-" T, "core-" T) " |" }
    print ""
    print "## Grouped-query attention core (24 query heads, 8 key/value heads, d_k 128)"
    print ""
    print "attn reads each key/value head in place for its 3 query heads; PyTorch copies them with repeat_interleave first."
    print ""
    print "allocated = the most heap attn held during the call (context and score blocks); the copy = the repeated"
    print "keys and values repeat_interleave makes, 2 x (1, 24, T, 128) float32, which attn never allocates."
    print ""
    print "| T | attn | attn allocated MB | PyTorch | PyTorch, glibc defaults | the copy, MB | ratio |"
    print "|---|---|---|---|---|---|---|"
    for (i = 1; i <= 3; i++) { T = Ts[i]
      print "| " T " | " t("gqa-" T) " | " mb(heap["gqa-" T]) " | " tt("gqa-" T) " | " td("gqa-" T) " | " mb(2 * 24 * T * 128 * 4) " | " ratio("gqa-" T, "gqa-" T) " |" }
    print ""
    print "## Whole causal multi-head forward pass (projections included)"
    print ""
    print "x -> q, k, v projections -> attention -> out_proj. Wanted: ratio <= 0.90 at T >= 512."
    print ""
    print "| B, T, d, h | attn | PyTorch | PyTorch, glibc defaults | ratio |"
    print "|---|---|---|---|---|"
    n = split("mha-1-128-512-8 mha-1-512-1024-16 mha-1-1024-1024-16 mha-4-512-768-12", M, " ")
    for (i = 1; i <= n; i++) { split(M[i], p, "-")
      print "| " p[2] ", " p[3] ", " p[4] ", " p[5] " | " t(M[i]) " | " tt(M[i]) " | " td(M[i]) " | " ratio(M[i], M[i]) " |" }
    for (i = 1; i <= 3; i++) { T = Ts[i]
      print "| 1, " T ", 3072, 24 (8 kv heads, Llama-3.2-3B) | " t("llama-" T) " | " tt("llama-" T) " | " td("llama-" T) " | " ratio("llama-" T, "llama-" T) " |" }
    print ""
    print "## Large T: tiled (flash_attention, 64 x 64 tiles) against materialised (B 1, h 4, d_k 64, causal)"
    print ""
    print "allocated = the most heap the call held at once on top of its inputs (a counting operator new),"
    print "output included; RSS = the peak resident size of the whole process (one process per row)."
    print "Wanted: tiled allocates no T x T buffer and is no slower than materialised."
    print ""
    print "| T | path | time | allocated MB | peak RSS MB |"
    print "|---|---|---|---|---|"
    split("4096 8192", L, " ")
    for (i = 1; i <= 2; i++) { T = L[i]
      print "| " T " | tiled (flash_attention) | " t("tiled-" T) " | " mb(heap["tiled-" T]) " | " mb(rss["tiled-" T] * 1024) " |"
      print "| " T " | materialised (scaled_dot_product_attention) | " t("mat-" T) " | " mb(heap["mat-" T]) " | " mb(rss["mat-" T] * 1024) " |"
      print "| " T " | attention_context | " t("fast-" T) " | " mb(heap["fast-" T]) " | " mb(rss["fast-" T] * 1024) " |"
      if (("large-" T) in twall)
        print "| " T " | PyTorch | " tt("large-" T) " | - | " mb(trss["large-" T] * 1024) " |"
      if (("large-" T) in dwall)
        print "| " T " | PyTorch, glibc defaults | " td("large-" T) " | - | " mb(drss["large-" T] * 1024) " |"
      if (("tiled-" T) in wall && ("mat-" T) in wall)
        print "| " T " | tiled / materialised time | " sprintf("%.2f", wall["tiled-" T] / wall["mat-" T]) " | | |" }
  }' "$work/attn.tsv" "$( [ -s "$work/torch.tsv" ] && echo "$work/torch.tsv" || echo /dev/null)" \
      "$( [ -s "$work/torch_default.tsv" ] && echo "$work/torch_default.tsv" || echo /dev/null)"

# One training step of lesson align, and the whole lesson at its defaults (budget: 2 s, 50 MB).
echo
echo "## Training: one step of lesson align, and the lesson at its defaults"
echo
echo '```'
"$root/build-bench/tests/bench/bench_align" 50
if [ "$have_torch" = yes ]; then /usr/bin/python3 "$root/tests/bench/bench_align_torch.py" 50; fi
echo "# attn lesson align at its defaults ($(cut -d" " -f1-3 /proc/loadavg) load):"
if [ -x /usr/bin/time ]; then  # GNU time (apt-get install time) also reports the peak memory
  /usr/bin/time -o "$work/align.time" -f "align-lesson  %e s wall  %M KB peak" "$root/build-bench/attn" lesson align >/dev/null
  cat "$work/align.time"
else
  time "$root/build-bench/attn" lesson align >/dev/null
fi
echo '```'
