// Heads that are not d_in wide together (num_heads * head_dim != hidden_size, as in Gemma):
// gqa and kv-cache with --d-k other than d_in / h, heads with an out_proj from d_out back to
// d_in (--out-proj-width), against PyTorch 1.13 (tests/data/headwidth, made by make_fixture.py
// there: d_in 12, 4 heads of d_k 6, so queries 24 wide and out_proj (12, 24)); the case of
// W_query (24, 12) and out_proj (12, 24) through --weights; the reproduce lines; the KV cache
// bytes per token; and the refusals, word for word.
//
// Legend: B batch, T tokens, d_in input width, h query heads, h_kv key/value heads, d_k head width,
// d_out = h * d_k.
#include <doctest/doctest.h>

#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "io/npy.hpp"
#include "report_lookup.hpp"
#include "reproduce_runner.hpp"

using namespace attn;
using namespace attn::test;
namespace fs = std::filesystem;

namespace {

std::string data(const std::string& file) { return std::string(ATTN_TEST_DATA) + "/headwidth/" + file; }

// A .npy file as --input or --weights hands it to a lesson (src/cli/external_io.cpp).
ExternalTensor external(const std::string& path, const std::string& flag) {
  const NpyArray a = read_npy(path);
  return ExternalTensor{flag + " " + path, a.shape, a.values, path};
}

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

bool in_setting(const report::Report& r, const std::string& item) {
  for (const auto& s : r.header.setting)
    if (s == item) return true;
  return false;
}

void require_all_checks_pass(const report::Report& r) {
  std::size_t n = 0;
  for (const auto& c : checks(r)) {
    if (c.question) continue;
    INFO(c.text << " (" << c.measure << " = " << c.value << ", bound " << c.bound << ")");
    CHECK(c.passed);
    ++n;
  }
  CHECK(n >= 3);
}

// The header's reproduce lines rebuild x and the four layers the lesson shows, exactly.
void require_reproduced(const report::Report& r, const std::vector<std::string>& names) {
  const auto built = run_reproduce(r.header.reproduce);
  for (const auto& name : names) {
    CAPTURE(name);
    REQUIRE(built.count(name));
    const auto& shown = tensor(r, name);
    CHECK(built.at(name).shape == shown.shape);
    CHECK(built.at(name).values == shown.values);
  }
}

// A scratch directory for weight files in the math layout, removed at exit.
struct Scratch {
  fs::path dir = fs::temp_directory_path() / ("attn_test_head_width_" + std::to_string(::getpid()));
  Scratch() { fs::create_directories(dir); }
  ~Scratch() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
};

// The fixture's layers in `folder` (gqa/ or heads/) as --weights: PyTorch's (out, in) files as
// they are, or transposed into the math layout (in, out) in `scratch`.
void fixture_weights(LessonOptions& o, const std::string& folder, const std::vector<std::string>& files,
                     bool torch_layout, const Scratch& scratch) {
  o.weights_torch_layout = torch_layout;
  o.weights_dir = torch_layout ? data(folder) : scratch.dir.string();
  for (const auto& name : files) {
    const std::string file = data(folder + "/" + name + ".npy");
    const NpyArray w = read_npy(file);
    if (torch_layout || w.shape.size() == 1) {  // a bias is (out,) in either layout
      o.weights[name] = external(file, "--weights");
      continue;
    }
    const std::size_t out = w.shape[0], in = w.shape[1];
    std::vector<float> t(w.values.size());  // (in, out)
    for (std::size_t r = 0; r < out; ++r)
      for (std::size_t c = 0; c < in; ++c) t[c * out + r] = w.values[r * in + c];
    const std::string path = (scratch.dir / (name + ".npy")).string();
    write_npy(path, {in, out}, t.data());
    o.weights[name] = external(path, "--weights");
  }
}

const std::vector<std::string> kGqaLayers = {"W_query", "W_key", "W_value", "out_proj"};
const std::vector<std::string> kHeadsLayers = {"W_query", "W_key", "W_value", "out_proj", "out_proj_bias"};

// gqa over the fixture's x: d_in 12, 4 query heads, 2 kv heads.
LessonOptions gqa_options() {
  LessonOptions o;
  o.input = external(data("x.npy"), "--input");  // (1, 5, 12)
  o.heads = 4, o.kv_heads = 2;
  return o;
}

void require_gqa_fixture(const report::Report& r) {
  CHECK(against(tensor(r, "x"), "x.npy", 0.0) == "");
  CHECK(against(tensor(r, "W_query.weight"), "gqa/W_query.npy", 0.0) == "");  // (24, 12)
  CHECK(against(tensor(r, "W_key.weight"), "gqa/W_key.npy", 0.0) == "");      // (12, 12)
  CHECK(against(tensor(r, "W_value.weight"), "gqa/W_value.npy", 0.0) == "");
  CHECK(against(tensor(r, "out_proj.weight"), "gqa/out_proj.npy", 0.0) == "");  // (12, 24)
  CHECK(tensor(r, "queries").shape == Shape{1, 5, 24});
  CHECK(tensor(r, "keys").shape == Shape{1, 5, 12});
  CHECK(against(tensor(r, "q_heads"), "gqa_expected/q_heads.npy", 1e-6) == "");
  CHECK(against(tensor(r, "k_heads"), "gqa_expected/k_heads.npy", 1e-6) == "");
  CHECK(against(tensor(r, "v_heads"), "gqa_expected/v_heads.npy", 1e-6) == "");
  CHECK(against(tensor(r, "k_rep"), "gqa_expected/k_repeated.npy", 1e-6) == "");
  CHECK(against(tensor(r, "attn_weights"), "gqa_expected/attn_weights.npy", 1e-6) == "");
  CHECK(against(tensor(r, "context"), "gqa_expected/context.npy", 1e-6) == "");
  CHECK(against(tensor(r, "output"), "gqa_expected/output.npy", 1e-6) == "");
  CHECK(in_setting(r, "d_in 12"));
  CHECK(in_setting(r, "heads 4"));
  CHECK(in_setting(r, "kv_heads 2"));
  CHECK(in_setting(r, "d_k 6"));
  require_all_checks_pass(r);
}

// kv-cache over the same layer: every decoded row, the final cache and the full pass.
void require_kv_cache_fixture(const report::Report& r) {
  CHECK(against(tensor(r, "W_query.weight"), "gqa/W_query.npy", 0.0) == "");
  CHECK(against(tensor(r, "out_proj.weight"), "gqa/out_proj.npy", 0.0) == "");
  CHECK(against(tensor(r, "output_full"), "gqa_expected/output.npy", 1e-6) == "");
  CHECK(against(tensor(r, "attn_weights_full"), "gqa_expected/attn_weights.npy", 1e-6) == "");
  CHECK(against(tensor(r, "output_incremental"), "gqa_expected/output_incremental.npy", 1e-5) == "");
  CHECK(against(tensor(r, "cache_k"), "gqa_expected/cache_k.npy", 1e-5) == "");  // the last: after every step
  CHECK(against(tensor(r, "cache_v"), "gqa_expected/cache_v.npy", 1e-5) == "");
  CHECK(tensor(r, "q").shape == Shape{1, 4, 1, 6});
  CHECK(tensor(r, "output_t").shape == Shape{1, 1, 12});
  CHECK(in_setting(r, "d_k 6"));
  require_all_checks_pass(r);
}

}  // namespace

TEST_CASE("gqa --d-k 6 over d_in 12: PyTorch's tensors, the weights drawn from seed 9") {
  LessonOptions o = gqa_options();
  o.seed = 9;
  o.own["--d-k"] = 6;
  const report::Report r = run_lesson("gqa", o);
  require_gqa_fixture(r);
  require_reproduced(r, {"x", "W_query.weight", "W_key.weight", "W_value.weight", "out_proj.weight"});
  // The KV cache table counts d_k = 6, not d_in / h = 3: 2 * h_kv * d_k * 4 bytes for one layer.
  const report::TableItem& cache = table_with(r, "MHA / this");
  REQUIRE(cache.rows.size() >= 3);
  CHECK(cache.rows[0][4] == "192");  // MHA: 2 * 4 * 6 * 4
  CHECK(cache.rows[1][4] == "96");   // GQA: 2 * 2 * 6 * 4
  CHECK(cache.rows[2][4] == "48");   // MQA: 2 * 1 * 6 * 4
}

TEST_CASE("gqa through --weights: W_query (24, 12) and out_proj (12, 24) give d_k 6 without --d-k") {
  const Scratch scratch;
  for (bool torch_layout : {true, false}) {
    CAPTURE(torch_layout);
    LessonOptions o = gqa_options();
    o.kv_heads.reset();  // read from W_key's width: 12 = 2 heads of 6
    fixture_weights(o, "gqa", kGqaLayers, torch_layout, scratch);
    const report::Report r = run_lesson("gqa", o);
    require_gqa_fixture(r);
    require_reproduced(r, {"x", "W_query.weight", "W_key.weight", "W_value.weight", "out_proj.weight"});
    o.own["--d-k"] = 6;  // the same when given, and agreeing
    const report::Report given = run_lesson("gqa", o);
    CHECK(tensor(given, "output").values == tensor(r, "output").values);
  }
}

TEST_CASE("kv-cache --d-k 6 decodes PyTorch's rows and cache, from seed 9 or from --weights") {
  SUBCASE("seed 9") {
    LessonOptions o = gqa_options();
    o.seed = 9;
    o.own["--d-k"] = 6;
    const report::Report r = run_lesson("kv-cache", o);
    require_kv_cache_fixture(r);
    require_reproduced(r, {"x", "W_query.weight", "W_key.weight", "W_value.weight", "out_proj.weight"});
  }
  SUBCASE("--weights, torch layout, no --d-k: d_k from W_query.npy") {
    const Scratch scratch;
    LessonOptions o = gqa_options();
    o.kv_heads.reset();
    fixture_weights(o, "gqa", kGqaLayers, true, scratch);
    const report::Report r = run_lesson("kv-cache", o);
    require_kv_cache_fixture(r);
    CHECK(in_setting(r, "kv_heads 2"));
  }
  SUBCASE("a prompt, and RoPE on heads of 6") {
    LessonOptions o = gqa_options();
    o.seed = 9;
    o.own["--d-k"] = 6;
    o.own["--prompt-len"] = 2;
    const report::Report r = run_lesson("kv-cache", o);
    require_kv_cache_fixture(r);
    o.own["--prompt-len"] = 0;
    o.own["--rope-theta"] = 10000;
    require_all_checks_pass(run_lesson("kv-cache", o));
  }
}

TEST_CASE("kv-cache's costs and bytes follow d_k, not d_in / h") {
  LessonOptions o;
  o.d_in = 12, o.heads = 4, o.kv_heads = 2, o.seq_len = 5;
  o.own["--d-k"] = 6;
  const report::Report r = run_lesson("kv-cache", o);
  require_all_checks_pass(r);
  // Per row: q 12 * 24, k and v 2 * 12 * 12, out_proj 24 * 12 = 864; each key read: 2 * 4 * 6 = 48.
  // All five cached steps: 5 * 864 + 48 * (1 + 2 + 3 + 4 + 5) = 5,040 (d_k 3 would give 2,520).
  const report::TableItem& totals = table_with(r, "without / with");  // the last: whole generations
  REQUIRE(!totals.rows.empty());
  CHECK(totals.rows[0][1] == "5");
  CHECK(totals.rows[0][2] == "5,040");
  // The cache holds 2 * B * h_kv * T * d_k = 2 * 1 * 2 * 5 * 6 numbers.
  bool said = false;
  for (const auto& s : r.stages())
    for (const auto& n : notes(s)) said = said || n.find("2 * B * h_kv * T * d_k = 120 numbers") != std::string::npos;
  CHECK(said);
}

TEST_CASE("heads --out-proj-width 12: out_proj from d_out 24 back to d_in 12, as PyTorch") {
  LessonOptions o;
  o.input = external(data("x.npy"), "--input");
  o.d_out = 24, o.heads = 4, o.seed = 123;
  o.own["--out-proj-width"] = 12;
  const report::Report r = run_lesson("heads", o);
  CHECK(against(tensor(r, "W_query.weight"), "heads/W_query.npy", 0.0) == "");
  CHECK(against(tensor(r, "out_proj.weight"), "heads/out_proj.npy", 0.0) == "");  // (12, 24)
  CHECK(against(tensor(r, "out_proj.bias"), "heads/out_proj_bias.npy", 0.0) == "");
  CHECK(against(tensor(r, "q_heads"), "heads_expected/q_heads.npy", 1e-6) == "");
  CHECK(against(tensor(r, "attn_weights"), "heads_expected/attn_weights.npy", 1e-6) == "");
  CHECK(against(tensor(r, "context_vec"), "heads_expected/context_vec.npy", 1e-6) == "");
  CHECK(against(tensor(r, "output"), "heads_expected/output.npy", 1e-6) == "");
  CHECK(in_setting(r, "out_proj_width 12"));
  bool equation = false;  // the weights stage names the layer as PyTorch builds it
  for (const auto& s : r.stages()) equation = equation || s.equation.find("out_proj = nn.Linear(d_out, d_in)") != std::string::npos;
  CHECK(equation);
  require_all_checks_pass(r);
  require_reproduced(r, {"x", "W_query.weight", "W_key.weight", "W_value.weight", "out_proj.weight", "out_proj.bias"});
}

TEST_CASE("heads through --weights: W_query (24, 12) and out_proj (12, 24) without --out-proj-width") {
  const Scratch scratch;
  for (bool torch_layout : {true, false}) {
    CAPTURE(torch_layout);
    LessonOptions o;
    o.input = external(data("x.npy"), "--input");
    o.heads = 4;  // d_out 24 from W_query.npy, out_proj's width 12 from out_proj.npy
    fixture_weights(o, "heads", kHeadsLayers, torch_layout, scratch);
    const report::Report r = run_lesson("heads", o);
    CHECK(in_setting(r, "d_out 24"));
    CHECK(in_setting(r, "d_k 6"));
    CHECK(in_setting(r, "out_proj_width 12"));
    CHECK(against(tensor(r, "out_proj.weight"), "heads/out_proj.npy", 0.0) == "");
    CHECK(against(tensor(r, "context_vec"), "heads_expected/context_vec.npy", 1e-6) == "");
    CHECK(against(tensor(r, "output"), "heads_expected/output.npy", 1e-6) == "");
    require_all_checks_pass(r);
    require_reproduced(r, {"x", "W_query.weight", "out_proj.weight", "out_proj.bias"});
  }
}

TEST_CASE("heads keeps the book's square out_proj unless told otherwise") {
  LessonOptions o;
  o.d_out = 8, o.heads = 2;
  const report::Report r = run_lesson("heads", o);
  CHECK(tensor(r, "out_proj.weight").shape == Shape{8, 8});
  CHECK(tensor(r, "output").shape == Shape{2, 6, 8});
  for (const auto& item : r.header.setting) CHECK(item.rfind("out_proj_width", 0) != 0);
  o.own["--out-proj-width"] = 8;  // d_out itself: the same run
  const report::Report same = run_lesson("heads", o);
  CHECK(tensor(same, "output").values == tensor(r, "output").values);
  CHECK(same.header.setting == r.header.setting);
}

TEST_CASE("refusals of head widths name the real constraint, word for word") {
  auto refused = [](const std::string& lesson, const LessonOptions& o) {
    try {
      run_lesson(lesson, o);
    } catch (const UsageError& e) {
      return std::string(e.what());
    }
    return std::string("no refusal");
  };
  const Scratch scratch;
  for (const std::string lesson : {"gqa", "kv-cache"}) {
    CAPTURE(lesson);
    LessonOptions o;
    o.d_in = 12, o.heads = 5;
    CHECK(refused(lesson, o) ==
          "--heads must divide --d-in when --d-k is not given (d_k = d_in / heads); or give --d-k "
          "(--heads: a divisor of 12 vs 5)");
    o.own["--d-k"] = 3;  // five heads of 3 over d_in 12: fine, h_kv 5 (h is odd)
    const report::Report r = run_lesson(lesson, o);
    CHECK(in_setting(r, "kv_heads 5"));
    CHECK(in_setting(r, "d_k 3"));
    o = {};
    o.heads = 4, o.kv_heads = 3;
    CHECK(refused(lesson, o) == "--kv-heads must divide --heads (--kv-heads: a divisor of 4 vs 3)");
    o.own["--d-k"] = 5;  // the head width does not change which kv heads fit
    CHECK(refused(lesson, o) == "--kv-heads must divide --heads (--kv-heads: a divisor of 4 vs 3)");

    // --weights: W_query (24, 12), torch layout.
    o = gqa_options();
    o.kv_heads.reset();
    fixture_weights(o, "gqa", kGqaLayers, true, scratch);
    o.own["--d-k"] = 3;
    CHECK(refused(lesson, o) == "--d-k disagrees with --weights (--d-k: 6 (from W_query.npy, 24 wide over 4 heads) vs 3)");
    o.own.erase("--d-k");
    o.heads = 5;
    CHECK(refused(lesson, o) == "--heads must divide W_query.npy's width, h * d_k (--heads: a divisor of 24 (--weights " +
                                    data("gqa/W_query.npy") + ") vs 5)");
    o.heads = 8;  // d_k 3: W_key's 12 rows are 4 kv heads, which divide 8
    CHECK(refused(lesson, o) == "no refusal");
    o.heads = 4;
    o.weights["W_key"].shape = {18, 12};  // 3 kv heads of 6 for 4 query heads: the file's fault, not --kv-heads'
    CHECK(refused(lesson, o) == "W_key.npy's key/value heads must divide --heads (--weights " + data("gqa/W_key.npy") +
                                    ": a divisor of 4 heads of d_k = 6 vs 3 heads (18 wide))");
    o.weights["W_key"].shape = {12, 12};
    o.weights["out_proj"].shape = {12, 12};  // the values do not matter: the shape is refused first
    CHECK(refused(lesson, o) == "out_proj.npy has the wrong shape (--weights " + data("gqa/out_proj.npy") +
                                    ": (12, 24) (out, in) vs (12, 12))");
  }
  LessonOptions o;
  o.heads = 4;
  o.own["--d-k"] = 3;
  o.own["--rope-theta"] = 10000;
  CHECK(refused("kv-cache", o) ==
        "--rope-theta needs an even head width: RoPE rotates pairs of dimensions (--rope-theta: --d-k even vs d_k 3)");

  // heads: an --out-proj-width that disagrees with out_proj.npy.
  o = {};
  o.input = external(data("x.npy"), "--input");
  o.heads = 4;
  fixture_weights(o, "heads", kHeadsLayers, true, scratch);
  o.own["--out-proj-width"] = 24;
  CHECK(refused("heads", o) == "--out-proj-width disagrees with --weights (--out-proj-width: 12 (from out_proj.npy) vs 24)");
}

TEST_CASE("head widths too large are refused before any work, naming --d-k") {
  for (const std::string lesson : {"gqa", "kv-cache"}) {
    CAPTURE(lesson);
    LessonOptions o;
    o.heads = 4096;
    o.own["--d-k"] = 65536;  // W_query (2^28, 8): 2^31 values; kv-cache: the work
    try {
      run_lesson(lesson, o);
      FAIL("not refused");
    } catch (const UsageError& e) {
      CHECK(std::string(e.what()).find("--d-k") != std::string::npos);
    }
  }
}
