// A random generator that draws exactly what PyTorch 1.13 draws on CPU.
//
// torch.manual_seed(s) seeds a 32-bit Mersenne Twister (std::mt19937(s)); torch.rand maps each
// draw u to (u & 0xFFFFFF) * 2^-24, filling row-major; nn.Linear(in, out) fills weight (out, in)
// then bias, each U(-1/sqrt(in), 1/sqrt(in)). Constructing things in the same order as a PyTorch
// script therefore reproduces every value, which is what lets a learner check any printed number.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

#include "core/tensor.hpp"

namespace attn {

class TorchGenerator {
 public:
  explicit TorchGenerator(std::uint64_t seed);

  // torch.rand(shape): U[0, 1) float32.
  Vec rand(std::size_t n);                       // (n,)
  Mat rand(std::size_t rows, std::size_t cols);  // (rows, cols)
  Ten3 rand(std::size_t b, std::size_t rows, std::size_t cols);

  // tensor.uniform_(lo, hi), the kernel behind nn.Linear's default initialisation.
  void uniform_(float* data, std::size_t n, float lo, float hi);

  // torch.randn(rows, cols): N(0, 1) float32, with PyTorch's own Box-Muller layout. Also what
  // nn.Embedding(rows, cols) draws for its weight (normal_ takes the same path).
  Mat randn(std::size_t rows, std::size_t cols);

  // torch.randint(lo, hi, (n,)): one 32-bit draw per value, lo + draw % (hi - lo), filled in
  // order. Needs lo < hi and hi - lo < 2^32 (PyTorch switches to 64-bit draws beyond).
  std::vector<std::size_t> randint(std::size_t lo, std::size_t hi, std::size_t n);

 private:
  std::uint32_t next_u32() { return static_cast<std::uint32_t>(engine_()); }
  double next_uniform_double();  // 53-bit uniform from two draws, as torch's random64()
  void randn_fill(float* data, std::size_t n);

  std::mt19937 engine_;
  bool has_cached_normal_ = false;
  double cached_normal_ = 0.0;
};

}  // namespace attn
