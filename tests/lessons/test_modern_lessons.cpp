// The rope and gqa lessons as a learner runs them, against PyTorch 1.13 (modern_cases.json, copied
// into tests/data: rope__*, gqa__*, presets/llama__*), and heads --preset llama against
// gqa --preset llama: the two lessons describe the same Llama-3.2-3B attention block, so their
// reports must give the same shapes, weights, attention, grouping and cache figures.
//
// Legend: B batch, h query heads, h_kv key/value heads, T tokens, d_in input width, d_k head width.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <string>
#include <unistd.h>

#include "io/npy.hpp"
#include "lesson_kit/presets.hpp"
#include "report_lookup.hpp"
#include "reproduce_runner.hpp"

using namespace attn;
using namespace attn::test;
namespace fs = std::filesystem;

namespace {

std::string data(const std::string& file) { return std::string(ATTN_TEST_DATA) + "/" + file; }

// "" when the shown tensor has the fixture's shape and values within `tol`, else what differs.
std::string against(const report::TensorItem& t, const std::string& fixture, double tol) {
  const NpyArray e = read_npy(data(fixture));
  if (t.shape != e.shape) return t.name + ": shape " + shape_str(t.shape) + " vs " + fixture + " " + shape_str(e.shape);
  double worst = 0.0;
  for (std::size_t i = 0; i < e.values.size(); ++i) {
    const double d = std::fabs(static_cast<double>(t.values[i]) - e.values[i]);
    worst = std::isnan(d) ? d : std::fmax(worst, d);
  }
  if (worst <= tol) return "";
  return t.name + ": max |diff| " + std::to_string(worst) + " against " + fixture;
}

// The same for two shown tensors (two lessons' reports).
std::string against(const report::TensorItem& a, const report::TensorItem& b, double tol) {
  if (a.shape != b.shape) return a.name + " " + shape_str(a.shape) + " vs " + b.name + " " + shape_str(b.shape);
  double worst = 0.0;
  for (std::size_t i = 0; i < a.values.size(); ++i) {
    const double d = std::fabs(static_cast<double>(a.values[i]) - b.values[i]);
    worst = std::isnan(d) ? d : std::fmax(worst, d);
  }
  if (worst <= tol) return "";
  return a.name + " vs " + b.name + ": max |diff| " + std::to_string(worst);
}

// A .npy file as --input or --weights hands it to a lesson (src/cli/external_io.cpp).
ExternalTensor external(const std::string& path, const std::string& flag) {
  const NpyArray a = read_npy(path);
  return ExternalTensor{flag + " " + path, a.shape, a.values, path};
}

// The number after "name " in the header's setting: "kv_heads 8" -> 8.
std::size_t setting_value(const report::Report& r, const std::string& name) {
  for (const auto& item : r.header.setting)
    if (item.rfind(name + " ", 0) == 0) return std::stoul(item.substr(name.size() + 1));
  FAIL("no '" << name << "' in the setting");
  return 0;
}

void require_all_checks_pass(const report::Report& r) {
  for (const auto& c : checks(r)) {
    INFO(c.text << " (" << c.measure << " = " << c.value << ", bound " << c.bound << ")");
    if (!c.question) CHECK(c.passed);
  }
}

// A scratch directory for the weight files in the math layout, removed at exit.
struct Scratch {
  fs::path dir = fs::temp_directory_path() / ("attn_test_modern_" + std::to_string(::getpid()));
  Scratch() { fs::create_directories(dir); }
  ~Scratch() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
};

// The gqa fixture's four layers as --weights: PyTorch's (out, in) files as they are, or
// transposed into the math layout (in, out) in `scratch`.
void gqa_fixture_weights(LessonOptions& o, bool torch_layout, const Scratch& scratch) {
  o.weights_torch_layout = torch_layout;
  o.weights_dir = torch_layout ? std::string(ATTN_TEST_DATA) : scratch.dir.string();
  for (const std::string layer : {"W_query", "W_key", "W_value", "out_proj"}) {
    const std::string file = data("gqa__" + layer + "_weight.npy");
    if (torch_layout) {
      o.weights[layer] = external(file, "--weights");
      continue;
    }
    const NpyArray w = read_npy(file);  // (out, in)
    const std::size_t out = w.shape[0], in = w.shape[1];
    std::vector<float> t(w.values.size());  // (in, out)
    for (std::size_t r = 0; r < out; ++r)
      for (std::size_t c = 0; c < in; ++c) t[c * out + r] = w.values[r * in + c];
    const std::string path = (scratch.dir / (layer + ".npy")).string();
    write_npy(path, {in, out}, t.data());
    o.weights[layer] = external(path, "--weights");
  }
}

// Every tensor of the gqa fixture that the lesson shows, under the lesson's names.
void require_gqa_fixture(const report::Report& r) {
  CHECK(against(tensor(r, "x"), "gqa__x.npy", 0.0) == "");
  CHECK(against(tensor(r, "W_query.weight"), "gqa__W_query_weight.npy", 0.0) == "");
  CHECK(against(tensor(r, "W_key.weight"), "gqa__W_key_weight.npy", 0.0) == "");
  CHECK(against(tensor(r, "W_value.weight"), "gqa__W_value_weight.npy", 0.0) == "");
  CHECK(against(tensor(r, "out_proj.weight"), "gqa__out_proj_weight.npy", 0.0) == "");
  CHECK(against(tensor(r, "q_heads"), "gqa__q_heads.npy", 1e-6) == "");
  CHECK(against(tensor(r, "k_heads"), "gqa__k_heads.npy", 1e-6) == "");
  CHECK(against(tensor(r, "v_heads"), "gqa__v_heads.npy", 1e-6) == "");
  CHECK(against(tensor(r, "k_rep"), "gqa__k_repeated.npy", 1e-6) == "");
  CHECK(against(tensor(r, "attn_weights"), "gqa__attn_weights.npy", 1e-6) == "");
  CHECK(against(tensor(r, "context"), "gqa__context.npy", 1e-6) == "");
  CHECK(against(tensor(r, "output"), "gqa__output.npy", 1e-6) == "");
  require_all_checks_pass(r);
}

// The header's reproduce lines rebuild x and the four weights the lesson shows.
void require_reproduced(const report::Report& r) {
  const auto built = run_reproduce(r.header.reproduce);
  for (const std::string name : {"x", "W_query.weight", "W_key.weight", "W_value.weight", "out_proj.weight"}) {
    CAPTURE(name);
    REQUIRE(built.count(name));
    const auto& shown = tensor(r, name);
    CHECK(built.at(name).shape == shown.shape);
    CHECK(built.at(name).values == shown.values);
  }
}

LessonOptions rope_fixture_options() {
  // modern_cases.json, case rope: seed 3, batch 1, heads 2, seq_len 6, d_k 8, theta 10000; the
  // shifted scores use positions 5 .. 10.
  LessonOptions o;
  o.seed = 3, o.batch = 1, o.heads = 2, o.seq_len = 6;
  o.own["--d-k"] = 8, o.own["--theta"] = 10000, o.own["--shift"] = 5;
  return o;
}

}  // namespace

TEST_CASE("rope with the fixture's parameters prints PyTorch's tensors, stage by stage") {
  const auto r = run_lesson("rope", rope_fixture_options());
  CHECK(against(tensor(r, "q"), "rope__q.npy", 0.0) == "");  // (1, 2, 6, 8): the same draws
  CHECK(against(tensor(r, "k"), "rope__k.npy", 0.0) == "");
  CHECK(against(tensor(r, "cos"), "rope__cos.npy", 1e-6) == "");  // (6, 8)
  CHECK(against(tensor(r, "sin"), "rope__sin.npy", 1e-6) == "");
  CHECK(against(tensor(r, "q_rope"), "rope__q_rope_half.npy", 1e-6) == "");
  CHECK(against(tensor(r, "k_rope"), "rope__k_rope_half.npy", 1e-6) == "");
  CHECK(against(tensor(r, "q_rope_interleaved"), "rope__q_rope_interleaved.npy", 1e-6) == "");
  CHECK(against(tensor(r, "k_rope_interleaved"), "rope__k_rope_interleaved.npy", 1e-6) == "");
  CHECK(against(tensor(r, "scores"), "rope__scores_half.npy", 1e-5) == "");            // (1, 2, 6, 6)
  CHECK(against(tensor(r, "scores_shifted"), "rope__scores_shifted.npy", 1e-5) == "");  // positions 5 .. 10
  require_all_checks_pass(r);
  // The header says what was drawn, with the fixture's four axes.
  CHECK(setting_value(r, "batch") == 1);
  CHECK(setting_value(r, "heads") == 2);
  bool drawn = false;
  for (const auto& line : r.header.reproduce) drawn = drawn || line == "q = torch.rand(1, 2, 6, 8)";
  CHECK(drawn);
}

TEST_CASE("rope: --heads 1 shows the default run's numbers with the head axes, the default stays (T, d_k)") {
  const auto plain = run_lesson("rope");
  LessonOptions one;
  one.heads = 1;
  const auto with_axes = run_lesson("rope", one);
  for (const std::string name : {"q", "k", "q_rope", "k_rope", "q_rope_interleaved", "scores", "scores_shifted"}) {
    CAPTURE(name);
    const auto& a = tensor(plain, name);
    const auto& b = tensor(with_axes, name);
    CHECK(b.shape == Shape{1, 1, a.shape[0], a.shape[1]});
    CHECK(a.shape.size() == 2);
    CHECK(a.values == b.values);
  }
  CHECK(tensor(plain, "cos").shape == tensor(with_axes, "cos").shape);  // the tables serve every head
}

TEST_CASE("rope: every head and batch entry is turned by the same tables") {
  LessonOptions o;
  o.batch = 2, o.heads = 3, o.seed = 7;
  const auto r = run_lesson("rope", o);
  require_all_checks_pass(r);
  const auto& q_rope = tensor(r, "q_rope");
  REQUIRE(q_rope.shape == Shape{2, 3, 6, 8});
  // Position 0 of every (batch, head) block is q itself (cos 1, sin 0).
  const auto& q = tensor(r, "q");
  for (std::size_t block = 0; block < 6; ++block)
    for (std::size_t j = 0; j < 8; ++j) CHECK(q_rope.values[block * 48 + j] == q.values[block * 48 + j]);
}

TEST_CASE("gqa with the fixture's x (--input) and its weights drawn from seed 9 matches PyTorch") {
  LessonOptions o;
  o.input = external(data("gqa__x.npy"), "--input");  // (1, 5, 8), torch.manual_seed(8)
  o.seed = 9;                                          // W_query, W_key, W_value, out_proj, bias=False
  o.heads = 4, o.kv_heads = 2;
  const auto r = run_lesson("gqa", o);
  require_gqa_fixture(r);
  CHECK(setting_value(r, "seed") == 9);
  require_reproduced(r);
}

TEST_CASE("gqa with the fixture's x (--input) and its weights (--weights, either layout) matches PyTorch") {
  const Scratch scratch;
  for (bool torch_layout : {true, false}) {
    CAPTURE(torch_layout);
    LessonOptions o;
    o.input = external(data("gqa__x.npy"), "--input");
    gqa_fixture_weights(o, torch_layout, scratch);
    const auto r = run_lesson("gqa", o);  // h 4 by default; h_kv 2 read from W_key's 4 rows of d_k 2
    require_gqa_fixture(r);
    CHECK(setting_value(r, "kv_heads") == 2);
    for (const auto& item : r.header.setting) CHECK(item.rfind("seed ", 0) != 0);  // nothing drawn
    require_reproduced(r);
  }
}

TEST_CASE("gqa --weights: the kv heads come from W_key, and a W_key that does not fit is refused") {
  const Scratch scratch;
  LessonOptions o;
  o.input = external(data("gqa__x.npy"), "--input");
  gqa_fixture_weights(o, true, scratch);
  SUBCASE("--kv-heads that disagrees with W_key.npy") {
    o.kv_heads = 1;
    CHECK_THROWS_WITH_AS(run_lesson("gqa", o), doctest::Contains("--kv-heads disagrees with --weights"), UsageError);
  }
  SUBCASE("one kv head (MQA): W_key and W_value of 2 rows") {
    for (const std::string layer : {"W_key", "W_value"}) {
      ExternalTensor& t = o.weights[layer];
      t.shape = {2, 8};
      t.values.resize(16);
    }
    const auto r = run_lesson("gqa", o);
    CHECK(setting_value(r, "kv_heads") == 1);
    CHECK(tensor(r, "k_heads").shape == Shape{1, 1, 5, 2});
    require_all_checks_pass(r);
  }
  SUBCASE("a W_key width that is not whole heads of d_k") {
    ExternalTensor& t = o.weights["W_key"];
    t.shape = {3, 8};
    t.values.resize(24);
    CHECK_THROWS_WITH_AS(run_lesson("gqa", o), doctest::Contains("not a whole number of heads"), UsageError);
  }
}

TEST_CASE("heads --preset llama and gqa --preset llama describe the same Llama-3.2-3B attention") {
  LessonOptions ho, go;
  apply_preset("llama", "heads", false, ho);
  apply_preset("llama", "gqa", false, go);
  const auto heads = run_lesson("heads", ho);
  const auto gqa = run_lesson("gqa", go);

  // The same sizes in both headers.
  for (const std::string item : {"batch", "tokens", "d_in", "heads", "kv_heads", "d_k", "seed"}) {
    CAPTURE(item);
    CHECK(setting_value(heads, item) == setting_value(gqa, item));
  }
  // The same x and the same four layers, under the model's names: q_proj Linear(3072 -> 3072),
  // k_proj and v_proj Linear(3072 -> 1024), o_proj; every value identical.
  for (const std::string name : {"x", "q_proj.weight", "k_proj.weight", "v_proj.weight", "o_proj.weight"}) {
    CAPTURE(name);
    CHECK(against(tensor(heads, name), tensor(gqa, name), 0.0) == "");
  }
  // The same attention: heads fills -1e9 where gqa masks with -inf, copies kv heads where gqa
  // reads them in place; float32 rounding apart, the numbers agree.
  CHECK(against(tensor(heads, "queries"), tensor(gqa, "queries"), 0.0) == "");
  CHECK(against(tensor(heads, "keys"), tensor(gqa, "keys"), 0.0) == "");
  CHECK(against(tensor(heads, "attn_weights"), tensor(gqa, "attn_weights"), 1e-6) == "");
  CHECK(against(tensor(heads, "context_vec"), tensor(gqa, "context"), 1e-6) == "");
  CHECK(against(tensor(heads, "output"), tensor(gqa, "output"), 1e-5) == "");
  // ... and PyTorch's, from the fixture made for heads --preset llama.
  CHECK(against(tensor(gqa, "attn_weights"), "presets/llama__attn_weights.npy", 1e-5) == "");

  // The same grouping: heads lists the query heads of each kv head, gqa the kv head of each query head.
  std::map<std::size_t, std::size_t> from_heads, from_gqa;  // query head -> kv head
  for (const auto& row : table_with(heads, "query heads reading it").rows) {
    std::string served = row[1];
    for (std::size_t start = 0, comma; start < served.size(); start = comma + 2) {
      comma = served.find(',', start);
      if (comma == std::string::npos) comma = served.size();
      from_heads[std::stoul(served.substr(start, comma - start))] = std::stoul(row[0]);
    }
  }
  const std::size_t h = setting_value(gqa, "heads"), h_kv = setting_value(gqa, "kv_heads");
  for (const auto& row : table_with(gqa, "reads kv head i // " + std::to_string(h / h_kv)).rows)
    from_gqa[std::stoul(row[0])] = std::stoul(row[1]);
  CHECK(from_heads.size() == h);
  CHECK(from_heads == from_gqa);

  // The same cache: gqa's Llama row follows from heads' k_proj (h_kv * d_k rows) over the model's
  // layers in bf16, and its one-layer float32 row from the same tensor.
  const LlamaSizes& L = llama_3_2_3b();
  const std::size_t kv_rows = tensor(heads, "k_proj.weight").shape[0];  // h_kv * d_k
  CHECK(kv_rows == setting_value(heads, "kv_heads") * setting_value(heads, "d_k"));
  auto digits = [](std::string s) {
    s.erase(std::remove(s.begin(), s.end(), ','), s.end());
    return std::stoull(s);
  };
  bool llama_row = false, layer_row = false;
  for (const auto& row : table_with(gqa, "MHA / this").rows) {
    if (row[0].rfind("Llama-3.2-3B", 0) == 0 && row[1] == "GQA (real)") {
      llama_row = true;
      CHECK(std::stoul(row[2]) == setting_value(heads, "kv_heads"));
      CHECK(digits(row[4]) == 2 * L.layers * kv_rows * L.dtype_bytes);
      CHECK(digits(row[4]) == 114688);  // the figure published for the model
    }
    if (row[0].rfind("this lesson", 0) == 0 && row[1] == "GQA") {
      layer_row = true;
      CHECK(digits(row[4]) == 2 * kv_rows * 4);
    }
  }
  CHECK(llama_row);
  CHECK(layer_row);
  CHECK(check_with(gqa, "this layer is Llama-3.2-3B's").passed);
  require_all_checks_pass(gqa);
}

TEST_CASE("--preset llama configures gqa with the sizes it gives heads, and explicit options still win") {
  LessonOptions o;
  o.kv_heads = 24;  // the learner's choice: multi-head attention at Llama's size
  apply_preset("llama", "gqa", false, o);
  CHECK(o.kv_heads.value() == 24);
  CHECK(o.heads.value() == llama_3_2_3b().heads);
  CHECK(o.d_in.value() == llama_3_2_3b().hidden);
  CHECK(o.shapes_only);
  CHECK_FALSE(o.preset_notes.empty());
}
