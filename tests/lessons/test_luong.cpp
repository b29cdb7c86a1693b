// The luong lesson: its stages, its numbers against PyTorch, the bridge to Q K^T, and its errors.
//
// The expected values were printed by PyTorch 1.13 (/usr/bin/python3, set_printoptions(precision=6))
// running the lesson's own reproduce lines with the defaults:
//   each word w: torch.manual_seed(fnv1a32(w.lower())); torch.rand(4)   (x, y, and y_0 = "<s>")
//   torch.manual_seed(2015); encoder = nn.RNNCell(4, 8); decoder = nn.RNNCell(4, 8)
//   W_general = nn.Linear(8, 8, bias=False); W_concat = nn.Linear(16, 8, bias=False)
//   v_a = nn.Linear(8, 1, bias=False); W_c = nn.Linear(16, 8, bias=False)
//   W_query = torch.rand(8, 4); W_key = torch.rand(8, 4)
// then h_s = encoder over x from zeros; h = h_s[-1]; for each step h = decoder(y_prev, h),
//   dot = h_s @ h, general = W_general(h_s) @ h,
//   concat = v_a(tanh(W_concat(cat([h.expand(6, 8), h_s], 1)))).squeeze(-1),
//   a = softmax(general), c = a @ h_s, h~ = tanh(W_c(cat([c, h]))),
// and Q @ K^T = (H_dec @ W_query) @ (h_s @ W_key).T. (The lesson now calls W_general, W_concat,
// v_a, W_c and h_s by the names of its --weights files and of docs/luong.md: W_g, W_c, v_c, W_att
// and h_enc; the draw order and the numbers are unchanged.)
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include "lesson_kit/registry.hpp"
#include "report_lookup.hpp"
#include "lesson_kit/seq2seq.hpp"

using namespace attn;
using namespace attn::test;

namespace {

// The first table whose header starts with `first_column`.
const report::TableItem& table(const report::Report& r, const std::string& first_column) {
  for (const auto& s : r.stages())
    for (const auto& item : s.items)
      if (const auto* t = std::get_if<report::TableItem>(&item))
        if (!t->header.empty() && t->header[0] == first_column) return *t;
  FAIL("no table starting with column " << first_column);
  static const report::TableItem none;  // not reached: FAIL ends the test
  return none;
}

// values[offset ..] against PyTorch's, printed to 6 decimals.
void check_values(const report::TensorItem& t, const std::vector<float>& expected, std::size_t offset = 0) {
  REQUIRE(t.values.size() >= offset + expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    CAPTURE(i);
    CHECK(std::fabs(t.values[offset + i] - expected[i]) <= 1e-5f);
  }
}

// Every row of a (rows, n) tensor sums to 1.
void check_rows_sum_to_one(const report::TensorItem& t) {
  REQUIRE(t.shape.size() == 2);
  const std::size_t rows = t.shape[0], n = t.shape[1];
  for (std::size_t i = 0; i < rows; ++i) {
    double sum = 0.0;
    for (std::size_t j = 0; j < n; ++j) {
      CHECK(t.values[i * n + j] > 0.0f);
      sum += t.values[i * n + j];
    }
    CAPTURE(i);
    CHECK(std::fabs(sum - 1.0) < 1e-5);
  }
}

// The number after "max |diff| = " in a check's text, or NaN when it is not there.

LessonOptions short_sentences() {
  LessonOptions opts;
  opts.src = std::vector<std::string>{"a", "b", "c"};
  opts.tgt = std::vector<std::string>{"x", "y"};
  return opts;
}

}  // namespace

TEST_CASE("luong: the default run, its header and its stages") {
  const auto r = run_lesson("luong");
  CHECK(r.header.lesson == "luong");
  const auto& rep = r.header.reproduce;
  REQUIRE(rep.size() >= 11);
  // The imports the lines use, then the draw order that makes the numbers reproducible: exactly
  // this, one per line.
  CHECK(rep[0] == "import torch");
  CHECK(rep[1] == "from torch import nn");
  CHECK(rep[2] == "torch.manual_seed(2015)");
  CHECK(rep[3] == "encoder = nn.RNNCell(4, 8)");
  CHECK(rep[4] == "decoder = nn.RNNCell(4, 8)");
  CHECK(rep[5] == "W_g = nn.Linear(8, 8, bias=False)");
  CHECK(rep[6] == "W_c = nn.Linear(16, 8, bias=False)");
  CHECK(rep[7] == "v_c = nn.Linear(8, 1, bias=False)");
  CHECK(rep[8] == "W_att = nn.Linear(16, 8, bias=False)");
  CHECK(rep[9] == "W_query = torch.rand(8, 4)");
  CHECK(rep[10] == "W_key = torch.rand(8, 4)");

  REQUIRE(r.stages().size() == 13);
  // The untrained note is said in the first stage.
  const auto first = notes(r.stages().front());
  CHECK(std::find(first.begin(), first.end(), std::string(kUntrainedNote)) != first.end());
  // The encoder states carry the source words; h_enc has one row per word.
  const auto& h_s = tensor(r, "h_enc");
  CHECK(h_s.shape == Shape{6, 8});
  CHECK(h_s.row_labels == report::Labels{"the", "cat", "sat", "on", "the", "mat"});
  // A repeated word gets a different state: row 5 ("the" again) differs from row 1.
  CHECK(h_s.values[0] != h_s.values[4 * 8]);
}

TEST_CASE("luong: step 1 scores with h_1, after the RNN step, and matches PyTorch") {
  const auto r = run_lesson("luong");
  const auto& e_1 = tensor(r, "e_1");
  REQUIRE(e_1.shape == Shape{3, 6});
  CHECK(e_1.row_labels == report::Labels{"dot", "general", "concat"});
  CHECK(e_1.col_labels == report::Labels{"the", "cat", "sat", "on", "the", "mat"});
  check_values(e_1, {0.040797f, 0.066824f, 0.173344f, 0.015104f, 0.042371f, -0.047150f,     // dot
                     0.177477f, 0.482928f, 0.414886f, 0.414913f, 0.328504f, 0.416405f,      // general
                     -0.097390f, -0.124360f, -0.103575f, -0.107129f, -0.093798f, -0.113514f});  // concat
  check_values(tensor(r, "h~_1"),
               {0.136454f, 0.271937f, 0.132967f, -0.185438f, -0.154271f, 0.138104f, 0.032650f, 0.283728f});

  // h_1 is the first decoder state of the loop, and not h_0 = h_enc_S (Bahdanau's query).
  const auto& h_1 = tensor(r, "h_1");
  const auto& h_t = tensor(r, "h_t");
  const auto& h_s = tensor(r, "h_enc");
  REQUIRE(h_1.shape == Shape{8});
  for (std::size_t k = 0; k < 8; ++k) CHECK(h_1.values[k] == h_t.values[k]);
  CHECK(h_1.values[0] != doctest::Approx(h_s.values[5 * 8]));
  // [c_1 ; h_1]: c_1 first, then h_1.
  const auto& ch = tensor(r, "[c_1 ; h_1]");
  const auto& c_1 = tensor(r, "c_1");
  REQUIRE(ch.shape == Shape{16});
  for (std::size_t k = 0; k < 8; ++k) {
    CHECK(ch.values[k] == c_1.values[k]);
    CHECK(ch.values[8 + k] == h_1.values[k]);
  }
}

TEST_CASE("luong: softmax rows sum to 1 and the alignment is (T_tgt, S)") {
  const auto r = run_lesson("luong");
  const auto& a_1 = tensor(r, "a_1");
  REQUIRE(a_1.shape == Shape{3, 6});
  check_rows_sum_to_one(a_1);

  const auto& alignment = tensor(r, "alignment");
  REQUIRE(alignment.shape == Shape{7, 6});
  CHECK(alignment.row_labels == report::Labels{"le", "chat", "s'est", "assis", "sur", "le", "tapis"});
  CHECK(alignment.col_labels == report::Labels{"the", "cat", "sat", "on", "the", "mat"});
  check_rows_sum_to_one(alignment);
  check_values(alignment, {0.178012f, 0.166174f, 0.147639f, 0.164745f, 0.174235f, 0.169195f}, 2 * 6);  // s'est
  check_values(alignment, {0.160405f, 0.173995f, 0.160261f, 0.167270f, 0.167119f, 0.170951f}, 6 * 6);  // tapis
  // Row 1 of the alignment is step 1's general row.
  for (std::size_t j = 0; j < 6; ++j) CHECK(alignment.values[j] == a_1.values[6 + j]);

  std::size_t sum_checks = 0;
  for (const auto& c : checks(r))
    if (c.text.find("sums to 1") != std::string::npos) {
      ++sum_checks;
      CHECK(c.passed);
    }
  CHECK(sum_checks == 2);
}

TEST_CASE("luong: parameter counts of the three scores") {
  const auto r = run_lesson("luong");
  const auto& t = table(r, "part");
  REQUIRE(t.rows.size() == 5);
  CHECK(t.rows[0][0] == "dot score");
  CHECK(t.rows[0][2] == "0");
  CHECK(t.rows[1][2] == "64");   // d_h * d_h
  CHECK(t.rows[2][2] == "136");  // d_a * 2 d_h + d_a
  CHECK(t.rows[3][2] == "128");  // W_att: d_h * 2 d_h
  CHECK(t.rows[4][2] == "112");  // nn.RNNCell(4, 8): 32 + 64 + 8 + 8
}

TEST_CASE("luong: general scores with W_a = W_query W_key^T are Q K^T") {
  const auto r = run_lesson("luong");
  const auto& qk = tensor(r, "Q @ K^T");
  const auto& general = tensor(r, "general_scores");
  REQUIRE(qk.shape == Shape{7, 6});
  REQUIRE(general.shape == Shape{7, 6});
  CHECK(tensor(r, "W_a").shape == Shape{8, 8});
  CHECK(tensor(r, "Q").shape == Shape{7, 4});
  CHECK(tensor(r, "K").shape == Shape{6, 4});
  check_values(qk, {0.416850f, -0.294469f, -0.510861f, -0.373782f, 0.023590f, -0.354604f});
  for (std::size_t i = 0; i < qk.values.size(); ++i) CHECK(std::fabs(qk.values[i] - general.values[i]) < 1e-5f);

  const auto bridge = check_with(r, "Q @ K^T equals general_scores");
  CHECK(bridge.value >= 0.0);  // false for NaN: the number must be there
  CHECK(bridge.value <= bridge.bound);
  CHECK(bridge.passed);
  CHECK(bridge.value < 1e-5);
}

TEST_CASE("luong: --src, --tgt, --hidden, --d-in and --seed reach every shape") {
  LessonOptions opts = short_sentences();
  opts.hidden = 5;
  opts.d_in = 3;
  const auto r = run_lesson("luong", opts);
  CHECK(tensor(r, "x").shape == Shape{3, 3});
  CHECK(tensor(r, "y").shape == Shape{2, 3});
  CHECK(tensor(r, "h_enc").shape == Shape{3, 5});
  CHECK(tensor(r, "e_1").shape == Shape{3, 3});
  CHECK(tensor(r, "[c_1 ; h_1]").shape == Shape{10});
  CHECK(tensor(r, "h~_t").shape == Shape{2, 5});
  const auto& alignment = tensor(r, "alignment");
  CHECK(alignment.shape == Shape{2, 3});
  CHECK(alignment.row_labels == report::Labels{"x", "y"});
  CHECK(alignment.col_labels == report::Labels{"a", "b", "c"});
  check_rows_sum_to_one(alignment);
  CHECK(tensor(r, "W_a").shape == Shape{5, 5});
  CHECK(tensor(r, "Q @ K^T").shape == Shape{2, 3});
  CHECK(r.header.reproduce[3] == "encoder = nn.RNNCell(3, 5)");
  CHECK(table(r, "part").rows[2][2] == "55");  // concat: 5 * 10 + 5

  LessonOptions seeded;
  seeded.seed = 1;
  const auto other = run_lesson("luong", seeded);
  CHECK(other.header.reproduce[2] == "torch.manual_seed(1)");
  CHECK(tensor(other, "e_1").values[0] != doctest::Approx(0.040797f));
}

TEST_CASE("luong: bad sizes and sentences are refused by option") {
  LessonOptions zero_hidden;
  zero_hidden.hidden = 0;
  CHECK_THROWS_WITH_AS(run_lesson("luong", zero_hidden), doctest::Contains("--hidden"), UsageError);

  LessonOptions zero_d_in;
  zero_d_in.d_in = 0;
  CHECK_THROWS_WITH_AS(run_lesson("luong", zero_d_in), doctest::Contains("--d-in"), UsageError);

  LessonOptions empty_src;
  empty_src.src = std::vector<std::string>{};
  CHECK_THROWS_WITH_AS(run_lesson("luong", empty_src), doctest::Contains("--src"), UsageError);

  LessonOptions empty_tgt;
  empty_tgt.tgt = std::vector<std::string>{};
  CHECK_THROWS_WITH_AS(run_lesson("luong", empty_tgt), doctest::Contains("--tgt"), UsageError);

  LessonOptions long_src;
  long_src.src = std::vector<std::string>(33, "word");
  CHECK_THROWS_WITH_AS(run_lesson("luong", long_src), doctest::Contains("--src"), UsageError);

  LessonOptions longest;  // 32 words is still fine
  longest.src = std::vector<std::string>(32, "word");
  CHECK(tensor(run_lesson("luong", longest), "alignment").shape == Shape{7, 32});
}
