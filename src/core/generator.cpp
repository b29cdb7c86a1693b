// PyTorch 1.13's CPU sampling, reproduced draw for draw (see generator.hpp).
#include "core/generator.hpp"

#include <cmath>
#include <stdexcept>

namespace attn {

TorchGenerator::TorchGenerator(std::uint64_t seed)
    // torch's CPU generator keeps a 64-bit seed but seeds the twister with its low 32 bits.
    : engine_(static_cast<std::uint32_t>(seed & 0xFFFFFFFFu)) {}

void TorchGenerator::uniform_(float* data, std::size_t n, float lo, float hi) {
  // at::uniform_real_distribution<float>: 24 random bits scaled to [0, 1), then from + x * (to - from)
  // computed in double (the CPU accumulate type) and rounded once to float.
  const float span = hi - lo;
  for (std::size_t i = 0; i < n; ++i) {
    const double x = static_cast<double>(next_u32() & 0xFFFFFFu) * (1.0 / 16777216.0);
    data[i] = static_cast<float>(x * static_cast<double>(span) + static_cast<double>(lo));
  }
}

Vec TorchGenerator::rand(std::size_t n) {
  Vec out = xt::empty<float>({n});  // (n,)
  uniform_(out.data(), out.size(), 0.0f, 1.0f);
  return out;
}

Mat TorchGenerator::rand(std::size_t rows, std::size_t cols) {
  Mat out = xt::empty<float>({rows, cols});  // (rows, cols)
  uniform_(out.data(), out.size(), 0.0f, 1.0f);
  return out;
}

Ten3 TorchGenerator::rand(std::size_t b, std::size_t rows, std::size_t cols) {
  Ten3 out = xt::empty<float>({b, rows, cols});  // (b, rows, cols)
  uniform_(out.data(), out.size(), 0.0f, 1.0f);
  return out;
}

double TorchGenerator::next_uniform_double() {
  // random64() = (first draw << 32) | second draw; the double path keeps 53 bits.
  const std::uint64_t hi = next_u32();
  const std::uint64_t lo = next_u32();
  const std::uint64_t bits = (hi << 32) | lo;
  return static_cast<double>(bits & ((std::uint64_t{1} << 53) - 1)) * (1.0 / 9007199254740992.0);
}

void TorchGenerator::randn_fill(float* data, std::size_t n) {
  constexpr double two_pi = 6.283185307179586;
  if (n < 16) {
    // Small tensors: at::normal_distribution<double>, one Box-Muller pair per two values,
    // the sine half cached for the next call.
    for (std::size_t i = 0; i < n; ++i) {
      if (has_cached_normal_) {
        has_cached_normal_ = false;
        data[i] = static_cast<float>(cached_normal_);
        continue;
      }
      const double u1 = next_uniform_double();
      const double u2 = next_uniform_double();
      const double r = std::sqrt(-2.0 * std::log(1.0 - u2));
      const double theta = two_pi * u1;
      cached_normal_ = r * std::sin(theta);
      has_cached_normal_ = true;
      data[i] = static_cast<float>(r * std::cos(theta));
    }
    return;
  }
  // Large tensors (normal_fill): fill with U[0,1), then transform blocks of 16 in place:
  // value j pairs with value j + 8. A ragged tail redraws the last 16 and transforms them again.
  uniform_(data, n, 0.0f, 1.0f);
  auto fill16 = [](float* d) {
    for (int j = 0; j < 8; ++j) {
      const float u1 = 1.0f - d[j];
      const float u2 = d[j + 8];
      const float radius = std::sqrt(-2.0f * std::log(u1));
      const float theta = 2.0f * static_cast<float>(M_PI) * u2;
      d[j] = radius * std::cos(theta);
      d[j + 8] = radius * std::sin(theta);
    }
  };
  for (std::size_t i = 0; i + 16 <= n; i += 16) fill16(data + i);
  if (n % 16 != 0) {
    float* tail = data + n - 16;
    uniform_(tail, 16, 0.0f, 1.0f);
    fill16(tail);
  }
}

Mat TorchGenerator::randn(std::size_t rows, std::size_t cols) {
  Mat out = xt::empty<float>({rows, cols});  // (rows, cols)
  randn_fill(out.data(), out.size());
  return out;
}

}  // namespace attn

namespace attn {

std::vector<std::size_t> TorchGenerator::randint(std::size_t lo, std::size_t hi, std::size_t n) {
  if (!(lo < hi) || hi - lo > 0xFFFFFFFFu)
    throw std::invalid_argument("randint: needs lo < hi and a range below 2^32");
  const std::uint64_t range = hi - lo;
  std::vector<std::size_t> out(n);
  for (auto& v : out) v = lo + static_cast<std::size_t>(next_u32() % range);
  return out;
}

}  // namespace attn
