// Tensors printed exactly as PyTorch 1.13 prints them, so a learner can set attn's output
// beside a notebook's and compare digit by digit.
//
// Rules taken from torch/_tensor_str.py: one width for all elements; integer mode ("1.") when
// every finite non-zero value is whole; scientific mode when max/min > 1000, max > 1e8 or
// min < 1e-4; lines of at most 80 characters; past 1000 elements, only the first and last 3
// entries of each axis, with "...".
#pragma once

#include <string>

#include "report/stage.hpp"

namespace attn::report {

struct PrintOptions {
  int precision = 4;            // torch.set_printoptions(precision=...)
  std::size_t threshold = 1000; // summarise past this many elements
  std::size_t edgeitems = 3;
  std::size_t linewidth = 80;
};

// "tensor([[0.4306, 1.4551], ...])". With labels: a header line naming the columns above their
// values (when every label fits its column) and "# label" after each row, when every row fits on
// one line. Python still reads the result: the header is a separate line, the labels comments.
std::string format_tensor(const TensorItem& t, const PrintOptions& opts = {});

}  // namespace attn::report
