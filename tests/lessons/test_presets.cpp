// Each article preset against its article: the numbers the article prints (Phillips' X), or the
// article's own code (fixed where it fails) run by hand in PyTorch 1.13 (tests/data/presets/,
// made by tests/data/presets/make_fixtures.py), and the article's mistakes shown with the error
// PyTorch raises for them.
#include <algorithm>
#include <doctest/doctest.h>

#include <cmath>

#include "io/npy.hpp"
#include "lesson_kit/presets.hpp"
#include "lesson_kit/registry.hpp"
#include "report_lookup.hpp"

using namespace attn;
using namespace attn::test;

namespace {

NpyArray fixture(const std::string& name) {
  return read_npy(std::string(ATTN_TEST_DATA) + "/presets/" + name + ".npy");
}

// A shape without its leading 1s: (1, 6, 2) and (6, 2) hold the same values (the lessons show
// an unbatched (T, d) where the article's code keeps a batch of 1).
Shape squeezed(Shape s) {
  while (s.size() > 1 && s.front() == 1) s.erase(s.begin());
  return s;
}

// Largest |attn - torch| over a tensor and its fixture, which must have the same shape. `columns`
// compares only the first columns of the last axis (a fixture that keeps a slice).
double max_diff(const report::TensorItem& t, const std::string& name, std::size_t columns = 0) {
  const NpyArray expected = fixture(name);
  const std::size_t last = t.shape.back();
  if (columns == 0) {
    REQUIRE(squeezed(t.shape) == squeezed(expected.shape));
    columns = last;
  } else {
    REQUIRE(expected.shape.back() == columns);
    REQUIRE(expected.values.size() == t.values.size() / last * columns);
  }
  double worst = 0.0;
  for (std::size_t row = 0; row < t.values.size() / last; ++row)
    for (std::size_t c = 0; c < columns; ++c) {
      const double d = std::fabs(double(t.values[row * last + c]) - double(expected.values[row * columns + c]));
      worst = std::isnan(d) ? d : std::fmax(worst, d);
    }
  return worst;
}

report::Report run_preset(const std::string& preset, const std::string& lesson, bool values = false) {
  LessonOptions o;
  apply_preset(preset, lesson, values, o);
  return run_lesson(lesson, o);
}

const report::Stage& stage_titled(const report::Report& r, const std::string& part) {
  for (const auto& s : r.stages())
    if (s.title.find(part) != std::string::npos) return s;
  FAIL("no stage titled " << part);
  return r.stages().front();
}

}  // namespace

TEST_CASE("phillips: the article's printed X, and its MultiHeadAttention class's numbers") {
  const auto r = run_preset("phillips", "heads");
  CHECK(r.header.follows == std::string("Phillips, The Implemented Transformer: Multi-Head Attention"));
  // X as printed in the article, parsed from the article's text by the fixture script.
  CHECK(max_diff(tensor(r, "x"), "phillips__X_article") == 0.0);
  CHECK(tensor(r, "x").row_labels.at(12) == "hello");
  CHECK(tensor(r, "x").col_labels.empty());  // three different sentences
  // Wq, Wk, Wv, Wo drawn after torch.manual_seed(0), mask=None, dropout off.
  CHECK(has_tensor(r, "Wo.bias"));
  CHECK(max_diff(tensor(r, "attn_weights"), "phillips__attn_probs") <= 1e-6);
  CHECK(max_diff(tensor(r, "output"), "phillips__output") <= 1e-5);

  LessonOptions o;
  o.causal = true;  // the class's mask: masked_fill(mask == 0, -1e10) on the scaled scores
  apply_preset("phillips", "heads", false, o);
  const auto c = run_lesson("heads", o);
  CHECK(max_diff(tensor(c, "attn_weights"), "phillips_causal__attn_probs") <= 1e-6);
  const auto same = check_with(c, "the two masks hide exactly the same positions");
  CHECK(same.passed);
  CHECK(same.value == 0.0);
  CHECK(stage_titled(c, "Causal mask").equation.find("masked_fill(mask == 0, -1e10)") != std::string::npos);
}

TEST_CASE("rakesh: the article's code without transpose(1, 2), and the fixed code's numbers") {
  const auto r = run_preset("rakesh", "heads");
  CHECK(r.header.follows == std::string("Rakesh, Transformer Block - Multihead Attention"));
  // The article's own line: query @ keys.transpose(2, 3) on (B, T, h, d_k) gives (1, 3, 2, 2).
  CHECK(max_diff(tensor(r, "att_score (the article's)"), "rakesh__att_score_article") <= 1e-6);
  CHECK(check_with(r, "is head i's query against head j's key").passed);
  const auto fits = check_with(r, "can the (T, T) mask fill att_score (1, 3, 2, 2) in place?");
  CHECK(fits.question);
  CHECK_FALSE(fits.passed);
  // The message PyTorch 1.13 raises for att_score.masked_fill_(mask, -inf) with these shapes.
  CHECK(fits.because == "PyTorch 1.13 raises RuntimeError: The size of tensor a (2) must match the size of tensor b "
                        "(3) at non-singleton dimension 3");
  // The fixed code: the lesson's flow.
  CHECK(max_diff(tensor(r, "attn_weights"), "rakesh__attn_weights") <= 1e-6);
  CHECK(max_diff(tensor(r, "context_heads"), "rakesh__context_vector") <= 1e-6);
  // The generic "view without transpose" stage gives way to the article's own mistake.
  CHECK_FALSE(has_tensor(r, "q_wrong"));

  // With as many heads as tokens the mask fits, and PyTorch raises nothing.
  LessonOptions o;
  o.heads = 3;
  apply_preset("rakesh", "heads", false, o);
  const auto quiet = run_lesson("heads", o);
  CHECK(check_with(quiet, "can the (T, T) mask fill att_score (1, 3, 3, 3) in place?").passed);

  // One key/value head: the last axes agree, the one before does not (PyTorch 1.13's message).
  LessonOptions one_kv;
  one_kv.kv_heads = 1;
  apply_preset("rakesh", "heads", false, one_kv);
  CHECK(check_with(run_lesson("heads", one_kv), "in place?").because ==
        "PyTorch 1.13 raises RuntimeError: The size of tensor a (2) must match the size of tensor b (3) at "
        "non-singleton dimension 2");
}

TEST_CASE("llama: bias-free o_proj, mask == 0 filled with -1e9, combine_heads without return") {
  const auto r = run_preset("llama", "heads", true);
  CHECK(r.header.follows == std::string("MultiHead Attention, visualised on Llama-3.2-3B"));
  CHECK(has_tensor(r, "o_proj.weight"));
  CHECK_FALSE(has_tensor(r, "o_proj.bias"));
  CHECK(r.header.reproduce.back() == "o_proj = nn.Linear(3072, 3072, bias=False)");
  CHECK(stage_titled(r, "Causal mask").equation ==
        "attn_weights = softmax((attn_scores / sqrt(d_k)).masked_fill(mask == 0, -1e9), dim=-1)");
  CHECK(check_with(r, "the two masks hide exactly the same positions").passed);
  // attn's x (fixture copied from attn's own dump) through the model's layers in PyTorch.
  CHECK(max_diff(tensor(r, "x"), "llama__x") == 0.0);
  CHECK(max_diff(tensor(r, "attn_weights"), "llama__attn_weights") <= 1e-5);
  CHECK(max_diff(tensor(r, "output"), "llama__output", 16) <= 1e-5);
  const auto& s = stage_titled(r, "combine_heads returns None");
  bool error_shown = false;
  for (const auto& item : s.items)
    if (const auto* t = std::get_if<report::TableItem>(&item))
      for (const auto& row : t->rows)
        error_shown = error_shown ||
                      row.back() == "TypeError: linear(): argument 'input' (position 1) must be Tensor, not NoneType";
  CHECK(error_shown);
  CHECK(check_with(r, "with `return` added, combine_heads gives context_vec").passed);
}

TEST_CASE("evolution: seed 0 in __init__, wk drawn first, and its triu(attn_score) mask") {
  const auto r = run_preset("evolution", "causal");
  CHECK(r.header.follows == std::string("Evolution of Attention Mechanism, the Attention class"));
  // The seed, then wk first: the article's construction order.
  const auto& lines = r.header.reproduce;
  const auto seed = std::find(lines.begin(), lines.end(), "torch.manual_seed(0)");
  REQUIRE(seed != lines.end());
  REQUIRE(seed + 1 != lines.end());
  CHECK(*(seed + 1) == "wk = nn.Linear(3, 2, bias=False)");
  CHECK(std::find(lines.begin(), lines.end(), "wq = nn.Linear(3, 2, bias=False)") > seed + 1);
  CHECK(max_diff(tensor(r, "wk.weight"), "evolution__wk_weight") == 0.0);
  CHECK(max_diff(tensor(r, "wq.weight"), "evolution__wq_weight") == 0.0);
  CHECK(max_diff(tensor(r, "context_vec"), "evolution__context") <= 1e-6);
  // The book's tokens: every score above the diagonal is nonzero, so the article's mask works here.
  CHECK(check_with(r, "does triu(attn_score).bool() hide every future position here?").passed);
  // A zero token last: the article's code leaks it to every earlier row.
  CHECK(max_diff(tensor(r, "attn_weights_pad (the article's mask)"), "evolution__pad_weights_article") <= 1e-6);
  const auto open = check_with(r, "does the article's mask hide every future position of x_pad?");
  CHECK_FALSE(open.passed);
  CHECK(open.value == 5.0);
  CHECK(check_with(r, "the fixed mask hides the future of x_pad").passed);
  const NpyArray article = fixture("evolution__pad_context_article"), fixed = fixture("evolution__pad_context_fixed");
  double torch_diff = 0.0;
  for (std::size_t i = 0; i < article.values.size(); ++i)
    torch_diff = std::fmax(torch_diff, std::fabs(double(article.values[i]) - fixed.values[i]));
  const auto moved = check_with(r, "same context_vec as the fixed mask?");
  CHECK_FALSE(moved.passed);
  CHECK(moved.value == doctest::Approx(torch_diff).epsilon(1e-5));
}

TEST_CASE("the default follows: line stays without a preset, and for raschka") {
  CHECK(run_lesson("heads").header.follows.find("Raschka") == 0);
  CHECK(run_preset("raschka", "causal").header.follows == "Raschka, Build a Large Language Model (From Scratch), 3.5");
  CHECK(article_model("").mask == MaskConvention::HideWhereOne);
}

namespace {

// D(a, c) as docs/heads.md defines it, written again here: the mean over the B * T query rows of
// 0.5 * sum_j |w[b, a, t, j] - w[b, c, t, j]|, from the values a run reports for attn_weights.
double tv_between_heads(const report::TensorItem& w, std::size_t a, std::size_t c) {
  const std::size_t B = w.shape[0], h = w.shape[1], T = w.shape[2], S = w.shape[3];
  double total = 0.0;
  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t t = 0; t < T; ++t)
      for (std::size_t j = 0; j < S; ++j) {
        const double wa = w.values[((b * h + a) * T + t) * S + j], wc = w.values[((b * h + c) * T + t) * S + j];
        total += 0.5 * std::fabs(wa - wc);
      }
  return total / static_cast<double>(B * T);
}

double largest_tv(const report::TensorItem& w) {
  double largest = 0.0;
  for (std::size_t a = 0; a < w.shape[1]; ++a)
    for (std::size_t c = a + 1; c < w.shape[1]; ++c) largest = std::max(largest, tv_between_heads(w, a, c));
  return largest;
}

}  // namespace

TEST_CASE("heads: how different the heads are, and the preset the default run points to") {
  // The default run: Raschka's 2 heads of d_k = 1 spread their weight almost alike.
  const report::Report r = run_lesson("heads");
  const report::TensorItem& w = tensor(r, "attn_weights");
  REQUIRE(w.shape == Shape{2, 2, 6, 6});
  const double d = tv_between_heads(w, 0, 1);
  // Two rows by hand from the printed weights: "journey" gives 0.5 * (0.0212 + 0.0212) = 0.0212,
  // "step" 0.5 * (0.0024 + 0.0059 + 0.0058 + 0.0066 + 0.0026 + 0.0049) = 0.0141; "Your" is 0 (both
  // 1.0). The mean of all 12 rows (both batch entries) is 0.0139.
  CHECK(std::fabs(d - 0.0139) <= 5e-5);
  const report::CheckItem q = check_with(r, "do two heads attend differently here");
  CHECK(q.question);
  CHECK(std::fabs(q.value - d) <= 1e-9);
  CHECK_FALSE(q.passed);
  // The sentence that points elsewhere names the command and the number tested below.
  CHECK(q.because.find("attn lesson heads --preset phillips has pairs up to D = 0.78") != std::string::npos);

  // That command: its heads differ, by the number the pointer quotes, far more than the default's.
  const report::Report p = run_preset("phillips", "heads");
  const double largest = largest_tv(tensor(p, "attn_weights"));
  CHECK(std::fabs(largest - 0.78) <= 0.005);  // printed to 2 decimals
  CHECK(largest > 10 * d);
  const report::CheckItem pq = check_with(p, "do two heads attend differently here");
  CHECK(pq.passed);
  CHECK(std::fabs(pq.value - largest) <= 1e-9);
  CHECK(pq.because.find("--preset phillips") == std::string::npos);  // no pointer to itself
}
