// How fast stored weights become float32: one Llama-3.2-3B layer's bf16 weights (100,669,440
// values: q, k, v, o, gate, up, down and two norms; 201 MB), converted by io/safetensors'
// convert_to_f32, against a plain memcpy of the same stored bytes; one thread, warm memory.
// With a checkpoint folder (tests/bench/make_checkpoint.py llama-3.2-3b DIR), also layer 0 read
// from its shard with SafetensorsFile::read_f32 (pread + convert, warm page cache).
//   build (-DATTN_BENCH=ON)/tests/bench/bench_convert [DIR]
#include <algorithm>
#include <functional>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "io/checkpoint.hpp"
#include "io/safetensors.hpp"

namespace {

double seconds_of(const std::function<void()>& f, int reps) {
  f();  // warm: pages faulted in, caches primed
  double best = 1e9;
  for (int r = 0; r < reps; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  return best;
}

void report(const char* what, double bytes_in, double bytes_out, double s) {
  std::printf("%-44s %7.1f ms  read %6.2f GB/s  written %6.2f GB/s\n", what, s * 1e3, bytes_in / s / 1e9, bytes_out / s / 1e9);
}

}  // namespace

int main(int argc, char** argv) {
  const std::size_t n = 2 * 3072 * 3072 + 2 * 1024 * 3072 + 3 * 8192 * 3072 + 2 * 3072;  // one layer's values
  std::vector<unsigned char> stored(2 * n);  // (n,) bf16, as on disk
  for (std::size_t i = 0; i < n; ++i) {      // bf16 of small values, like real weights
    const std::uint16_t v = static_cast<std::uint16_t>(0x3c00 + (i * 2654435761u >> 20) % 0x300);
    std::memcpy(&stored[2 * i], &v, 2);
  }
  std::vector<unsigned char> copy(2 * n);  // (n,) bf16: the memcpy baseline's destination
  std::vector<float> out(n);               // (n,) float32
  std::printf("one Llama-3.2-3B layer: %zu values, %.1f MB bf16 -> %.1f MB float32; 1 thread; best of 5\n", n, 2e-6 * n, 4e-6 * n);
  report("memcpy of the bf16 bytes", 2.0 * n, 2.0 * n, seconds_of([&] { std::memcpy(copy.data(), stored.data(), 2 * n); }, 5));
  report("convert_to_f32 BF16 (memory to memory)", 2.0 * n, 4.0 * n,
         seconds_of([&] { attn::convert_to_f32(attn::DType::BF16, stored.data(), n, out.data()); }, 5));
  report("memcpy of the float32 bytes (output size)", 4.0 * n, 4.0 * n,
         seconds_of([&] { std::memcpy(out.data(), reinterpret_cast<const float*>(copy.data()), 2 * n); std::memcpy(out.data() + n / 2, copy.data(), 2 * n); }, 5));
  if (argc > 1) {
    const attn::Checkpoint ck = attn::open_checkpoint(argv[1]);
    std::vector<const attn::CheckpointTensor*> layer0;
    std::size_t values = 0;
    for (const auto& t : ck.tensors)
      if (t.expected.layer == 0) {
        layer0.push_back(&t);
        values += ck.info(t).count;
      }
    std::vector<float> buf(values);  // (values,): layer 0 as float32
    report("read_f32 layer 0 from its shard (pread)", 2.0 * values, 4.0 * values, seconds_of([&] {
             std::size_t at = 0;
             for (const auto* t : layer0) {
               ck.file(*t).read_f32(ck.info(*t), 0, ck.info(*t).count, buf.data() + at);
               at += ck.info(*t).count;
             }
           }, 5));
  }
  return 0;
}
