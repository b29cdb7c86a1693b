// format_tensor against PyTorch 1.13's print(tensor). Learners set attn's output beside a
// notebook and compare digit by digit, so "close" is not enough: every expected string below is
// the exact repr() that /usr/bin/python3 (torch 1.13) printed for the expression in the comment
// above it, pasted unchanged. The cases cover each branch of torch/_tensor_str.py that attn can
// reach: fixed, integer and scientific modes, NaN and inf, line wrapping, blank lines between
// blocks, summarising with "...", 0-d and empty tensors, and the precision option.
//
// The last tests cover attn's own decoration (token labels around the values), which PyTorch
// does not have; their expected strings follow the rule stated in tensor_format.hpp.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "core/generator.hpp"
#include "core/mask.hpp"
#include "report/tensor_format.hpp"

using attn::report::format_tensor;
using attn::report::PrintOptions;
using attn::report::TensorItem;

namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

// Values written as Python writes them (decimal -> double -> float32, as torch.tensor does).
TensorItem item(attn::Shape shape, const std::vector<double>& values) {
  TensorItem t;
  t.name = "t";
  t.shape = std::move(shape);
  for (double v : values) t.values.push_back(static_cast<float>(v));
  return t;
}

template <class E>
TensorItem from(const E& e) {
  TensorItem t;
  t.name = "t";
  t.shape = attn::to_shape(e.shape());
  t.values.assign(e.begin(), e.end());
  return t;
}

PrintOptions precision(int p) {
  PrintOptions o;
  o.precision = p;
  return o;
}

}  // namespace

// ------------------------------------------------------------ exactly as PyTorch prints them

TEST_CASE("a (3, 2) float matrix") {
  // torch.tensor([[0.4306, 1.4551], [-0.3712, 0.0089], [2.5, -1.2345]])
  const TensorItem t = item({3, 2}, {0.4306, 1.4551, -0.3712, 0.0089, 2.5, -1.2345});
  CHECK(format_tensor(t) == R"py(tensor([[ 0.4306,  1.4551],
        [-0.3712,  0.0089],
        [ 2.5000, -1.2345]]))py");
}

TEST_CASE("a (6, 6) matrix with -inf above the diagonal") {
  // torch.manual_seed(789); torch.rand(6, 6).masked_fill(torch.triu(torch.ones(6, 6), diagonal=1).bool(), -torch.inf)
  TensorItem t = from(attn::TorchGenerator(789).rand(6, 6));
  for (std::size_t i = 0; i < 6; ++i)
    for (std::size_t j = i + 1; j < 6; ++j) t.values[i * 6 + j] = -kInf;
  CHECK(format_tensor(t) == R"py(tensor([[0.7737,   -inf,   -inf,   -inf,   -inf,   -inf],
        [0.8514, 0.0926,   -inf,   -inf,   -inf,   -inf],
        [0.7187, 0.3775, 0.3301,   -inf,   -inf,   -inf],
        [0.7662, 0.8018, 0.6371, 0.3464,   -inf,   -inf],
        [0.4615, 0.7050, 0.3849, 0.3085, 0.6775,   -inf],
        [0.9746, 0.7144, 0.4761, 0.2971, 0.5419, 0.1202]]))py");
}

TEST_CASE("integer mode: the causal mask") {
  // torch.triu(torch.ones(3, 3), diagonal=1)
  const TensorItem t = from(attn::causal_mask(3));
  CHECK(format_tensor(t) == R"py(tensor([[0., 1., 1.],
        [0., 0., 1.],
        [0., 0., 0.]]))py");
}

TEST_CASE("all zeros") {
  // torch.zeros(2, 3)
  const TensorItem t = item({2, 3}, {0, 0, 0, 0, 0, 0});
  CHECK(format_tensor(t) == R"py(tensor([[0., 0., 0.],
        [0., 0., 0.]]))py");
}

TEST_CASE("scientific mode: a value below 1e-4") {
  // torch.tensor([1e-5, 0.5, 2.0])
  const TensorItem t = item({3}, {1e-5, 0.5, 2.0});
  CHECK(format_tensor(t) == R"py(tensor([1.0000e-05, 5.0000e-01, 2.0000e+00]))py");
}

TEST_CASE("scientific mode: max / min above 1000") {
  // torch.tensor([[12345.6, 0.001], [1.0, -3.0]])
  const TensorItem t = item({2, 2}, {12345.6, 0.001, 1.0, -3.0});
  CHECK(format_tensor(t) == R"py(tensor([[ 1.2346e+04,  1.0000e-03],
        [ 1.0000e+00, -3.0000e+00]]))py");
}

TEST_CASE("scientific mode for whole numbers") {
  // torch.tensor([3., 5000.])
  const TensorItem t = item({2}, {3.0, 5000.0});
  CHECK(format_tensor(t) == R"py(tensor([3.0000e+00, 5.0000e+03]))py");
}

TEST_CASE("scientific mode: any value below 1e-4 decides") {
  // torch.tensor([5e-5, 0.01])
  const TensorItem t = item({2}, {5e-5, 0.01});
  CHECK(format_tensor(t) == R"py(tensor([5.0000e-05, 1.0000e-02]))py");
}

TEST_CASE("fixed mode just above 1e-4") {
  // torch.tensor([0.00015, 0.1])
  const TensorItem t = item({2}, {0.00015, 0.1});
  CHECK(format_tensor(t) == R"py(tensor([0.0002, 0.1000]))py");
}

TEST_CASE("integer mode up to a ratio of 1000") {
  // torch.tensor([1., 1000.])
  const TensorItem t = item({2}, {1.0, 1000.0});
  CHECK(format_tensor(t) == R"py(tensor([   1., 1000.]))py");
}

TEST_CASE("scientific mode for whole numbers above 1e8") {
  // torch.tensor([2e8, 3e8])
  const TensorItem t = item({2}, {2e8, 3e8});
  CHECK(format_tensor(t) == R"py(tensor([2.0000e+08, 3.0000e+08]))py");
}


TEST_CASE("a NaN row") {
  // torch.tensor([[nan, nan, nan], [0.25, 0.5, 0.25]])
  const TensorItem t = item({2, 3}, {kNaN, kNaN, kNaN, 0.25, 0.5, 0.25});
  CHECK(format_tensor(t) == R"py(tensor([[   nan,    nan,    nan],
        [0.2500, 0.5000, 0.2500]]))py");
}

TEST_CASE("a NaN row in integer mode: a fully masked softmax row") {
  // torch.softmax(torch.tensor([[-inf, -inf], [0., -inf]]), dim=-1)
  const TensorItem t = item({2, 2}, {kNaN, kNaN, 1.0, 0.0});
  CHECK(format_tensor(t) == R"py(tensor([[nan, nan],
        [1., 0.]]))py");
}

TEST_CASE("a 1-D vector wrapped at 80 columns") {
  // (torch.arange(25.) - 12) / 7
  TensorItem t = item({25}, {});
  for (int i = 0; i < 25; ++i) t.values.push_back((static_cast<float>(i) - 12.0f) / 7.0f);
  CHECK(format_tensor(t) == R"py(tensor([-1.7143, -1.5714, -1.4286, -1.2857, -1.1429, -1.0000, -0.8571, -0.7143,
        -0.5714, -0.4286, -0.2857, -0.1429,  0.0000,  0.1429,  0.2857,  0.4286,
         0.5714,  0.7143,  0.8571,  1.0000,  1.1429,  1.2857,  1.4286,  1.5714,
         1.7143]))py");
}

TEST_CASE("matrix rows wrapped at 80 columns") {
  // (torch.arange(24.).reshape(2, 12) - 12) / 7
  TensorItem t = item({2, 12}, {});
  for (int i = 0; i < 24; ++i) t.values.push_back((static_cast<float>(i) - 12.0f) / 7.0f);
  CHECK(format_tensor(t) == R"py(tensor([[-1.7143, -1.5714, -1.4286, -1.2857, -1.1429, -1.0000, -0.8571, -0.7143,
         -0.5714, -0.4286, -0.2857, -0.1429],
        [ 0.0000,  0.1429,  0.2857,  0.4286,  0.5714,  0.7143,  0.8571,  1.0000,
          1.1429,  1.2857,  1.4286,  1.5714]]))py");
}

TEST_CASE("a (2, 2, 3) tensor: a blank line between blocks") {
  // torch.arange(12.).reshape(2, 2, 3) / 4
  TensorItem t = item({2, 2, 3}, {});
  for (int i = 0; i < 12; ++i) t.values.push_back(static_cast<float>(i) / 4.0f);
  CHECK(format_tensor(t) == R"py(tensor([[[0.0000, 0.2500, 0.5000],
         [0.7500, 1.0000, 1.2500]],

        [[1.5000, 1.7500, 2.0000],
         [2.2500, 2.5000, 2.7500]]]))py");
}

TEST_CASE("a (1, 2, 3, 3) tensor") {
  // torch.manual_seed(1); torch.rand(1, 2, 3, 3)
  TensorItem t = from(attn::TorchGenerator(1).rand(18));
  t.shape = {1, 2, 3, 3};
  CHECK(format_tensor(t) == R"py(tensor([[[[0.7576, 0.2793, 0.4031],
          [0.7347, 0.0293, 0.7999],
          [0.3971, 0.7544, 0.5695]],

         [[0.4388, 0.6387, 0.5247],
          [0.6826, 0.3051, 0.4635],
          [0.4550, 0.5725, 0.4980]]]]))py");
}

TEST_CASE("summarised past 1000 elements: a (40, 50) matrix") {
  // torch.arange(2000.).reshape(40, 50) / 7
  TensorItem t = item({40, 50}, {});
  for (int i = 0; i < 2000; ++i) t.values.push_back(static_cast<float>(i) / 7.0f);
  CHECK(format_tensor(t) == R"py(tensor([[0.0000e+00, 1.4286e-01, 2.8571e-01,  ..., 6.7143e+00, 6.8571e+00,
         7.0000e+00],
        [7.1429e+00, 7.2857e+00, 7.4286e+00,  ..., 1.3857e+01, 1.4000e+01,
         1.4143e+01],
        [1.4286e+01, 1.4429e+01, 1.4571e+01,  ..., 2.1000e+01, 2.1143e+01,
         2.1286e+01],
        ...,
        [2.6429e+02, 2.6443e+02, 2.6457e+02,  ..., 2.7100e+02, 2.7114e+02,
         2.7129e+02],
        [2.7143e+02, 2.7157e+02, 2.7171e+02,  ..., 2.7814e+02, 2.7829e+02,
         2.7843e+02],
        [2.7857e+02, 2.7871e+02, 2.7886e+02,  ..., 2.8529e+02, 2.8543e+02,
         2.8557e+02]]))py");
}

TEST_CASE("summarised past 1000 elements: a 1-D vector") {
  // torch.manual_seed(3); torch.rand(1500)
  const TensorItem t = from(attn::TorchGenerator(3).rand(1500));
  CHECK(format_tensor(t) == R"py(tensor([0.0043, 0.1056, 0.2858,  ..., 0.3491, 0.4624, 0.9001]))py");
}

TEST_CASE("summarised: the format is chosen from the shown values only") {
  // torch.manual_seed(3); t = torch.rand(1500); t[700] = 12345.0; t
  TensorItem t = from(attn::TorchGenerator(3).rand(1500));
  t.values[700] = 12345.0f;  // hidden in the middle: must not switch to scientific mode
  CHECK(format_tensor(t) == R"py(tensor([0.0043, 0.1056, 0.2858,  ..., 0.3491, 0.4624, 0.9001]))py");
}

TEST_CASE("summarised: a (8, 2, 70) tensor") {
  // (torch.arange(1120.) / 100 + 1).reshape(8, 2, 70)
  TensorItem t = item({8, 2, 70}, {});
  for (int i = 0; i < 1120; ++i) t.values.push_back(static_cast<float>(i) / 100.0f + 1.0f);
  CHECK(format_tensor(t) == R"py(tensor([[[ 1.0000,  1.0100,  1.0200,  ...,  1.6700,  1.6800,  1.6900],
         [ 1.7000,  1.7100,  1.7200,  ...,  2.3700,  2.3800,  2.3900]],

        [[ 2.4000,  2.4100,  2.4200,  ...,  3.0700,  3.0800,  3.0900],
         [ 3.1000,  3.1100,  3.1200,  ...,  3.7700,  3.7800,  3.7900]],

        [[ 3.8000,  3.8100,  3.8200,  ...,  4.4700,  4.4800,  4.4900],
         [ 4.5000,  4.5100,  4.5200,  ...,  5.1700,  5.1800,  5.1900]],

        ...,

        [[ 8.0000,  8.0100,  8.0200,  ...,  8.6700,  8.6800,  8.6900],
         [ 8.7000,  8.7100,  8.7200,  ...,  9.3700,  9.3800,  9.3900]],

        [[ 9.4000,  9.4100,  9.4200,  ..., 10.0700, 10.0800, 10.0900],
         [10.1000, 10.1100, 10.1200,  ..., 10.7700, 10.7800, 10.7900]],

        [[10.8000, 10.8100, 10.8200,  ..., 11.4700, 11.4800, 11.4900],
         [11.5000, 11.5100, 11.5200,  ..., 12.1700, 12.1800, 12.1900]]]))py");
}

TEST_CASE("negative values") {
  // torch.tensor([[-1.5, 2.25], [0.125, -0.0625]])
  const TensorItem t = item({2, 2}, {-1.5, 2.25, 0.125, -0.0625});
  CHECK(format_tensor(t) == R"py(tensor([[-1.5000,  2.2500],
        [ 0.1250, -0.0625]]))py");
}

TEST_CASE("infinity in integer mode") {
  // torch.tensor([inf, 1., -2.])
  const TensorItem t = item({3}, {kInf, 1.0, -2.0});
  CHECK(format_tensor(t) == R"py(tensor([inf,  1., -2.]))py");
}

TEST_CASE("wide fixed-point values") {
  // torch.tensor([123.456, 99999.0])
  const TensorItem t = item({2}, {123.456, 99999.0});
  CHECK(format_tensor(t) == R"py(tensor([  123.4560, 99999.0000]))py");
}

TEST_CASE("a 0-d tensor") {
  // torch.tensor(0.5)
  const TensorItem t = item({}, {0.5});
  CHECK(format_tensor(t) == R"py(tensor(0.5000))py");
}

TEST_CASE("a 0-d whole number") {
  // torch.tensor(3.)
  const TensorItem t = item({}, {3.0});
  CHECK(format_tensor(t) == R"py(tensor(3.))py");
}

TEST_CASE("an empty vector") {
  // torch.zeros(0)
  const TensorItem t = item({0}, {});
  CHECK(format_tensor(t) == R"py(tensor([]))py");
}

TEST_CASE("an empty matrix") {
  // torch.zeros(0, 3)
  const TensorItem t = item({0, 3}, {});
  CHECK(format_tensor(t) == R"py(tensor([], size=(0, 3)))py");
}

TEST_CASE("precision 2") {
  // torch.set_printoptions(precision=2); torch.tensor([[0.4306, 1.4551], [-0.3712, 0.0089], [2.5, -1.2345]])
  const TensorItem t = item({3, 2}, {0.4306, 1.4551, -0.3712, 0.0089, 2.5, -1.2345});
  CHECK(format_tensor(t, precision(2)) == R"py(tensor([[ 0.43,  1.46],
        [-0.37,  0.01],
        [ 2.50, -1.23]]))py");
}

TEST_CASE("precision 2 in scientific mode") {
  // torch.set_printoptions(precision=2); torch.tensor([1e-5, 0.5])
  const TensorItem t = item({2}, {1e-5, 0.5});
  CHECK(format_tensor(t, precision(2)) == R"py(tensor([1.00e-05, 5.00e-01]))py");
}

// ------------------------------------------------------------------------ attn's token labels

TEST_CASE("labels: a header line above the columns and a comment after each row") {
  // Each column label ends where its column's values end; each row gets "  # label".
  TensorItem t = item({3, 3}, {0.1, 0.2, 0.7, 0.3, 0.3, 0.4, 0.5, 0.25, 0.25});
  t.row_labels = {"Your", "journey", "starts"};
  t.col_labels = {"Your", "journey", "starts"};
  CHECK(format_tensor(t) == R"(           Your journey  starts
tensor([[0.1000, 0.2000, 0.7000],  # Your
        [0.3000, 0.3000, 0.4000],  # journey
        [0.5000, 0.2500, 0.2500]])  # starts)");
}

TEST_CASE("labels: a label may use its column's width plus the space before it") {
  // The values are 6 wide, so 7-letter labels still fit, right-aligned like the others,
  // the first one included (it sits above the '[' that opens the row).
  TensorItem t = item({2, 2}, {0.1, 0.9, 0.6, 0.4});
  t.col_labels = {"journey", "starts"};
  CHECK(format_tensor(t) == R"(        journey  starts
tensor([[0.1000, 0.9000],
        [0.6000, 0.4000]]))");
}

TEST_CASE("labels: no header when a column label is too wide, row labels still shown") {
  // A cut label would be misread; tensor_format.hpp drops the whole header instead.
  TensorItem t = item({2, 2}, {0.1, 0.9, 0.6, 0.4});
  t.row_labels = {"attention", "is"};
  t.col_labels = {"attention", "is"};
  CHECK(format_tensor(t) == R"(tensor([[0.1000, 0.9000],  # attention
        [0.6000, 0.4000]])  # is)");
}

TEST_CASE("labels: rows of a 3-D tensor are labelled in every block, blank lines are not") {
  TensorItem t = item({2, 2, 3}, {0.0, 0.25, 0.5, 0.75, 1.0, 1.25, 1.5, 1.75, 2.0, 2.25, 2.5, 2.75});
  t.row_labels = {"a", "b"};
  CHECK(format_tensor(t) == R"(tensor([[[0.0000, 0.2500, 0.5000],  # a
         [0.7500, 1.0000, 1.2500]],  # b

        [[1.5000, 1.7500, 2.0000],  # a
         [2.2500, 2.5000, 2.7500]]])  # b)");
}

TEST_CASE("labels are dropped when the tensor is summarised") {
  TensorItem plain = item({40, 50}, {});
  for (int i = 0; i < 2000; ++i) plain.values.push_back(static_cast<float>(i) / 7.0f);
  TensorItem labelled = plain;
  for (int i = 0; i < 40; ++i) labelled.row_labels.push_back("row" + std::to_string(i));
  for (int i = 0; i < 50; ++i) labelled.col_labels.push_back("c" + std::to_string(i));
  const std::string s = format_tensor(labelled);
  CHECK(s == format_tensor(plain));
  CHECK(s.find('#') == std::string::npos);
}

// What attn adds to PyTorch's print: the column-label line above "tensor(" and a "  # ..." tail.
// Removing them must give back PyTorch's print byte for byte.
namespace {
std::string strip_labels(const std::string& s) {
  std::string out;
  std::size_t pos = s.find("tensor(");
  while (pos != std::string::npos && pos < s.size()) {
    std::size_t end = s.find('\n', pos);
    std::string line = s.substr(pos, end == std::string::npos ? std::string::npos : end - pos);
    const std::size_t tail = line.find("  # ");
    if (tail != std::string::npos) line.erase(tail);
    out += line;
    if (end == std::string::npos) break;
    out += '\n';
    pos = end + 1;
  }
  return out;
}

std::size_t count(const std::string& s, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t p = s.find(what); p != std::string::npos; p = s.find(what, p + 1)) ++n;
  return n;
}
}  // namespace

TEST_CASE("labels: a wrapped row keeps its label on its first line, the numbers untouched") {
  // The row's first line is the one holding its '['; the lines it wraps onto stay PyTorch's.
  // Column labels go: a wrapped row's values no longer stand under them.
  TensorItem plain = item({2, 12}, {});
  for (int i = 0; i < 24; ++i) plain.values.push_back((static_cast<float>(i) - 12.0f) / 7.0f);
  TensorItem labelled = plain;
  labelled.row_labels = {"first", "second"};
  labelled.col_labels = {"a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l"};
  const std::string s = format_tensor(labelled);
  CHECK(s == R"(tensor([[-1.7143, -1.5714, -1.4286, -1.2857, -1.1429, -1.0000, -0.8571, -0.7143,  # first
         -0.5714, -0.4286, -0.2857, -0.1429],
        [ 0.0000,  0.1429,  0.2857,  0.4286,  0.5714,  0.7143,  0.8571,  1.0000,  # second
          1.1429,  1.2857,  1.4286,  1.5714]]))");
  CHECK(strip_labels(s) == format_tensor(plain));
}

TEST_CASE("labels: wrapped rows of a 3-D tensor in scientific mode, one label per row") {
  // The shape of `attn lesson scaling`'s stacked (2, 8) rows, batched: torch.stack of two (2, 8)
  // blocks whose values span more than 1000x, so e-notation makes each row wrap once.
  TensorItem plain = item({2, 2, 8}, {});
  for (int i = 0; i < 32; ++i) plain.values.push_back(std::pow(10.0f, static_cast<float>(i % 8) - 4.0f) * (1.0f + static_cast<float>(i) / 32.0f));
  TensorItem labelled = plain;
  labelled.row_labels = {"q1", "q2"};
  const std::string s = format_tensor(labelled);
  const std::string body = format_tensor(plain);
  CHECK(body.find("e+") != std::string::npos);        // scientific mode, as intended
  CHECK(count(body, "\n") + 1 > 4 + 1);               // more lines than 4 rows and a blank one
  CHECK(strip_labels(s) == body);                       // the numbers and brackets unchanged
  CHECK(count(s, "  # q1") == 2);                       // one label per row, in each block
  CHECK(count(s, "  # q2") == 2);
  CHECK(count(s, "  # ") == 4);                         // on every row's start, nothing else
  for (std::size_t p = s.find("  # "); p != std::string::npos; p = s.find("  # ", p + 1)) {
    const std::size_t nl = s.rfind('\n', p);  // each label sits on a line holding a '['
    const std::size_t line_start = nl == std::string::npos ? 0 : nl + 1;
    CHECK(s.substr(line_start, p - line_start).find('[') != std::string::npos);
  }
}

TEST_CASE("labels: a batch of different sentences labels each block's wrapped rows") {
  // B * T labels: block b's rows take labels b*T ... b*T + T-1 (row_label_index).
  TensorItem plain = item({2, 2, 12}, {});
  for (int i = 0; i < 48; ++i) plain.values.push_back((static_cast<float>(i) - 24.0f) / 7.0f);
  TensorItem labelled = plain;
  labelled.row_labels = {"a0", "a1", "b0", "b1"};
  const std::string s = format_tensor(labelled);
  CHECK(strip_labels(s) == format_tensor(plain));
  const std::size_t a0 = s.find("# a0"), a1 = s.find("# a1"), b0 = s.find("# b0"), b1 = s.find("# b1");
  REQUIRE(b1 != std::string::npos);
  CHECK(a0 < a1);
  CHECK(a1 < b0);
  CHECK(b0 < b1);
  CHECK(count(s, "  # ") == 4);
}

TEST_CASE("labels: column labels that do not match the columns are dropped, row labels kept") {
  TensorItem t = item({2, 2}, {0.1, 0.9, 0.6, 0.4});
  t.row_labels = {"x", "y"};
  t.col_labels = {"only one"};
  CHECK(format_tensor(t) == R"(tensor([[0.1000, 0.9000],  # x
        [0.6000, 0.4000]])  # y)");
}

TEST_CASE("sci_mode on and off override PyTorch's choice, as torch.set_printoptions(sci_mode=...) does") {
  // Checked against PyTorch 1.13 with torch.set_printoptions(precision=4, sci_mode=True / False).
  attn::report::PrintOptions on, off;
  on.sci_mode = true;
  off.sci_mode = false;
  CHECK(format_tensor(item({2}, {1.0, 2.0}), on) == "tensor([1.0000e+00, 2.0000e+00])");
  CHECK(format_tensor(item({2}, {0.0, 0.0}), on) == "tensor([0., 0.])");  // no nonzero value: the mode stays
  // The width stays the one the automatic choice measured (e-notation's, 10), as in PyTorch.
  CHECK(format_tensor(item({3}, {1e-5, 0.5, 2.0}), off) == "tensor([    0.0000,     0.5000,     2.0000])");
  CHECK(format_tensor(item({2}, {1e6, 1.0}), off) == "tensor([  1000000.,         1.])");
  // Unset, the automatic choice: e-notation for a value below 1e-4.
  CHECK(format_tensor(item({3}, {1e-5, 0.5, 2.0})) == "tensor([1.0000e-05, 5.0000e-01, 2.0000e+00])");
}
