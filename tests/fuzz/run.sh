#!/usr/bin/env bash
# Fuzz one target for a while: tests/fuzz/run.sh TARGET SECONDS [BUILD_DIR]
#   TARGET: npy, text_matrix, weights_dir, tokenizer_json, tokenize, safetensors or model_config
#   (or "all": each for SECONDS)
#   BUILD_DIR: a clang build with -DATTN_FUZZ=ON (default build-fuzz, configured and built here);
#   .ci/run passes build-asan, its sanitizer tree configured with -DATTN_FUZZ=ON as well.
# tests/fuzz/run.sh build [BUILD_DIR] configures and builds every target in one go and runs none.
# The checked-in seeds (tests/fuzz/TARGET/corpus) are read, never written: new inputs go to
# BUILD_DIR/fuzz-corpus/TARGET. A crash is written to BUILD_DIR/fuzz-crashes/TARGET/ and the run
# fails; copy the reproducer into tests/fuzz/TARGET/crashes/ with the fix, so that the ordinary
# test suite (fuzz-replay/TARGET) replays it from then on.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
target="${1:-}"
seconds="${2:-}"
build="${3:-$root/build-fuzz}"
targets=(npy text_matrix weights_dir tokenizer_json tokenize safetensors model_config)

need_clang() {
  if ! command -v clang++ >/dev/null 2>&1; then
    echo "run.sh: clang++ is not installed (apt-get install clang libclang-rt-14-dev)" >&2
    exit 2
  fi
}
configure() {
  if [ ! -f "$build/CMakeCache.txt" ]; then
    cmake -S "$root" -B "$build" -DCMAKE_CXX_COMPILER=clang++ -DATTN_FUZZ=ON -DBUILD_TESTING=OFF \
      -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
  fi
}
if [ "$target" = build ]; then
  build="${2:-$root/build-fuzz}"
  need_clang
  configure
  cmake --build "$build" -j2 --target "${targets[@]/#/fuzz_}" >/dev/null
  exit 0
fi
if [ -z "$target" ] || ! [[ "$seconds" =~ ^[0-9]+$ ]] || [ "$seconds" -lt 1 ]; then
  echo "usage: tests/fuzz/run.sh npy|text_matrix|weights_dir|tokenizer_json|tokenize|safetensors|model_config|all SECONDS [BUILD_DIR], or tests/fuzz/run.sh build [BUILD_DIR]" >&2
  exit 2
fi
if [ "$target" = all ]; then
  for t in "${targets[@]}"; do "$0" "$t" "$seconds" "$build"; done
  exit 0
fi
case " ${targets[*]} " in *" $target "*) ;; *) echo "run.sh: unknown target '$target' (expected ${targets[*]})" >&2; exit 2 ;; esac

need_clang
configure
cmake --build "$build" -j2 --target "fuzz_$target" >/dev/null

corpus="$build/fuzz-corpus/$target"
crashes="$build/fuzz-crashes/$target"
mkdir -p "$corpus" "$crashes"
# -rss_limit_mb: the readers refuse big shapes before allocating; a run that needs more is a bug.
# -max_len: the seeds are small; 64 KiB leaves room for big headers and many rows.
"$build/tests/fuzz/fuzz_$target" \
  -max_total_time="$seconds" -rss_limit_mb=2048 -max_len=65536 -timeout=10 -print_final_stats=1 \
  -dict="$here/$target.dict" -artifact_prefix="$crashes/" \
  "$corpus" "$here/$target/corpus" "$here/$target/crashes"
