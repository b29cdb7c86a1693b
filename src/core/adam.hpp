// Adam (Kingma & Ba 2015) as torch.optim.Adam takes a step in PyTorch 1.13 (single-tensor path,
// no amsgrad, no maximize):
//   t += 1
//   m = beta1 m + (1 - beta1) g                      the running mean of the gradient
//   v = beta2 v + (1 - beta2) g^2                    the running mean of its square
//   p = p - lr / (1 - beta1^t) * m / (sqrt(v) / sqrt(1 - beta2^t) + eps)
// The two bias corrections undo the pull toward the zeros m and v start from; they are computed
// in double as Python floats, and the element-wise arithmetic in the parameters' type (float32,
// or float64 for a model trained in double), as PyTorch does.
// weight_decay > 0 adds weight_decay * p to g first (PyTorch's L2 form, not AdamW).
//
// Legend: n values of one parameter tensor, any shape, contiguous.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace attn {

struct AdamSettings {
  double lr = 1e-3;
  double beta1 = 0.9;
  double beta2 = 0.999;
  double eps = 1e-8;
  double weight_decay = 0.0;
};

// One parameter tensor as the optimiser sees it: its values, its gradient (the same size), and a
// name for messages. Both buffers are contiguous and outlive the step. T is float or double.
template <class T>
struct ParamT {
  std::string name;
  T* value;
  const T* grad;
  std::size_t size;
};
using Param = ParamT<float>;

template <class T>
class AdamT {
 public:
  explicit AdamT(AdamSettings settings);

  // One update of every parameter. The moments are kept by position in `params`, so pass the same
  // parameters in the same order every step; a different count or size throws std::invalid_argument.
  void step(const std::vector<ParamT<T>>& params);

  std::size_t steps() const { return t_; }
  const AdamSettings& settings() const { return s_; }

 private:
  AdamSettings s_;
  std::size_t t_ = 0;
  std::vector<std::vector<T>> m_, v_;  // per parameter: (n,) first and second moments
};
using Adam = AdamT<float>;

}  // namespace attn
