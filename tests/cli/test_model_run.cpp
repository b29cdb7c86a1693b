// attn model DIR --ids ... through the binary: every checkpoint fixture of tests/data/models run
// with --layer all, its --dump read back and every expected tensor of the float32 PyTorch pass
// compared (q, k, v after RoPE, attention weights, attention output, each layer's output, the
// final norm, the logits, and `attentions` stacked as output_attentions returns it); --npz read
// back with the tests' own zip reader; and the refusals, each one line on stderr with status 2.
//
// Tolerances are the fixtures' (tests/data/models/README.md): 1e-5 absolute on attention weights,
// 1e-4 relative on logits; the other tensors 1e-4 relative to their largest value.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "io/npy.hpp"
#include "model_cases.hpp"
#include "process.hpp"
#include "scratch.hpp"
#include "zip_reader.hpp"

namespace fs = std::filesystem;
using attn::testing::read_file;
using attn::testing::run;
using attn::testing::TempDir;

namespace {

const std::string kAttn = ATTN_BINARY;
const std::string kModels = std::string(ATTN_TEST_DATA) + "/models";

using Case = attn::testing::ModelCase;
using attn::testing::id_list;

std::vector<Case> cases() { return attn::testing::model_cases(kModels); }

// The expected tensor's name -> the name attn writes it under (docs/model.md, "Names").
std::map<std::string, std::string> names(const std::string& dir) {
  const auto cfg = nlohmann::json::parse(read_file(dir + "/config.json"));
  const bool gpt2 = cfg.at("model_type") == "gpt2";
  const int L = gpt2 ? cfg.at("n_layer").get<int>() : cfg.at("num_hidden_layers").get<int>();
  std::map<std::string, std::string> m = {{"embeddings", gpt2 ? "embeddings" : "model.embed_tokens"},
                                          {"final_hidden", gpt2 ? "ln_f" : "model.norm"},
                                          {"logits", "lm_head"}};
  for (int l = 0; l < L; ++l) {
    const std::string n = std::to_string(l), layer = (gpt2 ? "h." : "model.layers.") + n, a = layer + (gpt2 ? ".attn." : ".self_attn.");
    m["q_" + n] = a + "q";
    m["k_" + n] = a + "k";
    m["v_" + n] = a + "v";
    m["attn_weights_" + n] = a + "attn_weights";
    m["attn_out_" + n] = a + (gpt2 ? "c_proj" : "o_proj");
    m["hidden_" + n] = layer;
  }
  return m;
}

float largest(const std::vector<float>& v) {
  float m = 0;
  for (float x : v) m = std::max(m, std::abs(x));
  return m;
}

// got within the fixture's tolerance of expected; names the tensor and the difference when not.
void expect_close(const std::string& what, const attn::NpyArray& got, const attn::NpyArray& expected) {
  INFO(what);
  REQUIRE(got.shape == expected.shape);
  float worst = 0;
  for (std::size_t i = 0; i < got.values.size(); ++i) worst = std::max(worst, std::abs(got.values[i] - expected.values[i]));
  const bool weights = what.find("attn_weights") != std::string::npos || what.find("attentions") != std::string::npos;
  const float bound = weights ? 1e-5f : 1e-4f * std::max(1.0f, largest(expected.values));
  CHECK_MESSAGE(worst <= bound, what << ": max |attn - PyTorch| = " << worst << " > " << bound);
}

}  // namespace

TEST_CASE("every fixture checkpoint, every expected tensor, through --layer all --dump") {
  const auto all = cases();
  REQUIRE(all.size() >= 8);
  for (const Case& c : all) {
    CAPTURE(c.name);
    const std::string dir = kModels + "/" + c.name;
    TempDir tmp("attn-model-run");
    const fs::path dump = tmp.path / "dump";
    const auto r = run({kAttn, "model", dir, "--ids", id_list(c.ids), "--layer", "all", "--dump", dump.string()});
    REQUIRE_MESSAGE(r.status == 0, r.err);
    CHECK(r.err.empty());
    std::size_t compared = 0;
    for (const auto& [expected, mine] : names(dir)) {
      expect_close(c.name + " " + expected + " as " + mine, attn::read_npy((dump / (mine + ".npy")).string()),
                   attn::read_npy(dir + "/expected/" + expected + ".npy"));
      ++compared;
    }
    CHECK(compared >= 10);
    // attentions (L, 1, h, T, T): the layers' weights, stacked.
    const attn::NpyArray stacked = attn::read_npy((dump / "attentions.npy").string());
    const std::size_t L = stacked.shape.at(0);
    REQUIRE(stacked.shape.size() == 5);
    std::vector<float> layers;
    for (std::size_t l = 0; l < L; ++l) {
      const auto w = attn::read_npy(dir + "/expected/attn_weights_" + std::to_string(l) + ".npy");
      layers.insert(layers.end(), w.values.begin(), w.values.end());
    }
    expect_close(c.name + " attentions", stacked, {stacked.shape, layers});
    // input_ids as float32 ids
    const attn::NpyArray ids = attn::read_npy((dump / "input_ids.npy").string());
    REQUIRE(ids.values.size() == c.ids.size());
    for (std::size_t i = 0; i < c.ids.size(); ++i) CHECK(ids.values[i] == static_cast<float>(c.ids[i]));
  }
}

TEST_CASE("--npz holds the same tensors under the same names, numpy.load's keys") {
  const Case c = cases().back();
  const std::string dir = kModels + "/" + c.name;
  TempDir tmp("attn-model-npz");
  const fs::path npz = tmp.path / "run.npz";
  const auto r = run({kAttn, "model", dir, "--ids", id_list(c.ids), "--npz", npz.string()});
  REQUIRE_MESSAGE(r.status == 0, r.err);
  std::map<std::string, std::string> members;
  for (const auto& m : attn::testing::read_zip(read_file(npz))) members[m.name] = m.bytes;
  REQUIRE(members.count("lm_head.npy"));
  REQUIRE(members.count("attentions.npy"));
  expect_close("npz lm_head", attn::parse_npy(members["lm_head.npy"], "lm_head.npy"),
               attn::read_npy(dir + "/expected/logits.npy"));
  // Only the last layer is shown by default: its weights are there, the first layer's are not.
  const auto cfg = nlohmann::json::parse(read_file(dir + "/config.json"));
  const int L = cfg.contains("n_layer") ? cfg.at("n_layer").get<int>() : cfg.at("num_hidden_layers").get<int>();
  CHECK(members.count("model.layers." + std::to_string(L - 1) + ".self_attn.attn_weights.npy") == 1);
  CHECK(members.count("model.layers.0.self_attn.attn_weights.npy") == 0);
}

TEST_CASE("the text run prints every layer's line, the shown layer and the next token") {
  const std::string dir = kModels + "/llama3_tiny_bf16";
  std::vector<long> ids;
  for (const Case& c : cases())
    if (c.name == "llama3_tiny_bf16") ids = c.ids;
  REQUIRE(ids.size() == 9);  // the fixture's ids, whose logits expected/ holds
  const auto r = run({kAttn, "model", dir, "--ids", id_list(ids), "--top-k", "3"});
  REQUIRE_MESSAGE(r.status == 0, r.err);
  CHECK(r.out.rfind("attn model: llama checkpoint ", 0) == 0);
  CHECK(r.out.find("Layer 1 (Layer 2 counted from 1): softmax: the attention weights") != std::string::npos);
  CHECK(r.out.find("Layer 0 (Layer 1 counted from 1)") == std::string::npos);  // not shown by default
  CHECK(r.out.find("check passed: every row of attn_weights sums to 1") != std::string::npos);
  CHECK(r.out.find("check passed: RoPE only rotates") != std::string::npos);
  CHECK(r.out.find("print(len(out.attentions), out.attentions[1].shape)  # 2 layers, (1, 6, 9, 9)") != std::string::npos);
  // The overview has a row per layer; the next token's top 3 are listed by rank.
  CHECK(r.out.find("Every layer at a glance") != std::string::npos);
  CHECK(r.out.find("The next token") != std::string::npos);
  // The greedy next token named in the note is the fixture's argmax of the last position's logits.
  const auto logits = attn::read_npy(dir + "/expected/logits.npy");
  const std::size_t V = logits.shape.at(2), T = logits.shape.at(1);
  const auto last = logits.values.begin() + static_cast<long>((T - 1) * V);
  const std::size_t best = static_cast<std::size_t>(std::max_element(last, last + static_cast<long>(V)) - last);
  CHECK(r.out.find("most likely next token is id " + std::to_string(best) + ",") != std::string::npos);
}

// A copy of fixture `name` with tests/data/models/tiny_tokenizer.json as its tokenizer.json: a
// hand-written BPE file whose ids fit the tiny models' vocabulary (Hugging Face's tokenizers gives
// the same ids for the texts below: [31, 0, 30, 27, 24, 26, 19, 7, 4, 26, 17, 8, 21, 4, 17, 30]).
fs::path with_tokenizer(const TempDir& tmp, const std::string& name) {
  const fs::path dir = tmp.path / name;
  fs::create_directory(dir);
  for (const auto& e : fs::directory_iterator(kModels + "/" + name))
    if (e.is_regular_file()) fs::copy_file(e.path(), dir / e.path().filename());
  fs::copy_file(kModels + "/tiny_tokenizer.json", dir / "tokenizer.json");
  return dir;
}

TEST_CASE("--text: the tokenizer's ids, the template's BOS, and the same numbers as --ids") {
  TempDir tmp("attn-model-text");
  const fs::path dir = with_tokenizer(tmp, "llama3_tiny_bf16");
  const std::string text = "a bank by the river bank";
  const auto r = run({kAttn, "model", dir.string(), "--text", text, "--npz", (tmp.path / "text.npz").string()});
  REQUIRE_MESSAGE(r.status == 0, r.err);
  const auto bos_row = r.out.find("\n    0  31  \"<s>\"");
  REQUIRE(bos_row != std::string::npos);
  CHECK(r.out.substr(bos_row + 1, r.out.find('\n', bos_row + 1) - bos_row - 1).find("added by the template") != std::string::npos);
  CHECK(r.out.find("15 tokens come from the text and 1 from the tokenizer's template") != std::string::npos);
  CHECK(r.out.find("ids = tok(\"a bank by the river bank\", return_tensors=\"pt\").input_ids") != std::string::npos);
  const std::string ids = "31,0,30,27,24,26,19,7,4,26,17,8,21,4,17,30";
  const auto by_ids = run({kAttn, "model", dir.string(), "--ids", ids, "--npz", (tmp.path / "ids.npz").string()});
  REQUIRE_MESSAGE(by_ids.status == 0, by_ids.err);
  std::map<std::string, std::string> a, b;
  for (const auto& m : attn::testing::read_zip(read_file(tmp.path / "text.npz"))) a[m.name] = m.bytes;
  for (const auto& m : attn::testing::read_zip(read_file(tmp.path / "ids.npz"))) b[m.name] = m.bytes;
  const auto got = attn::parse_npy(a.at("input_ids.npy"), "input_ids");
  REQUIRE(got.values.size() == 16);
  CHECK(got.values.front() == 31.0f);
  CHECK(got.values.back() == 30.0f);
  CHECK(a.at("lm_head.npy") == b.at("lm_head.npy"));  // the same ids, the same bytes
  CHECK(a.at("attentions.npy") == b.at("attentions.npy"));
  // --no-bos: the text's 15 tokens only.
  const auto no_bos = run({kAttn, "model", dir.string(), "--text", text, "--no-bos", "--layer", "none"});
  REQUIRE_MESSAGE(no_bos.status == 0, no_bos.err);
  CHECK(no_bos.out.find("tokens 15,") != std::string::npos);
  CHECK(no_bos.out.find("added by the template") == std::string::npos);
  // A text past the context: refused by name before any layer runs.
  const fs::path small = with_tokenizer(tmp, "gpt2_context_limit");
  const auto past = run({kAttn, "model", small.string(), "--text", "abcdefghijklmnopq"});
  CHECK(past.status == 2);
  CHECK(past.out.empty());
  CHECK_MESSAGE(past.err.find("the text has more tokens than the model's context (--text: at most 16 tokens") != std::string::npos,
                past.err);
}

TEST_CASE("--layer chooses the layers shown and --stage picks stages by title") {
  const std::string dir = kModels + "/llama_tiny_f16_sharded";
  const auto all = run({kAttn, "model", dir, "--ids", "1,2,3", "--layer", "0-2", "--stage", "softmax"});
  REQUIRE_MESSAGE(all.status == 0, all.err);
  for (int l = 0; l < 3; ++l)
    CHECK(all.out.find("Layer " + std::to_string(l) + " (Layer " + std::to_string(l + 1) + " counted from 1): softmax") !=
          std::string::npos);
  CHECK(all.out.find("MLP and second residual") == std::string::npos);
  const auto none = run({kAttn, "model", dir, "--ids", "1,2,3", "--layer", "none"});
  REQUIRE_MESSAGE(none.status == 0, none.err);
  CHECK(none.out.find("counted from 1):") == std::string::npos);
  CHECK(none.out.find("Every layer at a glance") != std::string::npos);
}

TEST_CASE("attn model refusals: one line on stderr naming the option, status 2, nothing on stdout") {
  const std::string llama = kModels + "/llama3_tiny_bf16", gpt2 = kModels + "/gpt2_context_limit";
  std::string seventeen;
  for (int i = 0; i < 17; ++i) seventeen += (i ? "," : "") + std::to_string(i);
  const std::vector<std::pair<std::vector<std::string>, std::string>> refusals = {
      {{"--ids", "1,2", "--layer", "2"}, "--layer is past the last layer (--layer: 0..1"},
      {{"--ids", "1,2", "--layer", "x"}, "--layer expects layer numbers"},
      {{"--ids", "1,2", "--layer", "1-0"}, "--layer range runs backwards"},
      {{"--ids", "1,128"}, "--ids names an id past the model's vocabulary (--ids: ids below 128"},
      {{"--ids", "1,,2"}, "--ids expects whole numbers"},
      {{"--ids", "1", "--text", "a"}, "needs one of --text, --text-file, --ids"},
      {{"--text", "hello"}, "tokenizer.json"},
      {{"--ids", "1", "--top-k", "0"}, "--top-k"},
      {{"--ids", "1", "--summary"}, "--summary describes the checkpoint without running it"},
      {{"--layer", "1"}, "--layer applies to a run"},
      {{"--dump", "x"}, "--dump applies to a run"},
      {{"--ids", "1", "--no-bos"}, "--no-bos applies to a text"},
      {{"--ids", "1", "--format", "yaml"}, "unknown --format"},
  };
  for (const auto& [args, message] : refusals) {
    std::vector<std::string> argv = {kAttn, "model", llama};
    argv.insert(argv.end(), args.begin(), args.end());
    const auto r = run(argv);
    const auto& run_args = args;  // clang 14 cannot capture a structured binding (CAPTURE is a lambda)
    CAPTURE(run_args);
    CHECK(r.status == 2);
    CHECK(r.out.empty());
    CHECK_MESSAGE(r.err.find(message) != std::string::npos, r.err);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  }
  const auto past = run({kAttn, "model", gpt2, "--ids", seventeen});
  CHECK(past.status == 2);
  CHECK(past.out.empty());
  CHECK_MESSAGE(past.err.find("the prompt is longer than the model's context (--ids: at most 16 tokens") != std::string::npos, past.err);
  const auto at_limit = run({kAttn, "model", gpt2, "--ids", seventeen.substr(0, seventeen.rfind(','))});
  CHECK_MESSAGE(at_limit.status == 0, at_limit.err);
}
