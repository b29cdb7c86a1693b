// A port of torch/_tensor_str.py (1.13) for float32 tensors.
#include "report/tensor_format.hpp"

#include "report/text_width.hpp"

#include <cmath>
#include <cstdio>
#include <sstream>

namespace attn::report {
namespace {

std::string printf_str(const char* fmt, int a, double v) {
  char buf[128];
  std::snprintf(buf, sizeof buf, fmt, a, v);
  return buf;
}

// Python's '{:.Nf}' / '{:.Ne}' of a float promoted to double; nan and inf spelled like Python.
std::string py_fixed(double v, int precision) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v < 0 ? "-inf" : "inf";
  return printf_str("%.*f", precision, v);
}
std::string py_sci(double v, int precision) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v < 0 ? "-inf" : "inf";
  return printf_str("%.*e", precision, v);
}

// torch's _Formatter: decides the mode and the common width from the (summarised) values.
class Formatter {
 public:
  template <class Values>  // std::vector<float> or TensorValues
  Formatter(const Values& values, int precision, std::optional<bool> sci_mode) : precision_(precision) {
    std::vector<double> finite;
    for (float v : values)
      if (std::isfinite(v) && v != 0.0f) finite.push_back(v);
    if (finite.empty()) return;  // int mode, width 1
    double lo = std::fabs(finite[0]), hi = lo;
    for (double v : finite) {
      lo = std::fmin(lo, std::fabs(v));
      hi = std::fmax(hi, std::fabs(v));
      if (static_cast<float>(v) != std::ceil(static_cast<float>(v))) int_mode_ = false;
    }
    if (int_mode_) {
      if (hi / lo > 1000.0 || hi > 1e8) {
        sci_mode_ = true;
        for (double v : finite) width_ = std::max(width_, py_sci(v, precision_).size());
      } else {
        for (double v : finite) width_ = std::max(width_, py_fixed(v, 0).size() + 1);
      }
    } else if (hi / lo > 1000.0 || hi > 1e8 || lo < 1e-4) {
      sci_mode_ = true;
      for (double v : finite) width_ = std::max(width_, py_sci(v, precision_).size());
    } else {
      for (double v : finite) width_ = std::max(width_, py_fixed(v, precision_).size());
    }
    // set_printoptions(sci_mode=True/False) overrides the choice, not the width it measured (a
    // tensor of zeros and non-finite values returned above, and keeps its mode): PyTorch's order.
    if (sci_mode) sci_mode_ = *sci_mode;
  }

  std::size_t width() const { return width_; }

  std::string format(double v) const {
    std::string s;
    if (sci_mode_) {
      s = py_sci(v, precision_);
    } else if (int_mode_) {
      s = py_fixed(v, 0);
      if (std::isfinite(v)) s += ".";
    } else {
      s = py_fixed(v, precision_);
    }
    if (s.size() < width_) s.insert(0, width_ - s.size(), ' ');
    return s;
  }

 private:
  int precision_;
  bool int_mode_ = true;
  bool sci_mode_ = false;
  std::size_t width_ = 1;
};

// get_summarized_data: keep the first and last `edge` entries of every long axis.
void summarise(const TensorItem& t, const std::vector<std::size_t>& strides, std::size_t dim,
               std::size_t offset, std::size_t edge, std::vector<float>& out) {
  const std::size_t n = t.shape[dim];
  auto visit = [&](std::size_t i) {
    if (dim + 1 == t.shape.size()) out.push_back(t.values[offset + i]);
    else summarise(t, strides, dim + 1, offset + i * strides[dim], edge, out);
  };
  if (n > 2 * edge) {
    for (std::size_t i = 0; i < edge; ++i) visit(i);
    for (std::size_t i = n - edge; i < n; ++i) visit(i);
  } else {
    for (std::size_t i = 0; i < n; ++i) visit(i);
  }
}

struct Printer {
  const TensorItem& t;
  const PrintOptions& o;
  const Formatter& f;
  bool summarize;
  std::vector<std::size_t> strides;

  std::string vector_str(std::size_t offset, std::size_t indent) const {
    const std::size_t n = t.shape.back();
    const std::size_t element_length = f.width() + 2;
    const std::size_t per_line =
        std::max<std::size_t>(1, (o.linewidth > indent ? o.linewidth - indent : 0) / element_length);
    std::vector<std::string> data;
    if (summarize && n > 2 * o.edgeitems) {
      for (std::size_t i = 0; i < o.edgeitems; ++i) data.push_back(f.format(t.values[offset + i]));
      data.push_back(" ...");
      for (std::size_t i = n - o.edgeitems; i < n; ++i) data.push_back(f.format(t.values[offset + i]));
    } else {
      for (std::size_t i = 0; i < n; ++i) data.push_back(f.format(t.values[offset + i]));
    }
    std::string s = "[";
    for (std::size_t i = 0; i < data.size(); ++i) {
      if (i) s += (i % per_line == 0) ? ",\n" + std::string(indent + 1, ' ') : ", ";
      s += data[i];
    }
    return s + "]";
  }

  std::string str(std::size_t dim, std::size_t offset, std::size_t indent) const {
    const std::size_t rank = t.shape.size();
    if (dim + 1 == rank) return vector_str(offset, indent);
    const std::size_t n = t.shape[dim];
    std::vector<std::string> slices;
    auto sub = [&](std::size_t i) { return str(dim + 1, offset + i * strides[dim], indent + 1); };
    if (summarize && n > 2 * o.edgeitems) {
      for (std::size_t i = 0; i < o.edgeitems; ++i) slices.push_back(sub(i));
      slices.push_back("...");
      for (std::size_t i = n - o.edgeitems; i < n; ++i) slices.push_back(sub(i));
    } else {
      for (std::size_t i = 0; i < n; ++i) slices.push_back(sub(i));
    }
    const std::string sep = "," + std::string(rank - dim - 1, '\n') + std::string(indent + 1, ' ');
    std::string s = "[";
    for (std::size_t i = 0; i < slices.size(); ++i) {
      if (i) s += sep;
      s += slices[i];
    }
    return s + "]";
  }
};

// Which row label belongs to printed row `row`: labels name the T rows of every matrix, or, when
// there are B*T of them, the T rows of each batch entry (a batch of different sentences).
std::size_t row_label_index(const TensorItem& t, std::size_t row) {
  const std::size_t T = t.shape[t.shape.size() - 2];
  const std::size_t n = t.row_labels.size();
  std::size_t rows = 1;  // printed rows in all: every axis but the last
  for (std::size_t d = 0; d + 1 < t.shape.size(); ++d) rows *= t.shape[d];
  if (n == T * t.shape[0] && t.shape.size() >= 3 && n != T) {
    const std::size_t per_batch = rows / t.shape[0];
    return (row / per_batch) * T + row % T;
  }
  return row % n;
}

// Column labels above the values and "# row" comments after them (see the header).
std::string add_labels(const std::string& body, const TensorItem& t, std::size_t width) {
  const std::size_t rank = t.shape.size();
  const std::size_t prefix = 7 + rank;  // "tensor(" and one '[' per axis
  std::string out;
  bool fits = true;  // a label may use its value's width and the space before it
  for (const auto& label : t.col_labels) fits = fits && label.size() <= width + 1;
  if (!t.col_labels.empty() && fits) {
    // One short of the first value: a label as wide as width + 1 starts above the last '['.
    std::string header(prefix - 1, ' ');
    for (std::size_t j = 0; j < t.col_labels.size(); ++j) {
      const std::string& label = t.col_labels[j];
      const std::size_t end = prefix + j * (width + 2) + width;
      while (header.size() + label.size() < end) header += ' ';
      header += label;
    }
    out += header + "\n";
  }
  // A row starts on the line holding its '['; the lines a wide row wraps onto hold only numbers,
  // and the blank lines between blocks of a 3-D or 4-D tensor hold nothing. So the label goes on
  // each row's first line and every other line stays as PyTorch printed it.
  std::istringstream lines(body);
  std::string line;
  std::size_t row = 0;
  bool first = true;
  while (std::getline(lines, line)) {
    if (!first) out += "\n";
    first = false;
    out += line;
    if (line.find('[') == std::string::npos) continue;
    if (!t.row_labels.empty()) out += "  # " + t.row_labels[row_label_index(t, row)];
    ++row;
  }
  return out;
}

}  // namespace

std::string format_tensor(const TensorItem& t, const PrintOptions& o) {
  std::size_t count = 1;
  for (std::size_t d : t.shape) count *= d;
  if (t.shape.empty()) {  // a 0-d tensor
    Formatter f(t.values, o.precision, o.sci_mode);
    std::string s = f.format(t.values.at(0));
    s.erase(0, s.find_first_not_of(' '));
    return "tensor(" + s + ")";
  }
  if (count == 0) {
    if (t.shape.size() == 1) return "tensor([])";
    return "tensor([], size=" + shape_str(t.shape) + ")";
  }
  std::vector<std::size_t> strides(t.shape.size(), 1);
  for (std::size_t d = t.shape.size() - 1; d > 0; --d) strides[d - 1] = strides[d] * t.shape[d];

  const bool summarize = count > o.threshold;
  std::vector<float> basis;
  if (summarize) summarise(t, strides, 0, 0, o.edgeitems, basis);
  const Formatter f = summarize ? Formatter(basis, o.precision, o.sci_mode) : Formatter(t.values, o.precision, o.sci_mode);
  const Printer p{t, o, f, summarize, strides};
  const std::string body = "tensor(" + p.str(0, 0, 7) + ")";

  // Labels only where they name what they sit beside: never on a summarised tensor (its "..."
  // rows have no token); row labels on the first line of each row, wrapped or not; column labels
  // only when each row fits on one line, since a wrapped row's columns no longer stand under them.
  const std::size_t n = t.shape.back();
  const std::size_t indent = 7 + t.shape.size() - 1;
  const bool one_line_rows = (o.linewidth - indent) / (f.width() + 2) >= n;
  const bool rows_ok = !t.row_labels.empty() && t.shape.size() >= 2;
  const bool cols_ok = one_line_rows && !t.col_labels.empty() && t.col_labels.size() == n;
  if (summarize || (!rows_ok && !cols_ok)) return body;
  // Labels come from the learner (--tokens): a control character would reach the terminal.
  const auto cleaned = [](const Labels& labels) {
    Labels out;
    for (const auto& l : labels) out.push_back(clean_label(l));
    return out;
  };
  TensorItem labelled{t.name, t.shape, {}, rows_ok ? cleaned(t.row_labels) : Labels{}, cols_ok ? cleaned(t.col_labels) : Labels{}};
  return add_labels(body, labelled, f.width());
}

}  // namespace attn::report
