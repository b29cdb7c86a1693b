#!/usr/bin/env bash
# Model benchmark: `attn model DIR --ids ...` against the same float32 forward pass in PyTorch
# (model_torch.py), on random checkpoints with real models' exact configs (make_checkpoint.py):
# GPT-2 (F32, ~0.5 GB), Llama-3.2-1B (BF16, ~2.5 GB), Llama-3.2-3B (BF16, ~6.4 GB).
#
#   tests/bench/model_bench.sh SCRATCH [ATTN]
#
# SCRATCH: folder for the checkpoints (made when absent, kept afterwards for reuse: delete it
# when done). ATTN: the attn binary (default $ATTN, else build/attn). MODELS="gpt2 llama-3.2-1b"
# and TOKENS="9 64" narrow the runs (defaults: all three models, 9 64 256 tokens).
# Each model's files are read once before its runs (warm page cache); then each case runs once
# per side under /usr/bin/time (wall seconds, peak RSS). Both sides get 2 threads
# (OPENBLAS_NUM_THREADS=2; torch.set_num_threads(2)). When `attn model DIR --ids` fails (a build
# without it), the attn columns say n/a. Prints a markdown table. Timings are not tests.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
scratch=${1:?usage: model_bench.sh SCRATCH [ATTN]}
attn=${2:-${ATTN:-$root/build/attn}}
models=${MODELS:-gpt2 llama-3.2-1b llama-3.2-3b}
tokens=${TOKENS:-9 64 256}
threads=2
export OPENBLAS_NUM_THREADS=$threads
py=/usr/bin/python3
mkdir -p "$scratch"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

for m in $models; do
  if [ ! -e "$scratch/$m.done" ]; then
    rm -rf "${scratch:?}/$m"
    $py "$root/tests/bench/make_checkpoint.py" "$m" "$scratch/$m" >&2
    touch "$scratch/$m.done"
  fi
done

# T ids spread over the vocabulary, the same for both sides.
ids_for() {
  local vocab
  vocab=$($py -c "import json,sys; c=json.load(open(sys.argv[1])); print(c['vocab_size'])" "$1/config.json")
  awk -v t="$2" -v v="$vocab" 'BEGIN { for (i = 0; i < t; i++) printf "%s%d", (i ? "," : ""), (i * 7919 + 13) % v }'
}

mb() { awk -v k="$1" 'BEGIN { printf "%.0f", k / 1024 }'; }

load_before=$(cut -d' ' -f1-3 /proc/loadavg)
rows=()
for m in $models; do
  dir="$scratch/$m"
  cat "$dir"/*.safetensors >/dev/null  # warm the page cache
  for t in $tokens; do
    ids=$(ids_for "$dir" "$t")
    attn_s=n/a attn_mb=n/a
    if /usr/bin/time -f '%e %M' -o "$work/attn.time" "$attn" model "$dir" --ids "$ids" >/dev/null 2>"$work/attn.err"; then
      read -r attn_s attn_kb <"$work/attn.time"
      attn_mb=$(mb "$attn_kb")
    else
      echo "attn model $m --ids ($t tokens) failed: $(grep -v '^Command exited' "$work/attn.err" | head -1)" >&2
    fi
    torch_s=n/a torch_mb=n/a load_s=n/a fwd_s=n/a
    if /usr/bin/time -f '%e %M' -o "$work/torch.time" $py "$root/tests/bench/model_torch.py" "$dir" --ids "$ids" \
        --threads "$threads" --name "$m" >"$work/torch.json" 2>"$work/torch.err"; then
      read -r torch_s torch_kb <"$work/torch.time"
      torch_mb=$(mb "$torch_kb")
      load_s=$($py -c "import json,sys; print(json.load(open(sys.argv[1]))['load_s'])" "$work/torch.json")
      fwd_s=$($py -c "import json,sys; print(json.load(open(sys.argv[1]))['forward_s'])" "$work/torch.json")
      cat "$work/torch.json" >&2
    else
      echo "model_torch.py $m ($t tokens) failed: $(tail -1 "$work/torch.err")" >&2
    fi
    ratio=n/a
    if [ "$attn_s" != n/a ] && [ "$torch_s" != n/a ]; then
      ratio=$(awk -v a="$attn_s" -v b="$torch_s" 'BEGIN { printf "%.2f", (a > 0 ? b / a : 0) }')
    fi
    rows+=("| $m | $t | $attn_s | $attn_mb | $torch_s | $torch_mb | $ratio | $load_s | $fwd_s |")
  done
done
load_after=$(cut -d' ' -f1-3 /proc/loadavg)

echo "# attn model vs PyTorch: one forward pass, $(date -u '+%Y-%m-%d %H:%M UTC')"
echo
echo "- machine: $(lscpu | sed -n 's/^Model name: *//p' | head -1), $(nproc) cores, $(free -g | awk '/^Mem:/ {print $2}') GB;" \
     "load average $load_before before, $load_after after (the machine is shared)"
echo "- threads: $threads (OPENBLAS_NUM_THREADS=$threads; torch.set_num_threads($threads));" \
     "OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-(unset: detected)}"
echo "- attn: $attn; PyTorch $($py -c 'import torch; print(torch.__version__)') (tests/bench/model_torch.py:" \
     "float32, attention weights of every layer kept)"
echo "- one run per case after one read of the files (warm page cache); s = wall seconds of the whole" \
     "process, peak MB = its peak RSS (/usr/bin/time); ratio = torch s / attn s; torch load and forward" \
     "from model_torch.py's own timers"
echo
echo "| model | tokens | attn s | attn peak MB | torch s | torch peak MB | ratio torch/attn | torch load s | torch forward s |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|"
printf '%s\n' "${rows[@]}"
