// The non-template half of expect.hpp, compiled once and linked into every exercise executable
// (so each test file pays only for its own cases).
#include "expect.hpp"

#include <cmath>
#include <sstream>

#include "report/tensor_format.hpp"

namespace exercise::test {

namespace {

// "[1, 2]": the position of flat index `flat` in a tensor of `shape`, as a learner indexes it.
std::string index_str(const attn::Shape& shape, std::size_t flat) {
  std::vector<std::size_t> idx(shape.size());
  for (std::size_t d = shape.size(); d-- > 0;) {
    idx[d] = shape[d] ? flat % shape[d] : 0;
    flat = shape[d] ? flat / shape[d] : 0;
  }
  std::string s = "[";
  for (std::size_t d = 0; d < idx.size(); ++d) s += (d ? ", " : "") + std::to_string(idx[d]);
  return s + "]";
}

// "expected (3, 3)\ntensor([[...]])" in PyTorch's format, so it reads like the lesson's output.
std::string block(const char* label, const attn::Shape& shape, const std::vector<float>& values) {
  attn::report::TensorItem item;
  item.name = label;
  item.shape = shape;
  item.values = values;
  return std::string(label) + " " + attn::shape_str(shape) + "\n" + attn::report::format_tensor(item);
}

// How far apart two entries are: 0 when equal, infinity when one is NaN or infinite and the
// other is not the same special value.
// A number with every digit of a float, and NaN spelled "nan" whatever its sign bit.
std::string number(double v) {
  if (std::isnan(v)) return "nan";
  std::ostringstream s;
  s.precision(9);
  s << v;
  return s.str();
}

double distance(double a, double e) {
  if (std::isnan(a) || std::isnan(e)) return (std::isnan(a) && std::isnan(e)) ? 0.0 : INFINITY;
  if (std::isinf(a) || std::isinf(e)) return a == e ? 0.0 : INFINITY;
  return std::fabs(a - e);
}

}  // namespace

std::ostream& operator<<(std::ostream& out, const Verdict& v) { return out << v.text; }

Verdict compare(const attn::Shape& actual_shape, const std::vector<float>& actual,
                const attn::Shape& expected_shape, const std::vector<float>& expected, double tol) {
  std::ostringstream why;
  why.precision(9);  // every digit of a float, so a near miss is visible
  if (actual_shape != expected_shape) {
    why << "\nshapes differ: expected " << attn::shape_str(expected_shape) << ", actual "
        << attn::shape_str(actual_shape) << "\n";
  } else {
    std::size_t worst_at = 0;
    double worst = 0.0;
    for (std::size_t i = 0; i < actual.size(); ++i) {
      const double d = distance(actual[i], expected[i]);
      if (d > worst) {
        worst = d;
        worst_at = i;
      }
    }
    if (worst <= tol) return {true, ""};
    why << "\nvalues differ: at " << index_str(actual_shape, worst_at) << " expected " << number(expected[worst_at])
        << ", actual " << number(actual[worst_at]) << " (|diff| " << worst << ", tolerance " << tol << ")\n";
  }
  why << block("expected", expected_shape, expected) << "\n" << block("actual", actual_shape, actual) << "\n";
  return {false, why.str()};
}

Verdict near(double actual, double expected, double tol) {
  if (distance(actual, expected) <= tol) return {true, ""};
  std::ostringstream why;
  why.precision(9);
  why << "expected " << number(expected) << ", actual " << number(actual) << " (tolerance " << tol << ")";
  return {false, why.str()};
}

}  // namespace exercise::test
