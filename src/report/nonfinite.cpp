#include "report/nonfinite.hpp"

#include <cmath>
#include <cstddef>
#include <string>
#include <vector>

namespace attn::report {
namespace {

struct Count {
  std::size_t nan = 0, pos_inf = 0, neg_inf = 0;
  std::size_t first = 0;  // the flat index of the first NaN or +inf
};

Count count_nonfinite(const TensorValues& v) {
  Count c;
  for (std::size_t i = 0; i < v.size(); ++i) {
    const float x = v[i];
    if (std::isfinite(x)) continue;
    if (std::isnan(x) || x > 0) {
      if (c.nan + c.pos_inf == 0) c.first = i;
      (std::isnan(x) ? c.nan : c.pos_inf) += 1;
    } else {
      c.neg_inf += 1;
    }
  }
  return c;
}

// "[2, 5]": a flat index as the tensor's coordinates.
std::string coordinates(const Shape& shape, std::size_t flat) {
  std::vector<std::size_t> at(shape.size());
  for (std::size_t d = shape.size(); d-- > 0;) {
    at[d] = shape[d] ? flat % shape[d] : 0;
    flat = shape[d] ? flat / shape[d] : 0;
  }
  std::string s = "[";
  for (std::size_t d = 0; d < at.size(); ++d) s += (d ? ", " : "") + std::to_string(at[d]);
  return s + "]";
}

// Every row (last axis) of `t` that holds a NaN is NaN throughout, and the same row of an earlier
// tensor of the same shape is -inf throughout: softmax's 0/0 over a fully masked row.
bool masked_rows_only(const TensorItem& t, const std::vector<const TensorItem*>& earlier) {
  const std::size_t cols = t.shape.empty() ? 0 : t.shape.back();
  if (cols == 0) return false;
  const std::size_t rows = t.values.size() / cols;
  bool any = false;
  for (std::size_t r = 0; r < rows; ++r) {
    std::size_t nans = 0;
    for (std::size_t j = 0; j < cols; ++j) nans += std::isnan(t.values[r * cols + j]) ? 1 : 0;
    if (nans == 0) continue;
    if (nans != cols) return false;
    bool masked = false;
    for (const TensorItem* e : earlier) {
      if (e->shape != t.shape || e->values.size() != t.values.size()) continue;
      bool all = true;
      for (std::size_t j = 0; j < cols && all; ++j) all = std::isinf(e->values[r * cols + j]) && e->values[r * cols + j] < 0;
      if (all) {
        masked = true;
        break;
      }
    }
    if (!masked) return false;
    any = true;
  }
  return any;
}

}  // namespace

void explain_nonfinite(Report& report, bool input_nonfinite) {
  std::vector<const TensorItem*> earlier;  // every tensor before the first NaN or +inf
  std::string cause, note;
  Stage* origin = nullptr;
  for (Stage& s : report.stages_to_annotate()) {
    for (const Item& item : s.items) {
      const auto* t = std::get_if<TensorItem>(&item);
      if (!t || t->values.empty()) continue;
      const Count c = count_nonfinite(t->values);
      if (c.nan + c.pos_inf == 0) {
        earlier.push_back(t);
        continue;
      }
      const std::string where = "`" + t->name + "` " + coordinates(t->shape, c.first) + " (stage " +
                                std::to_string(s.index) + ")";
      if (input_nonfinite) {
        cause = "from the input's nan or inf (kept by --allow-nonfinite)";
      } else if (c.pos_inf > 0) {
        cause = "an overflow to inf, first in " + where;
        note = "Overflow: `" + t->name + "` holds inf (first at " + coordinates(t->shape, c.first) +
               ") though every value before it is finite: a result past float32's largest value, 3.4e38, "
               "becomes inf. Softmax then computes inf - inf = nan, so every value after it is nan or inf, "
               "and the checks fail for that reason, not because a row was masked.";
      } else if (!t->nan_cause.empty() || masked_rows_only(*t, earlier)) {
        // A lesson that masks a whole row on purpose says so (Stage::nan_from_masked_rows) and
        // explains it; without that, an earlier -inf row of the same shape shows it.
        cause = kMaskedRowNan;
      } else {
        cause = "made from finite values, first in " + where;
        note = "`" + t->name + "` holds nan (first at " + coordinates(t->shape, c.first) +
               ") though every value before it is finite: an operation such as 0/0, 0 x inf or inf - inf made it, "
               "and every value computed from it is nan.";
      }
      origin = &s;
      break;
    }
    if (origin) break;
  }
  if (!origin) return;
  if (!note.empty()) origin->note(note);
  for (Stage& s : report.stages_to_annotate())
    for (Item& item : s.items)
      if (auto* t = std::get_if<TensorItem>(&item))
        // A lesson's own "masked row" cause stands only when that is the run's origin too.
        if ((cause != kMaskedRowNan || t->nan_cause.empty()) && count_nonfinite(t->values).nan > 0)
          t->nan_cause = cause;
}

}  // namespace attn::report
