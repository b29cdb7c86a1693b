#include "core/tensor.hpp"

namespace attn {

std::string shape_str(const Shape& shape) {
  std::string s = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(shape[i]);
  }
  if (shape.size() == 1) s += ",";  // a Python 1-tuple: (6,)
  return s + ")";
}

}  // namespace attn
