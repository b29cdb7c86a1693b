// The bahdanau lesson: its numbers with the defaults and with other sizes, its invariants (weights
// sum to 1, the alignment matrix has one row per target word and one column per source word, U_a h
// computed once gives the same scores), and the errors a learner sees.
//
// The expected values were printed by PyTorch 1.13 (/usr/bin/python3, float32, 8 decimals)
// running the construction the lesson's header lists: each word's embedding from
// torch.manual_seed(fnv1a32(word.lower())); torch.rand(d_in), then torch.manual_seed(seed);
// enc_fwd = nn.RNNCell(d_in, d_h); enc_bwd = nn.RNNCell(d_in, d_h); W_s = nn.Linear(d_h, d_h);
// W_a = nn.Linear(d_h, d_h, bias=False); U_a = nn.Linear(2 d_h, d_h, bias=False);
// v_a = nn.Linear(d_h, 1, bias=False); decoder = nn.RNNCell(d_in + 2 d_h, d_h); the encoder run
// both ways from zeros, s_0 = tanh(W_s(h_bwd[0])), and per step e = v_a(tanh(W_a(s) + U_a(h))),
// alpha = softmax(e), c = alpha @ h, s = decoder(cat([y_prev, c]), s) with y_prev = "<s>", then
// the target words (the script is in docs/bahdanau.md). attn and PyTorch agreed to 1.8e-7.
#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

#include "lesson_kit/registry.hpp"
#include "report_lookup.hpp"
#include "lesson_kit/seq2seq.hpp"

using namespace attn;
using namespace attn::test;

namespace {

std::vector<report::TableItem> tables(const report::Report& r) {
  std::vector<report::TableItem> out;
  for (const auto& s : r.stages())
    for (const auto& item : s.items)
      if (const auto* t = std::get_if<report::TableItem>(&item)) out.push_back(*t);
  return out;
}

void check_values(const report::TensorItem& t, const std::vector<float>& expected) {
  CAPTURE(t.name);
  REQUIRE(t.values.size() == expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    CAPTURE(i);
    CHECK(std::fabs(t.values[i] - expected[i]) <= 1e-5f);
  }
}

// Every row of a (rows, n) tensor sums to 1 and holds no negative weight.
void check_distribution_rows(const report::TensorItem& t) {
  CAPTURE(t.name);
  const std::size_t n = t.shape.back();
  REQUIRE(n > 0);
  for (std::size_t r = 0; r < t.values.size() / n; ++r) {
    double sum = 0.0;
    for (std::size_t j = 0; j < n; ++j) {
      CHECK(t.values[r * n + j] >= 0.0f);
      sum += t.values[r * n + j];
    }
    CAPTURE(r);
    CHECK(sum == doctest::Approx(1.0).epsilon(1e-6));
  }
}

const std::vector<std::string> kDefaultSource = {"the", "cat", "sat", "on", "the", "mat"};
const std::vector<std::string> kDefaultTarget = {"le", "chat", "s'est", "assis", "sur", "le", "tapis"};

}  // namespace

TEST_CASE("bahdanau with defaults: the header says how to rebuild every number") {
  const auto r = run_lesson("bahdanau");
  CHECK(r.header.lesson == "bahdanau");
  const std::vector<std::string> expected = {"import torch",
                                             "from torch import nn",
                                             "torch.manual_seed(2014)",
                                             "enc_fwd = nn.RNNCell(4, 8)",
                                             "enc_bwd = nn.RNNCell(4, 8)",
                                             "W_s = nn.Linear(8, 8)",
                                             "W_a = nn.Linear(8, 8, bias=False)",
                                             "U_a = nn.Linear(16, 8, bias=False)",
                                             "v_a = nn.Linear(8, 1, bias=False)",
                                             "decoder = nn.RNNCell(20, 8)"};
  REQUIRE(r.header.reproduce.size() >= expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) CHECK(r.header.reproduce[i] == expected[i]);
  // 4 setup stages, 3 for step 1, one per later step, the alignment matrix, the costs.
  CHECK(r.stages().size() == 4 + 3 + 6 + 2);

  // The first stage says the weights are untrained.
  bool untrained = false;
  for (const auto& item : r.stages().front().items)
    if (const auto* n = std::get_if<report::NoteItem>(&item)) untrained = untrained || n->text == kUntrainedNote;
  CHECK(untrained);
}

TEST_CASE("bahdanau with defaults: shapes of the encoder, alignment model and step 1") {
  const auto r = run_lesson("bahdanau");
  CHECK(tensor(r, "x").shape == Shape{6, 4});
  CHECK(tensor(r, "x").row_labels == kDefaultSource);
  CHECK(tensor(r, "h_fwd").shape == Shape{6, 8});
  CHECK(tensor(r, "h_bwd").shape == Shape{6, 8});
  CHECK(tensor(r, "h").shape == Shape{6, 16});
  CHECK(tensor(r, "h").row_labels == kDefaultSource);
  CHECK(tensor(r, "W_a.weight").shape == Shape{8, 8});
  CHECK(tensor(r, "U_a.weight").shape == Shape{8, 16});
  CHECK(tensor(r, "v_a.weight").shape == Shape{1, 8});
  CHECK(tensor(r, "U_a h").shape == Shape{6, 8});
  CHECK(tensor(r, "W_a s_0").shape == Shape{8});
  CHECK(tensor(r, "W_a s_0 + U_a h").shape == Shape{6, 8});
  CHECK(tensor(r, "tanh(W_a s_0 + U_a h)").shape == Shape{6, 8});
  CHECK(tensor(r, "e_1").shape == Shape{6});
  CHECK(tensor(r, "e_1").col_labels == kDefaultSource);
  CHECK(tensor(r, "c_1").shape == Shape{16});
  CHECK(tensor(r, "s_1").shape == Shape{8});

  // h_j = [h_fwd_j ; h_bwd_j], row by row.
  const auto& h = tensor(r, "h");
  const auto& f = tensor(r, "h_fwd");
  const auto& b = tensor(r, "h_bwd");
  for (std::size_t j = 0; j < 6; ++j)
    for (std::size_t k = 0; k < 8; ++k) {
      CHECK(h.values[j * 16 + k] == f.values[j * 8 + k]);
      CHECK(h.values[j * 16 + 8 + k] == b.values[j * 8 + k]);
    }
  // The broadcast sum really is W_a s_0 added to every row of U_a h, and tanh is applied to it.
  const auto& Ws = tensor(r, "W_a s_0");
  const auto& Uh = tensor(r, "U_a h");
  const auto& pre = tensor(r, "W_a s_0 + U_a h");
  const auto& act = tensor(r, "tanh(W_a s_0 + U_a h)");
  for (std::size_t j = 0; j < 6; ++j)
    for (std::size_t a = 0; a < 8; ++a) {
      CHECK(pre.values[j * 8 + a] == doctest::Approx(Ws.values[a] + Uh.values[j * 8 + a]));
      CHECK(act.values[j * 8 + a] == doctest::Approx(std::tanh(pre.values[j * 8 + a])));
    }
}

TEST_CASE("bahdanau with defaults: PyTorch's numbers") {
  const auto r = run_lesson("bahdanau");
  check_values(tensor(r, "s_0"), {0.13440911f, -0.06183873f, -0.07960979f, 0.38615465f, -0.26224086f,
                                  -0.41420135f, 0.11871795f, -0.19706608f});
  check_values(tensor(r, "e_1"), {-0.13572191f, -0.11825466f, -0.11153062f, -0.15317701f, -0.11568223f,
                                  -0.08948229f});
  check_values(tensor(r, "alpha_1"), {0.16413972f, 0.16703197f, 0.16815889f, 0.16129951f, 0.16746221f,
                                      0.17190769f});
  check_values(tensor(r, "c_1"), {-0.61800975f, 0.18460803f, -0.08697654f, -0.01285911f, 0.58457077f,
                                  -0.58290321f, -0.45978531f, 0.41878849f, -0.11383447f, 0.31878331f,
                                  0.66908449f, 0.35268629f, -0.14538297f, 0.09150270f, 0.73846072f,
                                  -0.10984103f});
  check_values(tensor(r, "s_1"), {0.36195460f, 0.11122559f, 0.32584086f, -0.02983260f, -0.23845485f,
                                  0.85288072f, -0.68189102f, -0.33376566f});
  // s_T: the last decoder state depends on every step before it.
  check_values(tensor(r, "s_7"), {0.11133894f, 0.01410913f, 0.49873653f, 0.47210199f, -0.85122073f,
                                  0.96848774f, -0.94482797f, -0.68532485f});
  check_values(tensor(r, "alignment"),
               {0.16413972f, 0.16703197f, 0.16815889f, 0.16129951f, 0.16746221f, 0.17190769f,
                0.16522001f, 0.16722317f, 0.16795366f, 0.16140334f, 0.16656040f, 0.17163934f,
                0.16577703f, 0.16720633f, 0.16739488f, 0.16148260f, 0.16653050f, 0.17160858f,
                0.16607608f, 0.16731133f, 0.16736074f, 0.16177474f, 0.16618343f, 0.17129369f,
                0.16607939f, 0.16733152f, 0.16726427f, 0.16160938f, 0.16633621f, 0.17137916f,
                0.16607055f, 0.16733307f, 0.16732247f, 0.16168523f, 0.16623729f, 0.17135140f,
                0.16619264f, 0.16752611f, 0.16730466f, 0.16164151f, 0.16601229f, 0.17132282f});
}

TEST_CASE("bahdanau with defaults: every alpha_i sums to 1 and the alignment matrix stacks them") {
  const auto r = run_lesson("bahdanau");
  const auto& alignment = tensor(r, "alignment");
  REQUIRE(alignment.shape == Shape{7, 6});
  CHECK(alignment.row_labels == kDefaultTarget);  // target words on rows
  CHECK(alignment.col_labels == kDefaultSource);  // source words as column labels
  check_distribution_rows(alignment);
  for (std::size_t i = 1; i <= 7; ++i) {
    CAPTURE(i);
    const auto& alpha = tensor(r, "alpha_" + std::to_string(i));
    CHECK(alpha.shape == Shape{6});
    check_distribution_rows(alpha);
    for (std::size_t j = 0; j < 6; ++j) CHECK(alignment.values[(i - 1) * 6 + j] == alpha.values[j]);
    // Every later step shows e_i, alpha_i, c_i and s_i.
    CHECK(has_tensor(r, "e_" + std::to_string(i)));
    CHECK(tensor(r, "c_" + std::to_string(i)).shape == Shape{16});
    CHECK(tensor(r, "s_" + std::to_string(i)).shape == Shape{8});
  }
  CHECK_FALSE(has_tensor(r, "alpha_8"));

  // The checks on screen: one per step, the matrix's rows, and U_a h computed once changes nothing.
  std::size_t step_checks = 0;
  bool rows_checked = false, precompute_checked = false;
  for (const auto& c : checks(r)) {
    CHECK_MESSAGE(c.passed, c.text);
    if (c.text.rfind("every row of alpha_", 0) == 0) ++step_checks;
    if (c.text.find("every row of alignment sums to 1") != std::string::npos) rows_checked = true;
    if (c.text.find("recomputed inside the step") != std::string::npos) {
      precompute_checked = true;
      CHECK(c.value == 0.0);
    }
  }
  CHECK(step_checks == 7);
  CHECK(rows_checked);
  CHECK(precompute_checked);
}

TEST_CASE("bahdanau: with small pre-activations the query nearly cancels in softmax") {
  const auto r = run_lesson("bahdanau");
  // torch.softmax(v_a(U_a(h)).squeeze(-1), dim=0): the weights with W_a s_{i-1} left out.
  const auto& key_only = tensor(r, "softmax(v_a^T U_a h_j)");
  check_values(key_only, {0.16428745f, 0.16677862f, 0.16802116f, 0.16068506f, 0.16722830f, 0.17299941f});
  CHECK(key_only.col_labels == kDefaultSource);
  // Every alignment row is close to it, yet not equal: the query still acts through tanh's bend.
  const auto& alignment = tensor(r, "alignment");
  float gap = 0.0f;
  for (std::size_t i = 0; i < 7; ++i)
    for (std::size_t j = 0; j < 6; ++j) gap = std::fmax(gap, std::fabs(alignment.values[i * 6 + j] - key_only.values[j]));
  CHECK(gap > 1e-4f);
  CHECK(gap < 5e-3f);
  // The question on screen measures the same gap and answers yes: within 0.01.
  const auto ignore = check_with(r, "does the alignment ignore the decoder");
  CHECK(ignore.question);
  CHECK(ignore.value == doctest::Approx(gap));
  CHECK(ignore.bound == 0.01);
  CHECK(ignore.passed);
}

TEST_CASE("bahdanau: the parameter counts of the alignment model and the RNNs") {
  const auto r = run_lesson("bahdanau");
  const auto all = tables(r);
  REQUIRE(all.size() == 2);
  // W_a d_a * d_h, U_a d_a * 2 d_h, v_a d_a, with d_a = d_h = 8.
  const auto& alignment = all[0];
  REQUIRE(alignment.rows.size() == 4);
  CHECK(alignment.rows[0].back() == "64");
  CHECK(alignment.rows[1].back() == "128");
  CHECK(alignment.rows[2].back() == "8");
  CHECK(alignment.rows[3].back() == "200");
  // nn.RNNCell(in, 8): 8 * in + 8 * 8 + 2 * 8; nn.Linear(8, 8): 64 + 8.
  const auto& whole = all[1];
  REQUIRE(whole.rows.size() == 6);
  CHECK(whole.rows[0].back() == "112");  // enc_fwd, RNNCell(4, 8)
  CHECK(whole.rows[1].back() == "112");  // enc_bwd
  CHECK(whole.rows[2].back() == "72");   // W_s
  CHECK(whole.rows[3].back() == "240");  // decoder, RNNCell(20, 8)
  CHECK(whole.rows[4].back() == "200");  // the alignment model
  CHECK(whole.rows[5].back() == "736");
}

TEST_CASE("bahdanau: --src and --tgt set S and T_tgt, --hidden and --d-in the widths") {
  LessonOptions opts;
  opts.seed = 7;
  opts.src = std::vector<std::string>{"A", "Big", "dog"};
  opts.tgt = std::vector<std::string>{"ein", "grosser", "Hund", "bellt"};
  opts.hidden = 3;
  opts.d_in = 2;
  const auto r = run_lesson("bahdanau", opts);
  CHECK(r.stages().size() == 4 + 3 + 3 + 2);
  const auto& alignment = tensor(r, "alignment");
  CHECK(alignment.shape == Shape{4, 3});
  CHECK(alignment.row_labels == *opts.tgt);
  CHECK(alignment.col_labels == *opts.src);
  check_distribution_rows(alignment);
  CHECK(tensor(r, "h").shape == Shape{3, 6});
  CHECK(tensor(r, "U_a.weight").shape == Shape{3, 6});
  CHECK(tensor(r, "c_4").shape == Shape{6});
  CHECK(tensor(r, "s_4").shape == Shape{3});
  CHECK(r.header.reproduce[2] == "torch.manual_seed(7)");  // after the two imports
  CHECK(r.header.reproduce[9] == "decoder = nn.RNNCell(8, 3)");
  // PyTorch, same construction with these sizes.
  check_values(tensor(r, "e_1"), {0.04792305f, 0.02468030f, 0.04243610f});
  check_values(tensor(r, "s_4"), {-0.53641731f, -0.72788453f, 0.07942604f});
  check_values(alignment, {0.33652434f, 0.32879278f, 0.33468288f, 0.33647940f, 0.32874170f, 0.33477888f,
                           0.33646250f, 0.32874507f, 0.33479246f, 0.33647659f, 0.32872143f, 0.33480191f});
}

TEST_CASE("bahdanau: one source word takes all the weight, and a one-word target is one step") {
  LessonOptions opts;
  opts.src = std::vector<std::string>{"hello"};
  opts.tgt = std::vector<std::string>{"bonjour"};
  const auto r = run_lesson("bahdanau", opts);
  CHECK(r.stages().size() == 4 + 3 + 0 + 2);
  const auto& alignment = tensor(r, "alignment");
  REQUIRE(alignment.shape == Shape{1, 1});
  CHECK(alignment.values[0] == 1.0f);
  // With one source word the context is that word's state.
  const auto& h = tensor(r, "h");
  const auto& c = tensor(r, "c_1");
  REQUIRE(c.values.size() == h.values.size());
  for (std::size_t k = 0; k < c.values.size(); ++k) CHECK(c.values[k] == doctest::Approx(h.values[k]));
}

TEST_CASE("bahdanau: a repeated source word has one embedding but two encoder states") {
  const auto r = run_lesson("bahdanau");
  const auto& x = tensor(r, "x");
  const auto& h = tensor(r, "h");
  float x_diff = 0.0f, h_diff = 0.0f;  // "the" is word 1 and word 5
  for (std::size_t k = 0; k < 4; ++k) x_diff = std::fmax(x_diff, std::fabs(x.values[k] - x.values[16 + k]));
  for (std::size_t k = 0; k < 16; ++k) h_diff = std::fmax(h_diff, std::fabs(h.values[k] - h.values[64 + k]));
  CHECK(x_diff == 0.0f);
  CHECK(h_diff > 0.1f);
  const auto twin = check_with(r, "\"the\", words 1 and 5");
  CHECK(twin.value == doctest::Approx(h_diff));
  CHECK(twin.passed);
}

TEST_CASE("bahdanau: bad sizes and sentences are refused, naming the option") {
  LessonOptions opts;
  opts.hidden = 0;
  CHECK_THROWS_WITH_AS(run_lesson("bahdanau", opts), doctest::Contains("--hidden"), UsageError);
  opts.hidden = kMaxHidden + 1;
  CHECK_THROWS_WITH_AS(run_lesson("bahdanau", opts), doctest::Contains("--hidden"), UsageError);

  LessonOptions empty_src;
  empty_src.src = std::vector<std::string>{};
  CHECK_THROWS_WITH_AS(run_lesson("bahdanau", empty_src), doctest::Contains("--src needs at least one word"), UsageError);
  LessonOptions empty_tgt;
  empty_tgt.tgt = std::vector<std::string>{};
  CHECK_THROWS_WITH_AS(run_lesson("bahdanau", empty_tgt), doctest::Contains("--tgt needs at least one word"), UsageError);

  std::vector<std::string> long_sentence;
  for (std::size_t i = 0; i <= kMaxSentence; ++i) long_sentence.push_back("w" + std::to_string(i));
  LessonOptions long_src;
  long_src.src = long_sentence;
  CHECK_THROWS_WITH_AS(run_lesson("bahdanau", long_src), doctest::Contains("--src is too long"), UsageError);
  LessonOptions long_tgt;
  long_tgt.tgt = long_sentence;
  CHECK_THROWS_WITH_AS(run_lesson("bahdanau", long_tgt), doctest::Contains("--tgt is too long"), UsageError);
  // Exactly kMaxSentence words is allowed.
  long_src.src->pop_back();
  CHECK(tensor(run_lesson("bahdanau", long_src), "alignment").shape == Shape{7, kMaxSentence});

  LessonOptions d_in;
  d_in.d_in = 0;
  CHECK_THROWS_WITH_AS(run_lesson("bahdanau", d_in), doctest::Contains("--d-in"), UsageError);
}
