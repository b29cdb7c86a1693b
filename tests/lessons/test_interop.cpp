// Tensors handed in from outside and the article presets, at the lesson layer: --weights in
// PyTorch's (out, in) layout reproduces the mha_* fixtures (PyTorch 1.13) to 1e-5, the math
// layout gives the same numbers from transposed files, --input sets the sizes, refusals name the
// file and the shapes, and each preset gives the article's shapes.
#include <doctest/doctest.h>

#include <cmath>

#include "io/npy.hpp"
#include "lesson_kit/presets.hpp"
#include "lesson_kit/registry.hpp"
#include "report_lookup.hpp"

using namespace attn;
using namespace attn::test;

namespace {

ExternalTensor fixture(const std::string& file) {
  const NpyArray a = read_npy(std::string(ATTN_TEST_DATA) + "/" + file);
  return ExternalTensor{file, a.shape, a.values};
}

// The transpose of a 2-D external tensor: the same weight in the other layout.
ExternalTensor transposed(const ExternalTensor& t) {
  ExternalTensor out{t.source, {t.shape[1], t.shape[0]}, std::vector<float>(t.values.size())};
  for (std::size_t i = 0; i < t.shape[0]; ++i)
    for (std::size_t j = 0; j < t.shape[1]; ++j) out.values[j * t.shape[0] + i] = t.values[i * t.shape[1] + j];
  return out;
}

// Options that feed a mha_* fixture case through the heads lesson.
LessonOptions fixture_options(const std::string& c, std::size_t heads, bool causal, bool torch_layout) {
  LessonOptions o;
  o.input = fixture(c + "__x.npy");
  o.heads = heads;
  o.causal = causal;
  o.weights_dir = "fixtures";
  o.weights_torch_layout = torch_layout;
  for (const char* layer : {"W_query", "W_key", "W_value", "out_proj"}) {
    const ExternalTensor w = fixture(c + "__" + layer + "_weight.npy");
    o.weights[layer] = torch_layout ? w : transposed(w);
    const std::string bias = c + "__" + layer + "_bias.npy";
    try {
      o.weights[std::string(layer) + "_bias"] = fixture(bias);
    } catch (const NpyError&) {
      // a layer without bias in this case
    }
  }
  return o;
}

double max_diff(const report::TensorItem& t, const std::string& fixture_file) {
  const NpyArray expected = read_npy(std::string(ATTN_TEST_DATA) + "/" + fixture_file);
  REQUIRE(t.shape == expected.shape);
  double worst = 0.0;
  for (std::size_t i = 0; i < t.values.size(); ++i)
    worst = std::fmax(worst, std::fabs(static_cast<double>(t.values[i]) - expected.values[i]));
  return worst;
}

}  // namespace

TEST_CASE("--weights-layout torch reproduces PyTorch's multi-head attention (mha fixtures)") {
  struct Case {
    const char* name;
    std::size_t heads;
    bool causal;
  };
  for (const Case c : {Case{"mha_causal_nobias", 3, true}, Case{"mha_full_bias", 4, false}}) {
    CAPTURE(c.name);
    const auto r = run_lesson("heads", fixture_options(c.name, c.heads, c.causal, true));
    const std::string prefix = std::string(c.name) + "__";
    CHECK(max_diff(tensor(r, "queries"), prefix + "q.npy") <= 1e-5);
    CHECK(max_diff(tensor(r, "q_heads"), prefix + "q_heads.npy") <= 1e-5);
    CHECK(max_diff(tensor(r, "attn_weights"), prefix + "attn_weights.npy") <= 1e-5);
    CHECK(max_diff(tensor(r, "context_heads"), prefix + "context_heads.npy") <= 1e-5);
    CHECK(max_diff(tensor(r, "context_vec"), prefix + "context.npy") <= 1e-5);
    CHECK(max_diff(tensor(r, "output"), prefix + "output.npy") <= 1e-5);
    // The same weights written the math's way round, (in, out), give the same output.
    const auto math = run_lesson("heads", fixture_options(c.name, c.heads, c.causal, false));
    CHECK(max_diff(tensor(math, "output"), prefix + "output.npy") <= 1e-5);
  }
}

TEST_CASE("--weights refusals name the file, the expected shape and the actual one") {
  LessonOptions missing = fixture_options("mha_full_bias", 4, false, true);
  missing.weights.erase("W_value");
  CHECK_THROWS_WITH_AS(run_lesson("heads", missing), doctest::Contains("W_value.npy of shape (8, 8) (out, in)"),
                       UsageError);
  LessonOptions misshaped = fixture_options("mha_full_bias", 4, false, true);
  misshaped.weights["W_key"] = fixture("mha_causal_nobias__W_key_weight.npy");  // (6, 4)
  CHECK_THROWS_WITH_AS(run_lesson("heads", misshaped), doctest::Contains("(8, 8) (out, in) vs (6, 4)"), UsageError);
  LessonOptions bad_bias = fixture_options("mha_full_bias", 4, false, true);
  bad_bias.weights["W_query_bias"].shape = {4, 2};
  CHECK_THROWS_WITH_AS(run_lesson("heads", bad_bias), doctest::Contains("W_query_bias.npy has the wrong shape"),
                       UsageError);
  LessonOptions d_out = fixture_options("mha_full_bias", 4, false, true);
  d_out.d_out = 6;
  CHECK_THROWS_WITH_AS(run_lesson("heads", d_out), doctest::Contains("--d-out disagrees with --weights"), UsageError);
}

TEST_CASE("--input sets the sizes, disagreeing size options are refused") {
  LessonOptions o;
  o.input = ExternalTensor{"--input m.csv", {4, 5}, std::vector<float>(20, 0.5f)};
  const auto r = run_lesson("causal", o);
  CHECK(tensor(r, "x").shape == Shape{4, 5});
  CHECK(tensor(r, "attn_weights").shape == Shape{4, 4});
  CHECK(tensor(r, "x").values[0] == 0.5f);

  LessonOptions batch = o;
  batch.input = ExternalTensor{"--input b.npy", {2, 3, 4}, std::vector<float>(24, 0.25f)};
  const auto rb = run_lesson("self-attention", batch);
  CHECK(tensor(rb, "context_vec").shape == Shape{2, 3, 2});

  for (auto set : {+[](LessonOptions& x) { x.d_in = 7; }, +[](LessonOptions& x) { x.seq_len = 9; },
                   +[](LessonOptions& x) { x.tokens = std::vector<std::string>{"a", "b"}; }}) {
    LessonOptions bad = o;
    set(bad);
    CHECK_THROWS_AS(run_lesson("causal", bad), UsageError);
  }
  LessonOptions wrong_batch = batch;
  wrong_batch.batch = 5;
  CHECK_THROWS_WITH_AS(run_lesson("causal", wrong_batch), doctest::Contains("--batch disagrees with --input"), UsageError);
  LessonOptions rank4 = o;
  rank4.input = ExternalTensor{"--input r.npy", {1, 1, 2, 2}, std::vector<float>(4, 0.0f)};
  CHECK_THROWS_WITH_AS(run_lesson("heads", rank4), doctest::Contains("(T, d_in) or (B, T, d_in) vs (1, 1, 2, 2)"),
                       UsageError);
}

TEST_CASE("several --tokens sentences make a batch, one sentence per entry") {
  LessonOptions o;
  o.tokens = std::vector<std::string>{"a", "b", "c"};
  o.more_sentences = {{"d", "e", "f"}};
  const auto r = run_lesson("heads", o);
  const auto& x = tensor(r, "x");
  CHECK(x.shape == Shape{2, 3, 3});
  CHECK(x.row_labels == report::Labels{"a", "b", "c", "d", "e", "f"});
  CHECK(x.col_labels.empty());
  LessonOptions ragged = o;
  ragged.more_sentences = {{"d", "e"}};
  CHECK_THROWS_WITH_AS(run_lesson("heads", ragged), doctest::Contains("same number of words"), UsageError);
}

TEST_CASE("--kv-heads: grouped keys and values, equal to PyTorch's repeat_interleave") {
  LessonOptions o;
  o.heads = 4;
  o.d_out = 8;
  o.kv_heads = 2;
  o.batch = 1;
  const auto r = run_lesson("heads", o);
  CHECK(tensor(r, "keys").shape == Shape{1, 6, 4});
  CHECK(tensor(r, "k_heads").shape == Shape{1, 4, 6, 2});
  // torch.manual_seed(123); W_query = nn.Linear(3, 8, bias=False); W_key, W_value = nn.Linear(3, 4,
  // bias=False); out_proj = nn.Linear(8, 8); k, v .view(1, 6, 2, 2).transpose(1, 2)
  // .repeat_interleave(2, dim=1); causal; output[0, 5] printed by PyTorch 1.13:
  const std::vector<float> row = {-0.101121f, -0.010922f, 0.056177f, 0.18599f, -0.501162f, -0.010046f, -0.166028f, 0.399627f};
  const auto& out = tensor(r, "output");
  for (std::size_t j = 0; j < 8; ++j) CHECK(std::fabs(out.values[5 * 8 + j] - row[j]) <= 1e-5f);
  const auto separate = check_with(r, "equals the fused context_vec");
  CHECK(separate.value == 0.0);
  CHECK(separate.passed);
  o.kv_heads = 3;
  CHECK_THROWS_WITH_AS(run_lesson("heads", o), doctest::Contains("--kv-heads must divide --heads"), UsageError);
}

TEST_CASE("presets give each article's shapes") {
  SUBCASE("phillips: (3, 6, 8) -> (3, 6, 4, 2) -> (3, 4, 6, 2) -> (3, 4, 6, 6) -> (3, 6, 8)") {
    LessonOptions o;
    apply_preset("phillips", "heads", false, o);
    const auto r = run_lesson("heads", o);
    CHECK(tensor(r, "x").shape == Shape{3, 6, 8});
    CHECK(tensor(r, "queries.view(B, T, h, d_k)").shape == Shape{3, 6, 4, 2});
    CHECK(tensor(r, "q_heads").shape == Shape{3, 4, 6, 2});
    CHECK(tensor(r, "attn_scores").shape == Shape{3, 4, 6, 6});
    CHECK(tensor(r, "output").shape == Shape{3, 6, 8});
    CHECK(has_tensor(r, "Wk.bias"));
    CHECK(tensor(r, "x").row_labels.at(6) == "this");
    // No mask: a first row attends to every token.
    CHECK(tensor(r, "attn_weights").values.at(5) > 0.0f);
  }
  SUBCASE("rakesh: the literal x (1, 3, 6), 2 heads of 3, causal") {
    LessonOptions o;
    apply_preset("rakesh", "heads", false, o);
    const auto r = run_lesson("heads", o);
    const auto& x = tensor(r, "x");
    CHECK(x.shape == Shape{1, 3, 6});
    CHECK(x.values.at(9) == doctest::Approx(0.10f));
    CHECK(tensor(r, "q_heads").shape == Shape{1, 2, 3, 3});
    CHECK(tensor(r, "attn_weights").values.at(1) == 0.0f);  // causal: the first row sees only itself
  }
  SUBCASE("llama: 24 query heads of 128, 8 key/value heads, weights (1, 24, 9, 9), shapes only") {
    LessonOptions o;
    apply_preset("llama", "heads", false, o);
    CHECK(o.shapes_only);
    const auto r = run_lesson("heads", o);
    CHECK(tensor(r, "x").shape == Shape{1, 9, 3072});
    CHECK(tensor(r, "keys").shape == Shape{1, 9, 1024});
    CHECK(tensor(r, "k_heads").shape == Shape{1, 24, 9, 128});
    CHECK(tensor(r, "attn_weights").shape == Shape{1, 24, 9, 9});
    CHECK(tensor(r, "x").row_labels.front() == "<|begin_of_text|>");
    LessonOptions values;
    apply_preset("llama", "heads", true, values);
    CHECK_FALSE(values.shapes_only);
  }
  SUBCASE("raschka: the book's seeds per section") {
    for (const char* lesson : {"self-attention", "causal", "heads"}) {
      CAPTURE(lesson);
      LessonOptions o;
      apply_preset("raschka", lesson, false, o);
      CHECK(o.seed.value() == (std::string(lesson) == "causal" ? 789u : 123u));
      CHECK(!o.preset_notes.empty());
    }
  }
  SUBCASE("explicit options win over the preset") {
    LessonOptions o;
    o.heads = 2;
    apply_preset("phillips", "heads", false, o);
    CHECK(o.heads.value() == 2);
  }
  SUBCASE("refusals") {
    LessonOptions o;
    CHECK_THROWS_WITH_AS(apply_preset("llama", "causal", false, o), doctest::Contains("does not configure lesson 'causal'"),
                         UsageError);
    CHECK_THROWS_WITH_AS(apply_preset("gpt2", "heads", false, o), doctest::Contains("one of raschka, phillips, rakesh, llama, evolution"),
                         UsageError);
  }
}

TEST_CASE("--input gives the RNN lessons their source embeddings (S, d_in)") {
  LessonOptions o;
  o.input = ExternalTensor{"--input src.txt", {3, 4}, std::vector<float>(12, 0.25f)};
  for (const char* lesson : {"bottleneck", "bahdanau", "luong"}) {
    CAPTURE(lesson);
    const auto r = run_lesson(lesson, o);
    const auto& x = tensor(r, "x");
    CHECK(x.shape == Shape{3, 4});
    CHECK(x.row_labels == report::Labels{"x1", "x2", "x3"});
    CHECK(x.values[11] == 0.25f);
  }
  LessonOptions labelled = o;
  labelled.src = std::vector<std::string>{"un", "deux", "trois"};
  CHECK(tensor(run_lesson("luong", labelled), "x").row_labels.at(1) == "deux");
  LessonOptions wrong = o;
  wrong.src = std::vector<std::string>{"un", "deux"};
  CHECK_THROWS_WITH_AS(run_lesson("bahdanau", wrong), doctest::Contains("--src does not label every row of --input"),
                       UsageError);
  LessonOptions batch = o;
  batch.input = ExternalTensor{"--input b.npy", {2, 3, 4}, std::vector<float>(24, 0.0f)};
  CHECK_THROWS_WITH_AS(run_lesson("bottleneck", batch), doctest::Contains("(S, d_in) vs (2, 3, 4)"), UsageError);
}
