// --npz PATH through the binary: the archive holds exactly the files --dump writes for the same
// run (read back with the tests' own zip reader, tests/zip_reader.hpp), its missing parents are
// created, a re-run replaces it, a directory is refused in one line naming --npz with nothing
// written, and --stage and --shapes-only shape it as they shape the dump.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "process.hpp"
#include "zip_reader.hpp"
#include "scratch.hpp"

namespace fs = std::filesystem;
using attn::testing::read_file;
using attn::testing::TempDir;

namespace {

const std::string kAttn = ATTN_BINARY;

// Runs attn in `dir` with `args` (a shell line after "attn lesson "); must succeed quietly.
std::string run_in(const fs::path& dir, const std::string& args) {
  const auto r = attn::testing::run_shell("cd '" + dir.string() + "' && '" + kAttn + "' lesson " + args);
  INFO(args);
  INFO(r.err);
  REQUIRE(r.status == 0);
  REQUIRE(r.err.empty());
  return r.out;
}

// The archive's members as name -> bytes, and their names in order.
std::map<std::string, std::string> members_of(const fs::path& npz, std::vector<std::string>* order = nullptr) {
  std::map<std::string, std::string> out;
  for (const auto& m : attn::testing::read_zip(read_file(npz))) {
    if (order) order->push_back(m.name);
    out[m.name] = m.bytes;
  }
  return out;
}

// A directory's files as name -> bytes.
std::map<std::string, std::string> files_of(const fs::path& dir) {
  std::map<std::string, std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) out[e.path().filename().string()] = read_file(e.path());
  return out;
}

std::set<std::string> entries(const fs::path& dir) {
  std::set<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.insert(e.path().filename().string());
  return names;
}

}  // namespace

TEST_CASE("--npz out/causal.npz in a fresh directory: parents created, the dump's files, and a re-run replaces it") {
  TempDir tmp{"attn-npz-cli"};
  // One run writing both: the manifests then record the same command, so every byte must agree.
  const std::string text = run_in(tmp.path, "causal --npz out/causal.npz --dump out/causal");
  CHECK(text.find("[1/10]") != std::string::npos);  // the text still goes to stdout
  std::vector<std::string> order;
  const auto archive = members_of(tmp.path / "out/causal.npz", &order);
  const auto dump = files_of(tmp.path / "out/causal");
  CHECK(archive == dump);
  REQUIRE(order.size() >= 16);
  CHECK(order.front() == "s01_x.npy");
  CHECK(order.back() == "manifest.json");
  CHECK(archive.count("s06_attn_weights.npy") == 1);
  CHECK(entries(tmp.path / "out") == std::set<std::string>{"causal", "causal.npz"});

  // A re-run replaces the file whole: heads' members are gone, causal --seed 1's are there.
  run_in(tmp.path, "heads --npz out/causal.npz");
  CHECK(members_of(tmp.path / "out/causal.npz").count("s14_q_wrong.npy") == 1);  // a file only heads writes
  run_in(tmp.path, "causal --seed 1 --npz out/causal.npz --dump out/causal");
  const auto again = members_of(tmp.path / "out/causal.npz");
  CHECK(again == files_of(tmp.path / "out/causal"));
  CHECK(again.count("s14_q_wrong.npy") == 0);
  CHECK(again.at("manifest.json").find("\"command\": \"attn lesson causal --seed 1 --npz out/causal.npz --dump out/causal\"") !=
        std::string::npos);
  CHECK(again.at("s02_W_query_weight.npy") != archive.at("s02_W_query_weight.npy"));  // another seed, other weights
  CHECK(entries(tmp.path / "out") == std::set<std::string>{"causal", "causal.npz"});  // no temporary left
}

TEST_CASE("--npz naming a directory: one line naming --npz, status 2, nothing printed or written") {
  TempDir tmp{"attn-npz-cli"};
  fs::create_directories(tmp.path / "out/causal.npz");
  std::ofstream(tmp.path / "out/causal.npz/keep.txt") << "mine";
  const auto r = attn::testing::run({kAttn, "lesson", "causal", "--npz", (tmp.path / "out/causal.npz").string(), "--dump",
                                     (tmp.path / "d").string()});
  CHECK(r.status == 2);
  CHECK(r.out.empty());
  CHECK(r.err == "attn: error: cannot write --npz " + (tmp.path / "out/causal.npz").string() +
                     ": is a directory; give a file name such as " + (tmp.path / "out/causal.npz/causal.npz").string() + "\n");
  CHECK(entries(tmp.path) == std::set<std::string>{"out"});  // not even the --dump beside it
  CHECK(entries(tmp.path / "out/causal.npz") == std::set<std::string>{"keep.txt"});
}

TEST_CASE("--stage with --npz: only the selected stages' members, the same bytes as the full run's") {
  TempDir tmp{"attn-npz-cli"};
  run_in(tmp.path, "causal --npz all.npz");
  run_in(tmp.path, "causal --stage 6 --npz part.npz --dump part");
  const auto all = members_of(tmp.path / "all.npz");
  const auto part = members_of(tmp.path / "part.npz");
  CHECK(part == files_of(tmp.path / "part"));
  std::set<std::string> expected = {"manifest.json"}, got;
  for (const auto& [name, bytes] : all)
    if (name.rfind("s06_", 0) == 0) expected.insert(name);
  for (const auto& [name, bytes] : part) got.insert(name);
  REQUIRE(expected.size() >= 2);
  CHECK(got == expected);
  for (const auto& name : expected)
    if (name != "manifest.json") CHECK_MESSAGE(part.at(name) == all.at(name), name);
  CHECK(part.at("manifest.json").find("\"stage_selection\": {\"option\": \"6\", \"stages\": [6], \"of\": 10}") !=
        std::string::npos);
}

TEST_CASE("--shapes-only --npz: the archive is manifest.json alone, as the dump is, and --format json still prints") {
  TempDir tmp{"attn-npz-cli"};
  const std::string json = run_in(tmp.path, "gqa --preset llama --npz plan.npz --dump plan --format json");
  CHECK(json.rfind("{\n  \"format\": ", 0) == 0);
  const auto plan = members_of(tmp.path / "plan.npz");
  REQUIRE(plan.size() == 1);
  CHECK(plan == files_of(tmp.path / "plan"));
  CHECK(plan.at("manifest.json").find("\"mode\": \"none\"") != std::string::npos);
  CHECK(plan.at("manifest.json").find("\"file\"") == std::string::npos);
  // And a full archive replaces it.
  run_in(tmp.path, "causal --npz plan.npz");
  CHECK(members_of(tmp.path / "plan.npz").size() > 1);
}
