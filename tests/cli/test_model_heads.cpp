// What the heads of a model run do, through the binary (docs/model.md, "What the heads do"): the
// head role scores and the logit lens of every checkpoint fixture against a PyTorch computation
// of the same definitions (tests/data/models/make_head_roles.py, from the fixtures' float32
// forward pass), --probe induction's ids against torch.randint's, --query/--key against the
// expected attention weights, and the refusals, one line each.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <string>
#include <vector>


#include "io/npy.hpp"
#include "model_cases.hpp"
#include "process.hpp"
#include "scratch.hpp"

namespace fs = std::filesystem;
using attn::testing::run;
using attn::testing::TempDir;

namespace {

const std::string kAttn = ATTN_BINARY;
const std::string kModels = std::string(ATTN_TEST_DATA) + "/models";

using Case = attn::testing::ModelCase;
using attn::testing::id_list;

std::vector<Case> cases() { return attn::testing::model_cases(kModels); }

// Equal within `bound`, NaN where PyTorch has NaN (a score with nothing to average).
void expect_close(const std::string& what, const attn::NpyArray& got, const attn::NpyArray& expected, float bound) {
  INFO(what);
  REQUIRE(got.shape == expected.shape);
  float worst = 0;
  std::size_t nan_mismatch = 0;
  for (std::size_t i = 0; i < got.values.size(); ++i) {
    if (std::isnan(expected.values[i]) || std::isnan(got.values[i])) {
      nan_mismatch += std::isnan(expected.values[i]) != std::isnan(got.values[i]);
      continue;
    }
    worst = std::max(worst, std::abs(got.values[i] - expected.values[i]));
  }
  CHECK_MESSAGE(nan_mismatch == 0, what << ": " << nan_mismatch << " values NaN on one side only");
  CHECK_MESSAGE(worst <= bound, what << ": max |attn - PyTorch| = " << worst << " > " << bound);
}

}  // namespace

TEST_CASE("head roles and the logit lens of every fixture checkpoint match PyTorch") {
  const auto all = cases();
  REQUIRE(all.size() >= 8);
  std::size_t induction_maps = 0;
  for (const Case& c : all) {
    CAPTURE(c.name);
    const std::string dir = kModels + "/" + c.name;
    TempDir tmp("attn-model-heads");
    const fs::path dump = tmp.path / "dump";
    const auto r = run({kAttn, "model", dir, "--ids", id_list(c.ids), "--layer", "none", "--logit-lens", "--dump", dump.string()});
    REQUIRE_MESSAGE(r.status == 0, r.err);
    for (const char* role : {"previous_token", "first_token", "self", "entropy", "induction"}) {
      const fs::path expected = fs::path(dir) / "expected" / (std::string("roles_") + role + ".npy");
      const fs::path got = dump / (std::string("roles.") + role + ".npy");
      // No induction pair in the prompt: neither side writes the map.
      CHECK_MESSAGE(fs::exists(expected) == fs::exists(got), role);
      if (!fs::exists(expected)) continue;
      induction_maps += std::string(role) == "induction";
      expect_close(c.name + " roles." + role, attn::read_npy(got.string()), attn::read_npy(expected.string()), 2e-6f);
    }
    for (const char* lens : {"top_id", "top_p", "answer_p", "answer_rank"}) {
      const float bound = std::string(lens).find("_p") != std::string::npos ? 1e-5f : 0.0f;  // ids and ranks exactly
      expect_close(c.name + " logit_lens." + lens, attn::read_npy((dump / (std::string("logit_lens.") + lens + ".npy")).string()),
                   attn::read_npy(dir + "/expected/lens_" + lens + ".npy"), bound);
    }
  }
  CHECK(induction_maps >= 5);  // most fixtures' ids repeat a token
}

TEST_CASE("--probe induction draws the ids torch.randint draws, after bos_token_id") {
  TempDir tmp("attn-model-probe");
  const fs::path dump = tmp.path / "dump";
  const auto r = run({kAttn, "model", kModels + "/gpt2_tiny", "--probe", "induction", "--probe-length", "5", "--layer", "none",
                      "--dump", dump.string()});
  REQUIRE_MESSAGE(r.status == 0, r.err);
  // torch.randint(0, 96, (5,), generator=torch.Generator().manual_seed(0)) = [44, 15, 53, 0, 67] (PyTorch 1.13);
  // config.json's bos_token_id is 95.
  const std::vector<float> expected = {95, 44, 15, 53, 0, 67, 44, 15, 53, 0, 67};
  CHECK(attn::read_npy((dump / "input_ids.npy").string()).values == expected);
  // Five pairs: each token of the second copy and the position after its first occurrence.
  const auto text = run({kAttn, "model", kModels + "/gpt2_tiny", "--probe", "induction", "--probe-length", "5", "--layer", "none"});
  REQUIRE(text.status == 0);
  CHECK(text.out.find("The induction probe: 5 random tokens written twice. 5 pairs") != std::string::npos);
  CHECK(text.out.find("r = torch.randint(0, 96, (5,), generator=g)") != std::string::npos);
  CHECK(text.out.find("ids = torch.cat([torch.tensor([95]), r, r])[None]") != std::string::npos);
  // --no-bos: the two copies alone; another seed, other ids.
  const auto no_bos = run({kAttn, "model", kModels + "/gpt2_tiny", "--probe", "induction", "--probe-length", "5", "--no-bos",
                           "--seed", "7", "--layer", "none", "--dump", (tmp.path / "d2").string()});
  REQUIRE_MESSAGE(no_bos.status == 0, no_bos.err);
  const auto ids = attn::read_npy((tmp.path / "d2" / "input_ids.npy").string()).values;
  REQUIRE(ids.size() == 10);
  CHECK(std::equal(ids.begin(), ids.begin() + 5, ids.begin() + 5));
  CHECK(ids != std::vector<float>(expected.begin() + 1, expected.end()));
}

TEST_CASE("--query and --key read the expected attention weights of every layer") {
  // gpt2_context_limit's ids: position 10 is the second <id 60>, position 2 the token after its first.
  const std::string dir = kModels + "/gpt2_context_limit";
  const std::string ids = id_list(cases().at(0).ids);
  REQUIRE(cases().at(0).name == "gpt2_context_limit");
  TempDir tmp("attn-model-query");
  const auto r = run({kAttn, "model", dir, "--ids", ids, "--layer", "none", "--query", "10", "--key", "2", "--dump",
                      (tmp.path / "d").string()});
  REQUIRE_MESSAGE(r.status == 0, r.err);
  const auto link = attn::read_npy((tmp.path / "d" / "query.link.npy").string());
  REQUIRE(link.shape == std::vector<std::size_t>{2, 3});
  std::vector<float> expected;
  for (int l = 0; l < 2; ++l) {
    const auto w = attn::read_npy(dir + "/expected/attn_weights_" + std::to_string(l) + ".npy");  // (1, 3, 16, 16)
    for (int h = 0; h < 3; ++h) expected.push_back(w.values[(h * 16 + 10) * 16 + 2]);
  }
  expect_close("query.link", link, {{2, 3}, expected}, 1e-5f);
  // The ranked list names the strongest head first.
  const auto text = run({kAttn, "model", dir, "--ids", ids, "--layer", "none", "--query", "10", "--key", "2"});
  REQUIRE(text.status == 0);
  const std::size_t best = static_cast<std::size_t>(std::max_element(expected.begin(), expected.end()) - expected.begin());
  const std::string first_row = "1         " + std::to_string(best / 3) + "." + std::to_string(best % 3);
  CHECK_MESSAGE(text.out.find(first_row) != std::string::npos, text.out);
  // Without --key: the query's rows, (L, h, T).
  const auto rows = run({kAttn, "model", dir, "--ids", ids, "--layer", "none", "--query", "10", "--format", "json"});
  REQUIRE(rows.status == 0);
  CHECK(rows.out.find("\"query.weights\"") != std::string::npos);
}

TEST_CASE("the head options refuse what they cannot do, one line each") {
  const std::string dir = kModels + "/gpt2_context_limit";
  const std::string ids = id_list(cases().at(0).ids);
  struct Bad {
    std::vector<std::string> args;
    std::string says;
  };
  const std::vector<Bad> bad = {
      {{"--ids", ids, "--key", "2"}, "--key needs --query"},
      {{"--ids", ids, "--query", "16"}, "--query names a position past the prompt"},
      {{"--ids", ids, "--query", "river"}, "--query names no token of the prompt"},
      {{"--ids", ids, "--query", "5", "--key", "9"}, "--key names a position past the query"},
      {{"--probe", "copying"}, "unknown --probe"},
      {{"--probe", "induction", "--probe-length", "8"}, "--probe-length makes a probe longer than the model's context"},
      {{"--probe", "induction", "--probe-length", "1"}, "--probe-length"},
      {{"--ids", ids, "--seed", "3"}, "--seed applies to --probe"},
      {{"--ids", ids, "--probe-length", "3"}, "--probe-length applies to --probe"},
      {{"--probe", "induction", "--ids", "1"}, "needs one of --text, --text-file, --ids, --probe"},
      {{"--logit-lens"}, "--logit-lens applies to a run"},
      {{"--query", "3"}, "--query applies to a run"},
  };
  for (const Bad& b : bad) {
    std::vector<std::string> cmd = {kAttn, "model", dir};
    cmd.insert(cmd.end(), b.args.begin(), b.args.end());
    const auto r = run(cmd);
    CAPTURE(b.says);
    CHECK(r.status == 2);
    CHECK(r.out.empty());
    CHECK(r.err.find(b.says) != std::string::npos);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  }
}
