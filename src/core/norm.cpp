// LayerNorm and RMSNorm row by row over contiguous buffers (see norm.hpp for the equations).
//
// Legend: B batch, T tokens, d the normalised width.
#include "core/norm.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

namespace attn {
namespace {

void check(const char* what, const Shape& x, std::size_t d, const Vec& weight, const Vec* bias, float eps) {
  const std::string shapes = std::string(what) + ": x " + shape_str(x) + ", weight " + shape_of(weight) +
                             (bias ? ", bias " + shape_of(*bias) : std::string());
  if (d == 0) throw std::invalid_argument(shapes + ": the normalised width d is 0");
  if (weight.size() != d) throw std::invalid_argument(shapes + ": weight must be (d,) = (" + std::to_string(d) + ",)");
  if (bias && bias->size() != d)
    throw std::invalid_argument(shapes + ": bias must be (d,) = (" + std::to_string(d) + ",)");
  if (!std::isfinite(eps) || eps < 0.0f)
    throw std::invalid_argument(std::string(what) + ": eps must be finite and >= 0, got " + std::to_string(eps));
}

template <class X>
X layer_norm_any(const X& x, const Vec& weight, const Vec& bias, float eps) {
  const std::size_t d = x.shape()[x.dimension() - 1];
  check("layer_norm", to_shape(x.shape()), d, weight, &bias, eps);
  X y = xt::empty<float>(x.shape());  // same shape as x
  layer_norm_rows(x.data(), x.size() / d, d, weight.data(), bias.data(), eps, y.data());
  return y;
}

template <class X>
X rms_norm_any(const X& x, const Vec& weight, float eps) {
  const std::size_t d = x.shape()[x.dimension() - 1];
  check("rms_norm", to_shape(x.shape()), d, weight, nullptr, eps);
  X y = xt::empty<float>(x.shape());  // same shape as x
  rms_norm_rows(x.data(), x.size() / d, d, weight.data(), eps, y.data());
  return y;
}

}  // namespace

void layer_norm_rows(const float* x, std::size_t rows, std::size_t d, const float* weight, const float* bias,
                     float eps, float* y) {
  for (std::size_t r = 0; r < rows; ++r) {
    const float* in = x + r * d;
    float* out = y + r * d;
    double sum = 0.0;
    for (std::size_t i = 0; i < d; ++i) sum += in[i];
    const float mean = static_cast<float>(sum / static_cast<double>(d));  // first the mean,
    double sq = 0.0;
    for (std::size_t i = 0; i < d; ++i) {
      const double c = static_cast<double>(in[i] - mean);  // then the variance of x - mean
      sq += c * c;
    }
    const float var = static_cast<float>(sq / static_cast<double>(d));  // biased
    const float rstd = 1.0f / std::sqrt(var + eps);
    for (std::size_t i = 0; i < d; ++i) {
      const float normed = (in[i] - mean) * rstd;
      out[i] = bias ? normed * weight[i] + bias[i] : normed * weight[i];
    }
  }
}

void rms_norm_rows(const float* x, std::size_t rows, std::size_t d, const float* weight, float eps, float* y) {
  for (std::size_t r = 0; r < rows; ++r) {
    const float* in = x + r * d;
    float* out = y + r * d;
    double sq = 0.0;
    for (std::size_t i = 0; i < d; ++i) {
      const float s = in[i] * in[i];  // x.pow(2) in float
      sq += s;
    }
    const float variance = static_cast<float>(sq / static_cast<double>(d));  // .mean(-1)
    const float rstd = 1.0f / std::sqrt(variance + eps);                      // torch.rsqrt(variance + eps)
    for (std::size_t i = 0; i < d; ++i) out[i] = weight[i] * (in[i] * rstd);  // weight * (x * rstd)
  }
}

Ten3 layer_norm(const Ten3& x, const Vec& weight, const Vec& bias, float eps) {
  return layer_norm_any(x, weight, bias, eps);
}
Mat layer_norm(const Mat& x, const Vec& weight, const Vec& bias, float eps) {
  return layer_norm_any(x, weight, bias, eps);
}
Ten3 layer_norm(const LayerNorm& norm, const Ten3& x) { return layer_norm_any(x, norm.weight, norm.bias, norm.eps); }

Ten3 rms_norm(const Ten3& x, const Vec& weight, float eps) { return rms_norm_any(x, weight, eps); }
Mat rms_norm(const Mat& x, const Vec& weight, float eps) { return rms_norm_any(x, weight, eps); }
Ten3 rms_norm(const RmsNorm& norm, const Ten3& x) { return rms_norm_any(x, norm.weight, norm.eps); }

}  // namespace attn
