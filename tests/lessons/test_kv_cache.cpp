// The kv-cache lesson against PyTorch 1.13: the `gqa` case of tests/data/modern_cases.json fed
// in through --input and --weights (torch layout) gives its output_incremental, cache_k and
// cache_v; the default seed draws that case's weights; RoPE and a prefilled prompt give the rows
// PyTorch gives (decoded there with torch.cat, numbers below); the header's reproduce lines
// rebuild x and the weights; every check holds over seeds and sizes; the step stages, the table
// and the plan at large sizes say what the cache did.
//
// Legend: B batch, T tokens, P prompt tokens, d_in width, h query heads, h_kv kv heads, d_k head width.
#include <doctest/doctest.h>

#include <unistd.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "io/npy.hpp"
#include "report_lookup.hpp"
#include "reproduce_runner.hpp"

using namespace attn;
using namespace attn::test;

namespace {

std::string fixture_path(const std::string& tensor) { return std::string(ATTN_TEST_DATA) + "/gqa__" + tensor + ".npy"; }

NpyArray fixture(const std::string& tensor) { return read_npy(fixture_path(tensor)); }

ExternalTensor external(const std::string& tensor, const std::string& source) {
  const NpyArray a = fixture(tensor);
  return ExternalTensor{source + " " + fixture_path(tensor), a.shape, a.values, fixture_path(tensor)};
}

// The gqa case: x (1, 5, 8) from --input, the four bias-free layers from --weights in
// PyTorch's (out, in) layout, 4 query heads over 2 kv heads.
LessonOptions fixture_options() {
  LessonOptions o;
  o.input = external("x", "--input");
  o.heads = 4;
  o.kv_heads = 2;
  o.weights_dir = ATTN_TEST_DATA;
  o.weights_torch_layout = true;
  for (const std::string layer : {"W_query", "W_key", "W_value", "out_proj"})
    o.weights[layer] = external(layer + "_weight", "--weights");
  return o;
}

double max_diff(const std::vector<float>& a, const std::vector<float>& b) {
  REQUIRE(a.size() == b.size());
  double worst = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) worst = std::fmax(worst, std::fabs(static_cast<double>(a[i]) - b[i]));
  return worst;
}

double max_diff(const report::TensorItem& t, const NpyArray& expected) {
  REQUIRE(t.shape == expected.shape);
  return max_diff(t.values, expected.values);
}

// Every tensor called `name`, in stage order (a decode step's output_t, each cache_k, ...).
std::vector<const report::TensorItem*> all_tensors(const report::Report& r, const std::string& name) {
  std::vector<const report::TensorItem*> out;
  for (const auto& s : r.stages())
    for (const auto& item : s.items)
      if (const auto* t = std::get_if<report::TensorItem>(&item))
        if (t->name == name) out.push_back(t);
  return out;
}

void require_all_checks_pass(const report::Report& r) {
  std::size_t invariants = 0;
  for (const auto& c : checks(r)) {
    if (c.question) continue;
    INFO(c.text << " (" << c.measure << " = " << c.value << ", bound " << c.bound << ")");
    CHECK(c.passed);
    ++invariants;
  }
  CHECK(invariants >= 5);
}

std::vector<std::string> stage_titles(const report::Report& r) {
  std::vector<std::string> out;
  for (const auto& s : r.stages()) out.push_back(s.title);
  return out;
}

bool has_note(const report::Report& r, const std::string& part) {
  for (const auto& s : r.stages())
    for (const auto& n : notes(s))
      if (n.find(part) != std::string::npos) return true;
  return false;
}

}  // namespace

TEST_CASE("the gqa fixture through --input and --weights: PyTorch's output_incremental, cache_k and cache_v") {
  const report::Report r = run_lesson("kv-cache", fixture_options());
  require_all_checks_pass(r);
  CHECK(max_diff(tensor(r, "output_incremental"), fixture("output_incremental")) <= 1e-5);  // (1, 5, 8)
  CHECK(max_diff(tensor(r, "cache_k"), fixture("cache_k")) <= 1e-5);                        // (1, 2, 5, 2), the last
  CHECK(max_diff(tensor(r, "cache_v"), fixture("cache_v")) <= 1e-5);
  CHECK(max_diff(tensor(r, "output_full"), fixture("output")) <= 1e-5);
  CHECK(max_diff(tensor(r, "attn_weights_full"), fixture("attn_weights")) <= 1e-5);  // (1, 4, 5, 5)
  CHECK(max_diff(tensor(r, "W_key.weight"), fixture("W_key_weight")) == 0.0);

  // Each decode step's row is that row of PyTorch's incremental output, and the cache it shows
  // is the first t + 1 positions of PyTorch's final cache.
  const NpyArray inc = fixture("output_incremental"), ck = fixture("cache_k");
  const auto rows = all_tensors(r, "output_t");
  const auto caches = all_tensors(r, "cache_k");
  REQUIRE(rows.size() == 5);
  REQUIRE(caches.size() == 6);  // one per step, and the final one
  for (std::size_t t = 0; t < 5; ++t) {
    CAPTURE(t);
    CHECK(rows[t]->shape == Shape{1, 1, 8});
    CHECK(max_diff(rows[t]->values, std::vector<float>(inc.values.begin() + t * 8, inc.values.begin() + (t + 1) * 8)) <=
          1e-5);
    CHECK(caches[t]->shape == Shape{1, 2, t + 1, 2});
    std::vector<float> expected;  // positions 0..t of both kv heads
    for (std::size_t g = 0; g < 2; ++g)
      expected.insert(expected.end(), ck.values.begin() + g * 10, ck.values.begin() + g * 10 + (t + 1) * 2);
    CHECK(max_diff(caches[t]->values, expected) <= 1e-5);
    CHECK(all_tensors(r, "attn_weights")[t]->shape == Shape{1, 4, 1, t + 1});
  }
}

TEST_CASE("the default seed 9 draws the gqa fixture's weights (torch.manual_seed(9), four nn.Linear)") {
  const report::Report r = run_lesson("kv-cache");
  for (const std::string layer : {"W_query", "W_key", "W_value", "out_proj"}) {
    CAPTURE(layer);
    CHECK(max_diff(tensor(r, layer + ".weight"), fixture(layer + "_weight")) == 0.0);
  }
  CHECK(tensor(r, "x").shape == Shape{1, 5, 8});  // the fixture's sizes: B 1, T 5, d_in 8
  CHECK(tensor(r, "cache_k").shape == Shape{1, 2, 5, 2});
  require_all_checks_pass(r);
  const std::vector<std::string> titles = stage_titles(r);
  REQUIRE(titles.size() == 9);  // inputs, the full pass, 5 decode steps, every step, cost
  CHECK(titles[2].find("Decode position t = 0: 'Your', one query against 1 cached key") == 0);
  CHECK(titles[6].find("t = 4: 'one', one query against 5 cached keys") != std::string::npos);
  CHECK(has_note(r, "every head puts weight 1 on it"));
}

TEST_CASE("--prompt-len: a prefilled prompt then one token per step gives the same rows and cache") {
  for (const std::int64_t P : {1, 2, 4}) {
    CAPTURE(P);
    LessonOptions o = fixture_options();
    o.own["--prompt-len"] = static_cast<double>(P);
    const report::Report r = run_lesson("kv-cache", o);
    require_all_checks_pass(r);
    CHECK(max_diff(tensor(r, "output_incremental"), fixture("output_incremental")) <= 1e-5);
    CHECK(max_diff(tensor(r, "cache_k"), fixture("cache_k")) <= 1e-5);
    CHECK(max_diff(tensor(r, "cache_v"), fixture("cache_v")) <= 1e-5);
    CHECK(tensor(r, "output_prompt").shape == Shape{1, static_cast<std::size_t>(P), 8});
    CHECK(all_tensors(r, "output_t").size() == 5 - static_cast<std::size_t>(P));
    const report::TableItem& table = table_with(r, "attn_weights");
    REQUIRE(table.rows.size() == 6 - static_cast<std::size_t>(P));  // the prefill, then each step
    CHECK(table.rows[0][0] == "0.." + std::to_string(P - 1));
    CHECK(table.rows[0][2] == "(1, 2, " + std::to_string(P) + ", 2)");
    CHECK(table.rows.back()[2] == "(1, 2, 5, 2)");
  }
}

TEST_CASE("--rope-theta: the cache holds keys rotated at their own positions (PyTorch, rotate_half)") {
  // /usr/bin/python3 with PyTorch 1.13: the fixture's layer decoded with torch.cat, q and k of
  // step t rotated by rotate_half with positions [t], theta 10000 (docs/kv-cache.md).
  const std::vector<float> cache_k = {-0.122313946f, -0.154051244f, -0.0241572484f, -0.177527845f, 0.205819666f,
                                      0.0864537209f, 0.0748692006f, 0.201203376f,  0.119626097f,  0.00409796089f,
                                      -0.472097844f, -0.0214848481f, -0.355027318f, -0.789460599f, 0.122521833f,
                                      -0.373413801f, 0.453982592f,  0.104579359f,  -0.0645018816f, 0.620570421f};
  const std::vector<float> first_rows = {-0.196966887f, -0.11573673f,  -0.0167655312f, -0.0327920653f,
                                         0.0493649468f, 0.0398679376f, -0.194222659f,  0.063563399f,
                                         -0.151111975f, -0.109874777f, 0.016607305f,   -0.0637497976f,
                                         0.0430089086f, 0.0654734671f, -0.235897705f,  0.137083307f};
  for (const std::int64_t P : {0, 3}) {
    CAPTURE(P);
    LessonOptions o = fixture_options();
    o.own["--rope-theta"] = 10000.0;
    o.own["--prompt-len"] = static_cast<double>(P);
    const report::Report r = run_lesson("kv-cache", o);
    require_all_checks_pass(r);
    CHECK(max_diff(tensor(r, "cache_k").values, cache_k) <= 1e-5);
    CHECK(max_diff(tensor(r, "cache_v"), fixture("cache_v")) <= 1e-5);  // values are never rotated
    const auto& inc = tensor(r, "output_incremental").values;
    CHECK(max_diff(std::vector<float>(inc.begin(), inc.begin() + 16), first_rows) <= 1e-5);
    // Without the rotation the rows are the fixture's, which these are not.
    CHECK(max_diff(tensor(r, "output_incremental"), fixture("output_incremental")) > 1e-3);
  }
}

TEST_CASE("the reproduce lines rebuild x and the weights the lesson shows") {
  std::vector<LessonOptions> runs(5);
  runs[1].batch = 2, runs[1].seed = 4, runs[1].seq_len = 7, runs[1].d_in = 6, runs[1].heads = 3;
  runs[2] = fixture_options();
  runs[3].tokens = std::vector<std::string>{"the", "cat", "sat"};
  runs[3].more_sentences = {{"a", "dog", "ran"}};
  // The fixture's layers with a key bias from a file of their own (Qwen-style q/k/v biases).
  runs[4] = fixture_options();
  const std::string bias_path =
      (std::filesystem::temp_directory_path() / ("attn_test_kv_bias_" + std::to_string(::getpid()) + ".npy")).string();
  const std::vector<float> bias = {0.1f, -0.2f, 0.3f, 0.05f};
  write_npy(bias_path, {4}, bias.data());
  runs[4].weights["W_key_bias"] = ExternalTensor{"--weights " + bias_path, {4}, bias, bias_path};
  for (std::size_t i = 0; i < runs.size(); ++i) {
    CAPTURE(i);
    const report::Report r = run_lesson("kv-cache", runs[i]);
    require_all_checks_pass(r);
    const auto built = run_reproduce(r.header.reproduce);
    std::vector<std::string> names = {"x", "W_query.weight", "W_key.weight", "W_value.weight", "out_proj.weight"};
    if (i == 4) names.push_back("W_key.bias");
    CHECK(has_tensor(r, "W_key.bias") == (i == 4));
    for (const std::string& name : names) {
      CAPTURE(name);
      REQUIRE(built.count(name) == 1);
      const report::TensorItem& shown = tensor(r, name);
      CHECK(built.at(name).shape == shown.shape);
      CHECK(max_diff(built.at(name).values, shown.values) <= 1e-6);
    }
    bool seed_named = false;
    for (const auto& item : r.header.setting) seed_named = seed_named || item.rfind("seed ", 0) == 0;
    CHECK(seed_named == (i != 2 && i != 4));  // the fixture's weights come from files, not the seed
  }
  std::filesystem::remove(bias_path);
}

TEST_CASE("every check holds over seeds, batches, groupings, prompts and RoPE") {
  struct Size {
    std::size_t B, T, d_in, h, h_kv, P;
    double theta;
  };
  for (const Size z : {Size{1, 5, 8, 4, 2, 0, 0}, Size{2, 9, 12, 6, 3, 4, 0}, Size{1, 1, 4, 2, 1, 0, 500000},
                       Size{3, 12, 16, 4, 4, 0, 10000}, Size{1, 8, 8, 2, 1, 7, 10000}})
    for (std::uint64_t seed = 0; seed < 6; ++seed) {
      CAPTURE(seed);
      CAPTURE(z.T);
      CAPTURE(z.P);
      LessonOptions o;
      o.seed = seed, o.batch = z.B, o.seq_len = z.T, o.d_in = z.d_in, o.heads = z.h, o.kv_heads = z.h_kv;
      o.own["--prompt-len"] = static_cast<double>(z.P);
      o.own["--rope-theta"] = z.theta;
      const report::Report r = run_lesson("kv-cache", o);
      require_all_checks_pass(r);
      CHECK(tensor(r, "cache_k").shape == Shape{z.B, z.h_kv, z.T, z.d_in / z.h});
    }
}

TEST_CASE("long runs: the first three steps and the last get stages, the table lists every step") {
  LessonOptions o;
  o.seq_len = 20;
  const report::Report r = run_lesson("kv-cache", o);
  require_all_checks_pass(r);
  const auto outputs = all_tensors(r, "output_t");
  REQUIRE(outputs.size() == 4);
  const std::vector<std::string> titles = stage_titles(r);
  CHECK(titles[5].find("Decode position t = 19") == 0);
  const report::TableItem& table = table_with(r, "attn_weights");
  REQUIRE(table.rows.size() == 17);  // 8 rows, "...", 8 rows
  CHECK(table.rows[8][0] == "...");
  CHECK(table.rows.back()[0] == "19");
  CHECK(table.rows.back()[2] == "(1, 2, 20, 2)");
  CHECK(table.rows.back()[3] == "(1, 4, 1, 20)");
  CHECK(table.header.size() == 4);  // the storage's capacity is the code's business, not the lesson's
  CHECK(has_note(r, "16 decode steps had no stage of their own"));
  CHECK(has_note(r, "The cache now holds 2 * B * h_kv * T * d_k = 160 numbers"));
  // 12 steps: every one in the table, no "...".
  o.seq_len = 12;
  CHECK(table_with(run_lesson("kv-cache", o), "attn_weights").rows.size() == 12);
}

TEST_CASE("large sizes: refused before any work, or with --shapes-only the plan, quickly") {
  LessonOptions o;
  o.seq_len = 2048, o.d_in = 1024, o.heads = 8, o.kv_heads = 2;
  CHECK_THROWS_WITH_AS(run_lesson("kv-cache", o), doctest::Contains("add --shapes-only"), UsageError);
  o.shapes_only = true;
  const auto start = std::chrono::steady_clock::now();
  const report::Report r = run_lesson("kv-cache", o);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  CHECK(seconds < 10.0);  // a Debug build under load; about 0.3 s in Release
  REQUIRE(r.stages().size() == 3);  // inputs, the plan, the cost
  CHECK(r.stages()[1].title.find("The plan") == 0);
  CHECK(!has_tensor(r, "cache_k"));  // no numbers pretend to be computed
  const report::TableItem& table = table_with(r, "attn_weights");
  CHECK(table.rows.back()[2] == "(1, 2, 2048, 128)");
  CHECK(table.rows.back()[3] == "(1, 8, 1, 2048)");
  CHECK(has_note(r, "After the last step the cache holds 1,048,576 numbers, 4.00 MiB in float32."));
  for (const auto& c : checks(r)) CHECK(c.passed);  // the counting check, decided without numbers
}

TEST_CASE("refusals name the option and what was expected") {
  LessonOptions o;
  o.own["--prompt-len"] = 5;
  CHECK_THROWS_WITH_AS(run_lesson("kv-cache", o), doctest::Contains("--prompt-len: 0..4 for 5 tokens vs 5"),
                       UsageError);
  o = {};
  o.heads = 8;  // d_k 1: nothing to rotate in pairs
  o.own["--rope-theta"] = 10000;
  CHECK_THROWS_WITH_AS(run_lesson("kv-cache", o), doctest::Contains("d_k 1"), UsageError);
  o = {};
  o.own["--rope-theta"] = 1;
  CHECK_THROWS_WITH_AS(run_lesson("kv-cache", o), doctest::Contains("0 or 2..1e9"), UsageError);
  o = {};
  o.kv_heads = 3;
  CHECK_THROWS_WITH_AS(run_lesson("kv-cache", o), doctest::Contains("--kv-heads must divide --heads"), UsageError);
}

TEST_CASE("--rope-theta at d_k = 2: one pair, the same for every theta, and the lesson says so") {
  // d_in 8 over 4 heads: d_k 2, one rotated pair whose frequency theta^0 = 1 ignores theta.
  auto run = [](double theta, std::size_t d_in) {
    LessonOptions o;
    o.d_in = d_in;
    o.own["--rope-theta"] = theta;
    return run_lesson("kv-cache", o);
  };
  auto says_single_pair = [](const report::Report& r) {
    for (const auto& s : r.stages())
      for (const auto& n : notes(s))
        if (n.find("RoPE has a single pair") != std::string::npos) return true;
    return false;
  };
  const auto small_a = run(10000, 8), small_b = run(500000, 8);
  CHECK(tensor(small_a, "output_full").values == tensor(small_b, "output_full").values);
  CHECK(says_single_pair(small_a));
  // d_in 32: d_k 8, four pairs; theta now moves the numbers, and the note is not printed.
  const auto wide_a = run(10000, 32), wide_b = run(500000, 32);
  CHECK(tensor(wide_a, "output_full").values != tensor(wide_b, "output_full").values);
  CHECK_FALSE(says_single_pair(wide_a));
}

TEST_CASE("the cost tables say the Llama rows leave the MLP out, with its count") {
  bool said = false;
  const auto run = run_lesson("kv-cache");  // named: a temporary would die before the loop
  for (const auto& s : run.stages())
    for (const auto& n : notes(s))
      // 3 x 3072 x 8192 (gate, up, down) against 3072 x (3072 + 1024 + 1024 + 3072) for q, k, v, o.
      said = said || (n.find("MLP, left out, adds 3 x 3,072 x 8,192 = 75,497,472") != std::string::npos &&
                      n.find("3.00x the attention's projections") != std::string::npos);
  CHECK(said);
}
