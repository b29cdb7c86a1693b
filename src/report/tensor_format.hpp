// Tensors printed exactly as PyTorch 1.13 prints them, so a learner can set attn's output
// beside a notebook's and compare digit by digit.
//
// Rules taken from torch/_tensor_str.py: one width for all elements; integer mode ("1.") when
// every finite non-zero value is whole; scientific mode when max/min > 1000, max > 1e8 or
// min < 1e-4; lines of at most 80 characters; past 1000 elements, only the first and last 3
// entries of each axis, with "...".
#pragma once

#include <optional>
#include <string>

#include "report/stage.hpp"

namespace attn::report {

struct PrintOptions {
  int precision = 4;            // torch.set_printoptions(precision=...)
  std::optional<bool> sci_mode; // torch.set_printoptions(sci_mode=...): none is PyTorch's automatic choice
  std::size_t threshold = 1000; // summarise past this many elements
  std::size_t edgeitems = 3;
  std::size_t linewidth = 80;
};

// "tensor([[0.4306, 1.4551], ...])". With labels (never on a summarised tensor): "  # label" at
// the end of each row's first line, the one holding its '[' (a row wrapped past 80 columns keeps
// its label there), and a header line naming the columns above their values when every row fits
// on one line and every label fits its column. Only those two are added: delete the header and
// each "  # ..." tail and what is left is PyTorch's print byte for byte. Python still reads the
// result from "tensor(" on: the labels are comments.
std::string format_tensor(const TensorItem& t, const PrintOptions& opts = {});

}  // namespace attn::report
