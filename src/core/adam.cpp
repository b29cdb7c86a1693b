// torch.optim.Adam's step, element by element (see adam.hpp).
#include "core/adam.hpp"

#include <cmath>
#include <stdexcept>

namespace attn {

template <class T>
AdamT<T>::AdamT(AdamSettings settings) : s_(settings) {
  if (!(s_.lr > 0) || !(s_.beta1 >= 0 && s_.beta1 < 1) || !(s_.beta2 >= 0 && s_.beta2 < 1) || !(s_.eps >= 0) ||
      !(s_.weight_decay >= 0))
    throw std::invalid_argument("Adam: lr > 0, 0 <= beta1, beta2 < 1, eps >= 0 and weight_decay >= 0 are needed");
}

template <class T>
void AdamT<T>::step(const std::vector<ParamT<T>>& params) {
  if (t_ == 0) {
    m_.clear();
    v_.clear();
    for (const ParamT<T>& p : params) {
      m_.emplace_back(p.size, T(0));
      v_.emplace_back(p.size, T(0));
    }
  }
  if (params.size() != m_.size())
    throw std::invalid_argument("Adam::step: " + std::to_string(params.size()) + " parameters, the first step had " +
                                std::to_string(m_.size()));
  for (std::size_t i = 0; i < params.size(); ++i)
    if (params[i].size != m_[i].size())
      throw std::invalid_argument("Adam::step: " + params[i].name + " has " + std::to_string(params[i].size) +
                                  " values, the first step had " + std::to_string(m_[i].size()));
  ++t_;
  // Python floats in PyTorch's loop; each reaches the element-wise kernels rounded to T once.
  const double t = static_cast<double>(t_);
  const double bias_correction1 = 1.0 - std::pow(s_.beta1, t);
  const double bias_correction2_sqrt = std::sqrt(1.0 - std::pow(s_.beta2, t));
  const T beta1 = static_cast<T>(s_.beta1), one_minus_beta1 = static_cast<T>(1.0 - s_.beta1);
  const T beta2 = static_cast<T>(s_.beta2), one_minus_beta2 = static_cast<T>(1.0 - s_.beta2);
  const T step_size = static_cast<T>(s_.lr / bias_correction1);
  const T correction2 = static_cast<T>(bias_correction2_sqrt);
  const T eps = static_cast<T>(s_.eps), decay = static_cast<T>(s_.weight_decay);
  for (std::size_t i = 0; i < params.size(); ++i) {
    T* p = params[i].value;
    const T* grad = params[i].grad;
    T* m = m_[i].data();
    T* v = v_[i].data();
    for (std::size_t j = 0; j < params[i].size; ++j) {
      const T g = decay != T(0) ? grad[j] + decay * p[j] : grad[j];
      m[j] = m[j] * beta1 + one_minus_beta1 * g;
      v[j] = v[j] * beta2 + one_minus_beta2 * g * g;
      const T denom = std::sqrt(v[j]) / correction2 + eps;
      p[j] = p[j] - step_size * (m[j] / denom);
    }
  }
}

template class AdamT<float>;
template class AdamT<double>;

}  // namespace attn
