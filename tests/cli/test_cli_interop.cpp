// Tensors in and out through the binary: --dump writes every tensor and a manifest whose files
// load back to the same bytes --format json prints; --input and --weights refuse broken files
// with one line naming the file; a refused dump leaves nothing behind.
#include <doctest/doctest.h>

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

#include "io/npy.hpp"
#include "process.hpp"
#include "scratch.hpp"

namespace fs = std::filesystem;
using attn::testing::read_file;
using attn::testing::TempDir;
using attn::testing::run;
using attn::testing::run_shell;

namespace {

const std::string kAttn = ATTN_BINARY;

attn::testing::Result attn_run(std::vector<std::string> args) {
  args.insert(args.begin(), kAttn);
  return run(args);
}

void write_file(const fs::path& p, const std::string& bytes) {
  std::ofstream out(p, std::ios::binary);
  out << bytes;
}

// Every "file": "..." in a manifest, in order.
std::vector<std::string> manifest_files(const std::string& json) {
  std::vector<std::string> files;
  const std::string key = "\"file\": \"";
  for (auto at = json.find(key); at != std::string::npos; at = json.find(key, at + 1)) {
    const auto start = at + key.size();
    files.push_back(json.substr(start, json.find('"', start) - start));
  }
  return files;
}

// The flat values that follow `"name": "<name>", "shape": [...], "values": ` in JSON output.
std::vector<double> json_values(const std::string& json, const std::string& name) {
  const auto at = json.find("{\"name\": \"" + name + "\"");
  REQUIRE(at != std::string::npos);
  auto pos = json.find("\"values\": ", at);
  REQUIRE(pos != std::string::npos);
  pos += std::strlen("\"values\": ");
  std::vector<double> values;
  int depth = 0;
  do {
    const char c = json[pos];
    if (c == '[') ++depth, ++pos;
    else if (c == ']') --depth, ++pos;
    else if (c == ',' || c == ' ') ++pos;
    else if (c == '"') {  // "nan", "inf", "-inf"
      const auto end = json.find('"', pos + 1);
      values.push_back(std::strtod(json.substr(pos + 1, end - pos - 1).c_str(), nullptr));
      pos = end + 1;
    } else {
      char* end = nullptr;
      values.push_back(std::strtod(json.c_str() + pos, &end));
      pos = static_cast<std::size_t>(end - json.c_str());
    }
  } while (depth > 0);
  return values;
}

}  // namespace

TEST_CASE("--dump writes every shown tensor and a manifest, the files load back to the printed JSON values") {
  TempDir tmp;
  const fs::path dump = tmp.path / "causal";
  const auto r = attn_run({"lesson", "causal", "--dump", dump.string()});
  REQUIRE(r.status == 0);
  CHECK(r.err.empty());
  CHECK(r.out.find("[1/10]") != std::string::npos);  // the text still goes to stdout
  const std::string manifest = read_file(dump / "manifest.json");
  CHECK(manifest.find("\"format\": \"attn-manifest-3\"") != std::string::npos);
  CHECK(manifest.find("\"lesson\": \"causal\"") != std::string::npos);
  CHECK(manifest.find("\"command\": \"attn lesson causal --dump") != std::string::npos);
  CHECK(manifest.find("\"title\": \"The causal mask\"") != std::string::npos);
  const auto files = manifest_files(manifest);
  REQUIRE(files.size() >= 15);
  std::size_t on_disk = 0;
  for (const auto& e : fs::directory_iterator(dump)) on_disk += e.path().extension() == ".npy";
  CHECK(on_disk == files.size());  // one file per tensor, nothing else
  for (const auto& f : files) {
    CAPTURE(f);
    CHECK(fs::exists(dump / f));
    CHECK_NOTHROW(attn::read_npy((dump / f).string()));
  }
  CHECK(std::find(files.begin(), files.end(), "s06_attn_weights.npy") != files.end());
  CHECK(std::find(files.begin(), files.end(), "s02_W_query_weight.npy") != files.end());

  // Round trip: the dumped bytes hold exactly the values --format json prints.
  const auto json = attn_run({"lesson", "causal", "--format", "json"});
  REQUIRE(json.status == 0);
  CHECK(json.out.rfind("{\n  \"format\": ", 0) == 0);  // JSON only: no text before it
  CHECK(json.out.find("\n[1/10] ") == std::string::npos);  // and no stage printed as text
  for (const auto& [name, file] : std::vector<std::pair<std::string, std::string>>{
           {"attn_weights", "s06_attn_weights.npy"}, {"masked", "s05_masked.npy"}, {"x", "s01_x.npy"}}) {
    const auto& tensor_name = name;  // clang 14 cannot capture a structured binding (CAPTURE is a lambda)
    CAPTURE(tensor_name);
    const auto from_json = json_values(json.out, name);
    const attn::NpyArray from_npy = attn::read_npy((dump / file).string());
    REQUIRE(from_json.size() == from_npy.values.size());
    for (std::size_t i = 0; i < from_json.size(); ++i) {
      const float a = static_cast<float>(from_json[i]), b = from_npy.values[i];
      CHECK((std::memcmp(&a, &b, sizeof a) == 0));  // same bits, -inf included
    }
  }
}

TEST_CASE("--dump refuses a target it would overwrite, and leaves nothing behind") {
  TempDir tmp;
  write_file(tmp.path / "keep.txt", "mine");
  const auto busy = attn_run({"lesson", "causal", "--dump", tmp.path.string()});
  CHECK(busy.status == 2);
  CHECK(busy.out.empty());
  CHECK(busy.err.find("exists and is not a dump attn wrote") != std::string::npos);
  CHECK(read_file(tmp.path / "keep.txt") == "mine");

  const auto under_file = attn_run({"lesson", "causal", "--dump", (tmp.path / "keep.txt" / "sub" / "dir").string()});
  CHECK(under_file.status == 2);
  CHECK(under_file.err.find("keep.txt is not a directory") != std::string::npos);

  // A bad option after --dump: the lesson is refused before anything is written, and the
  // missing parent new/ is not created either.
  const auto refused = attn_run({"lesson", "heads", "--heads", "3", "--dump", (tmp.path / "new" / "d").string()});
  CHECK(refused.status == 2);
  CHECK_FALSE(fs::exists(tmp.path / "new"));
  std::size_t entries = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(tmp.path)) ++entries;
  CHECK(entries == 1);  // keep.txt only: no temporary directory left over
}

TEST_CASE("--dump out/causal in a fresh directory creates out/, and running it again replaces the dump") {
  // Exactly as README.md and docs/interop.md write it, from a directory without out/.
  TempDir tmp;
  const std::string in_tmp = "cd '" + tmp.path.string() + "' && '" + kAttn + "' lesson ";
  const auto first = run_shell(in_tmp + "heads --dump out/causal");
  CAPTURE(first.err);
  REQUIRE(first.status == 0);
  REQUIRE(fs::exists(tmp.path / "out" / "causal" / "manifest.json"));
  CHECK(fs::exists(tmp.path / "out" / "causal" / "s14_q_wrong.npy"));  // a file only heads writes

  // A re-run, as a notebook cell is re-run: the new dump replaces the old one whole, so no file
  // of the heads dump survives beside the causal one, and nothing else is left in out/.
  const auto again = run_shell(in_tmp + "causal --seed 1 --dump out/causal");
  CAPTURE(again.err);
  REQUIRE(again.status == 0);
  const std::string manifest = read_file(tmp.path / "out" / "causal" / "manifest.json");
  CHECK(manifest.find("\"command\": \"attn lesson causal --seed 1 --dump out/causal\"") != std::string::npos);
  const auto listed = manifest_files(manifest);
  std::size_t on_disk = 0;
  for (const auto& e : fs::directory_iterator(tmp.path / "out" / "causal")) {
    CAPTURE(e.path().filename().string());
    if (e.path().filename() == "manifest.json") continue;
    ++on_disk;
    CHECK(std::find(listed.begin(), listed.end(), e.path().filename().string()) != listed.end());
  }
  CHECK(on_disk == listed.size());
  std::size_t beside = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(tmp.path / "out")) ++beside;
  CHECK(beside == 1);  // causal only: no staging or previous dump left over

  // A dump directory the learner added a file to is no longer attn's to replace.
  write_file(tmp.path / "out" / "causal" / "notes.txt", "mine");
  const auto kept = run_shell(in_tmp + "causal --dump out/causal");
  CHECK(kept.status == 2);
  CHECK(kept.out.empty());
  CHECK(kept.err.find("exists and is not a dump attn wrote") != std::string::npos);
  CHECK(read_file(tmp.path / "out" / "causal" / "notes.txt") == "mine");
  CHECK(read_file(tmp.path / "out" / "causal" / "manifest.json") == manifest);
}

TEST_CASE("--input: .npy and text files set the sizes, broken files are refused in one line") {
  TempDir tmp;
  const float values[] = {0.1f, 0.2f, 0.3f, 0.4f, 0.5f, 0.6f, 0.7f, 0.8f};
  const std::string good = attn::encode_npy({4, 2}, values);
  write_file(tmp.path / "x.npy", good);
  const auto r = attn_run({"lesson", "causal", "--input", (tmp.path / "x.npy").string(), "--shapes-only"});
  CHECK(r.status == 0);
  CHECK(r.out.find("x (4, 2)") != std::string::npos);
  CHECK(r.out.find("attn_scores (4, 4)") != std::string::npos);

  write_file(tmp.path / "x.csv", "0.1, 0.2, 0.3\n0.4, 0.5, 0.6\n");
  const auto csv = attn_run({"lesson", "self-attention", "--input", (tmp.path / "x.csv").string(), "--tokens", "hello world"});
  CHECK(csv.status == 0);
  CHECK(csv.out.find("# world") != std::string::npos);

  write_file(tmp.path / "short.npy", good.substr(0, good.size() - 4));
  write_file(tmp.path / "ints.npy", std::string(good).replace(good.find("<f4"), 3, "<i4"));
  write_file(tmp.path / "ragged.csv", "1 2\n3\n");
  write_file(tmp.path / "x.json", "[[1, 2]]");
  struct Case {
    std::vector<std::string> args;
    std::string says;
  };
  const std::vector<Case> cases = {
      {{"--input", (tmp.path / "short.npy").string()}, "needs 32"},
      {{"--input", (tmp.path / "ints.npy").string()}, "'<i4' is not supported"},
      {{"--input", (tmp.path / "ragged.csv").string()}, "line 2 has 1 values"},
      {{"--input", (tmp.path / "x.json").string()}, ".npy, .csv, .tsv or .txt"},
      {{"--input", (tmp.path / "missing.npy").string()}, "no such file"},
      {{"--input", (tmp.path / "x.npy").string(), "--d-in", "3"}, "--d-in disagrees with --input"},
      {{"--weights", (tmp.path / "nowhere").string()}, "no such directory"},
      {{"--weights", (tmp.path / "x.npy").string()}, "not a directory"},
      {{"--weights", tmp.path.string()}, "W_query.npy, W_key.npy, W_value.npy"},
      {{"--weights-layout", "torch"}, "--weights-layout needs --weights"},
      {{"--format", "yaml"}, "text or json"},
      {{"--preset", "llama"}, "does not configure lesson 'causal'"},
      {{"--kv-heads", "1"}, "does not take --kv-heads"},
  };
  for (const auto& c : cases) {
    std::vector<std::string> args = {"lesson", "causal"};
    args.insert(args.end(), c.args.begin(), c.args.end());
    CAPTURE(c.says);
    const auto bad = attn_run(args);
    CHECK(bad.status == 2);
    CHECK(bad.out.empty());
    CHECK(bad.err.rfind("attn: error: ", 0) == 0);
    CHECK(std::count(bad.err.begin(), bad.err.end(), '\n') == 1);
    CHECK(bad.err.find(c.says) != std::string::npos);
  }
}

TEST_CASE("attn list --presets, and a preset's run") {
  const auto list = attn_run({"list", "--presets"});
  CHECK(list.status == 0);
  for (const char* p : {"raschka", "phillips", "rakesh", "llama"}) CHECK(list.out.find(p) != std::string::npos);
  const auto llama = attn_run({"lesson", "heads", "--preset", "llama"});
  CHECK(llama.status == 0);
  CHECK(llama.out.find("attn_weights (1, 24, 9, 9)") != std::string::npos);
  CHECK(llama.out.find("tensor(") == std::string::npos);  // shapes only by default
  CHECK(llama.out.find("NOT Llama's") != std::string::npos);
}

// The scores_rnn fixture (PyTorch 1.13, tests/data/cases.json) through the command line: its
// inputs go in as --states and --weights files, the lesson's --format json comes back, and every
// tensor the fixture holds is compared at 1e-5, in the torch layout the fixture uses and in the
// math layout (the matrices written transposed).
namespace {

const std::string kData = ATTN_TEST_DATA;

attn::NpyArray fixture(const std::string& name) { return attn::read_npy(kData + "/scores_rnn__" + name + ".npy"); }

// The fixture's tensor `name` saved as dir/`as`.npy, transposed when `transpose` (a 2-D matrix).
void save_fixture(const fs::path& dir, const std::string& name, const std::string& as, bool transpose = false) {
  attn::NpyArray a = fixture(name);
  if (transpose) {
    const std::size_t rows = a.shape[0], cols = a.shape[1];
    std::vector<float> t(a.values.size());
    for (std::size_t r = 0; r < rows; ++r)
      for (std::size_t c = 0; c < cols; ++c) t[c * rows + r] = a.values[r * cols + c];
    a.values = t;
    a.shape = {cols, rows};
  }
  write_file(dir / (as + ".npy"), attn::encode_npy(a.shape, a.values.data()));
}

void check_against_fixture(const std::string& json, const std::string& shown, const std::string& file) {
  CAPTURE(shown);
  const auto got = json_values(json, shown);
  const attn::NpyArray want = fixture(file);
  REQUIRE(got.size() == want.values.size());
  for (std::size_t i = 0; i < got.size(); ++i) CHECK(std::fabs(got[i] - want.values[i]) <= 1e-5);
}

// A directory with the fixture's states (H, s, h_t) and one with its weights in `layout`.
struct RnnFixtureDirs {
  TempDir tmp;
  fs::path states, weights;
  explicit RnnFixtureDirs(bool math) {
    states = tmp.path / "states";
    weights = tmp.path / "weights";
    fs::create_directories(states);
    fs::create_directories(weights);
    for (const char* n : {"H", "s", "h_t"}) save_fixture(states, n, n);
    for (const char* n : {"W_a", "U_a", "W_c"}) save_fixture(weights, n, n, math);
    for (const char* n : {"v_a", "v_c", "W_g"}) save_fixture(weights, n, n);  // W_g reads the same either way
  }
};

}  // namespace

TEST_CASE("bahdanau and luong reproduce every tensor of the scores_rnn fixture from --states and --weights") {
  for (const bool math : {false, true}) {
    CAPTURE(math);
    RnnFixtureDirs dirs(math);
    const std::string layout = math ? "math" : "torch";
    const auto b = attn_run({"lesson", "bahdanau", "--states", dirs.states.string(), "--weights",
                             dirs.weights.string(), "--weights-layout", layout, "--format", "json"});
    REQUIRE(b.status == 0);
    CHECK(b.err.empty());
    for (const auto& [shown, file] : std::vector<std::pair<std::string, std::string>>{
             {"H", "H"}, {"s", "s"}, {"W_a", "W_a"}, {"U_a", "U_a"}, {"v_a", "v_a"},
             {"e", "e_additive"}, {"alpha", "alpha_additive"}, {"c", "context_additive"}})
      check_against_fixture(b.out, shown, file);
    // Nothing was drawn, so the header claims no seed.
    CHECK(b.out.find("manual_seed") == std::string::npos);
    CHECK(b.out.find("\"seed ") == std::string::npos);

    const auto l = attn_run({"lesson", "luong", "--states", dirs.states.string(), "--weights",
                             dirs.weights.string(), "--weights-layout", layout, "--format", "json"});
    REQUIRE(l.status == 0);
    CHECK(l.err.empty());
    for (const auto& [shown, file] : std::vector<std::pair<std::string, std::string>>{
             {"h_enc", "H"}, {"h_t", "h_t"}, {"W_g", "W_g"}, {"W_c", "W_c"}, {"v_c", "v_c"},
             {"e_dot", "e_dot"}, {"e_general", "e_general"}, {"e_concat", "e_concat"}})
      check_against_fixture(l.out, shown, file);
    CHECK(l.out.find("manual_seed") == std::string::npos);
  }
}

// The header's "reproduce in PyTorch" block as the learner pastes it: the lines under that heading.
std::vector<std::string> reproduce_block(const std::string& out) {
  std::vector<std::string> lines;
  std::istringstream in(out);
  bool inside = false;
  for (std::string line; std::getline(in, line);) {
    if (line == "reproduce in PyTorch:") inside = true;
    else if (inside && line.rfind("    ", 0) == 0) lines.push_back(line.substr(4));
    else if (inside) break;
  }
  return lines;
}

// Whether every torch., nn. and np. in the block's code (comments aside) comes after the line that
// imports it: pasted into Python, a block runs only then.
bool imports_cover_uses(const std::vector<std::string>& block, std::string& why) {
  bool torch = false, nn = false, np = false;
  auto uses = [](const std::string& line, const std::string& prefix) {
    for (auto at = line.find(prefix); at != std::string::npos; at = line.find(prefix, at + 1))
      if (at == 0 || !(std::isalnum(static_cast<unsigned char>(line[at - 1])) || line[at - 1] == '_')) return true;
    return false;
  };
  for (const auto& line : block) {
    const std::string code = line.substr(0, line.find('#'));
    if (code.rfind("import ", 0) == 0 || code.rfind("from ", 0) == 0) {
      torch = torch || code.find("torch") != std::string::npos;
      np = np || code.find("numpy as np") != std::string::npos;
      nn = nn || code.find("from torch import nn") != std::string::npos;
      continue;
    }
    if ((uses(code, "torch.") && !torch) || (uses(code, "nn.") && !nn) || (uses(code, "np.") && !np)) {
      why = "used before its import: " + line;
      return false;
    }
  }
  return true;
}

TEST_CASE("the RNN lessons' reproduce blocks import what they use, in every mode") {
  RnnFixtureDirs dirs(false);
  const std::string st = dirs.states.string(), w = dirs.weights.string(), x = std::string(ATTN_TEST_DATA) + "/scores_rnn__H.npy";
  const std::vector<std::vector<std::string>> runs = {
      {"bottleneck"}, {"bahdanau"}, {"luong"},
      {"bottleneck", "--input", x}, {"bahdanau", "--input", x}, {"luong", "--input", x},
      {"bahdanau", "--states", st}, {"luong", "--states", st},
      {"bahdanau", "--states", st, "--weights", w, "--weights-layout", "torch"},
      {"luong", "--states", st, "--weights", w, "--weights-layout", "torch"},
  };
  for (const auto& args : runs) {
    std::vector<std::string> argv = {"lesson"};
    argv.insert(argv.end(), args.begin(), args.end());
    const auto r = attn_run(argv);
    std::string line = "attn";
    for (const auto& a : argv) line += " " + a;
    CAPTURE(line);
    CAPTURE(r.err);
    REQUIRE(r.status == 0);
    const auto block = reproduce_block(r.out);
    REQUIRE(!block.empty());
    std::string why;
    CHECK_MESSAGE(imports_cover_uses(block, why), why);
  }
}

TEST_CASE("--states alone: the files set every width, --hidden plays no part, the scoring weights come from the seed") {
  RnnFixtureDirs dirs(false);
  const auto b = attn_run({"lesson", "bahdanau", "--states", dirs.states.string(), "--shapes-only"});
  REQUIRE(b.status == 0);
  CHECK(b.out.find("d_enc 4") != std::string::npos);
  CHECK(b.out.find("d_s 3") != std::string::npos);
  CHECK(b.out.find("W_a (3, 3)") != std::string::npos);  // d_a = d_s when drawn
  CHECK(b.out.find("U_a (3, 4)") != std::string::npos);
  CHECK(b.out.find("torch.manual_seed(2014)") != std::string::npos);
  CHECK(b.out.find("skipped") != std::string::npos);  // says the lesson's encoder is not run
  const auto l = attn_run({"lesson", "luong", "--states", dirs.states.string(), "--shapes-only"});
  REQUIRE(l.status == 0);
  CHECK(l.out.find("W_c (4, 8)") != std::string::npos);
  CHECK(l.out.find("e_dot (6,)") != std::string::npos);

  // Several decoder states, one per row: every row is scored.
  attn::NpyArray s = fixture("s");
  std::vector<float> two(s.values);
  two.insert(two.end(), s.values.begin(), s.values.end());
  write_file(dirs.states / "s.npy", attn::encode_npy({2, 3}, two.data()));
  const auto rows = attn_run({"lesson", "bahdanau", "--states", dirs.states.string(), "--weights",
                              dirs.weights.string(), "--weights-layout", "torch", "--tgt", "le chat",
                              "--format", "json"});
  REQUIRE(rows.status == 0);
  const auto alpha = json_values(rows.out, "alpha");
  const attn::NpyArray want = fixture("alpha_additive");
  REQUIRE(alpha.size() == 12);
  for (std::size_t i = 0; i < 12; ++i) CHECK(std::fabs(alpha[i] - want.values[i % 6]) <= 1e-5);
}

TEST_CASE("the RNN lessons refuse missing, misshaped and conflicting tensors in one line") {
  RnnFixtureDirs dirs(false);
  TempDir extra;
  const std::string st = dirs.states.string(), w = dirs.weights.string();
  // A states directory without s.npy, and weights with a wrong U_a.
  fs::create_directories(extra.path / "no_s");
  save_fixture(extra.path / "no_s", "H", "H");
  fs::create_directories(extra.path / "bad_w");
  for (const char* n : {"W_a", "v_a"}) save_fixture(extra.path / "bad_w", n, n);
  save_fixture(extra.path / "bad_w", "W_g", "U_a");  // (4, 4), not (5, 4)
  fs::create_directories(extra.path / "empty");
  struct Case {
    std::vector<std::string> args;
    std::string says;
  };
  const std::vector<Case> cases = {
      {{"bahdanau", "--states", (extra.path / "no_s").string()}, "--states is missing s.npy"},
      {{"bahdanau", "--states", (extra.path / "no_s").string()}, "(d_s,) or (T, d_s) vs no such file"},
      {{"bahdanau", "--states", (extra.path / "empty").string()}, "H.npy, s.npy vs none"},
      {{"luong", "--states", (extra.path / "empty").string()}, "H.npy, h_t.npy vs none"},
      {{"bahdanau", "--weights", (extra.path / "empty").string()}, "W_a.npy, U_a.npy, v_a.npy vs none"},
      {{"luong", "--weights", (extra.path / "empty").string()}, "W_g.npy, W_c.npy, v_c.npy vs none"},
      {{"bahdanau", "--states", st, "--weights", w}, "W_a.npy has the wrong shape; it fits --weights-layout torch"},
      {{"bahdanau", "--states", st, "--weights", w}, "(d_s, d_a) = (3, d_a) in math layout (in, out) vs (5, 3)"},
      {{"bahdanau", "--states", st, "--weights", (extra.path / "bad_w").string(), "--weights-layout", "torch"},
       "U_a.npy has the wrong shape"},
      {{"bahdanau", "--states", st, "--weights", (extra.path / "bad_w").string(), "--weights-layout", "torch"},
       "(d_a, d_enc) = (5, 4) in torch layout (out, in) vs (4, 4)"},
      {{"luong", "--weights", w, "--weights-layout", "torch"}, "W_g.npy has the wrong shape"},
      {{"luong", "--weights", w, "--weights-layout", "torch"}, "(d_h, d_h) = (8, 8) in either layout vs (4, 4)"},
      {{"bahdanau", "--states", st, "--input", (dirs.states / "H.npy").string()}, "--input and --states contradict"},
      {{"luong", "--states", st, "--hidden", "4"}, "--hidden and --states contradict"},
      {{"luong", "--states", st, "--d-in", "4"}, "--d-in and --states contradict"},
      {{"bahdanau", "--states", st, "--weights", w, "--weights-layout", "torch", "--seed", "3"},
       "--seed has nothing to draw"},
      {{"bahdanau", "--states", st, "--src", "a b"}, "--src does not label every row of H.npy (--src: one word for each of its 6 rows vs 2 words)"},
      {{"luong", "--states", st, "--tgt", "a b"}, "--tgt does not label every decoder state in h_t.npy"},
      // The count expected is the file's, the count given is the learner's; each says whose it is.
      {{"luong", "--states", st, "--tgt", "a b"}, "(--tgt: one word for its one state vs 2 words)"},
      {{"causal", "--input", std::string(ATTN_TEST_DATA) + "/mha_causal_nobias__x.npy", "--tokens", "a b c"},
       "--tokens does not label every row of --input (--tokens: one word for each of its 5 rows vs 3 words)"},
      {{"bottleneck", "--states", st}, "lesson 'bottleneck' does not take --states"},
      {{"bottleneck", "--weights", w}, "lesson 'bottleneck' does not take --weights"},
      {{"causal", "--states", st}, "lesson 'causal' does not take --states"},
  };
  for (const auto& c : cases) {
    std::vector<std::string> args = {"lesson"};
    args.insert(args.end(), c.args.begin(), c.args.end());
    CAPTURE(c.says);
    const auto bad = attn_run(args);
    CHECK(bad.status == 2);
    CHECK(bad.out.empty());
    CHECK(bad.err.rfind("attn: error: ", 0) == 0);
    CHECK(std::count(bad.err.begin(), bad.err.end(), '\n') == 1);
    CHECK(bad.err.find(c.says) != std::string::npos);
  }
}

namespace {

// One refusal: status 2, nothing on stdout, one line on stderr that holds every piece of `says`.
void check_refused(const std::vector<std::string>& args, const std::vector<std::string>& says) {
  std::vector<std::string> full = {"lesson"};
  full.insert(full.end(), args.begin(), args.end());
  const auto bad = attn_run(full);
  std::string joined;
  for (const auto& a : args) joined += a + " ";
  CAPTURE(joined);
  CAPTURE(bad.err);
  CHECK(bad.status == 2);
  CHECK(bad.out.empty());
  CHECK(bad.err.rfind("attn: error: ", 0) == 0);
  CHECK(std::count(bad.err.begin(), bad.err.end(), '\n') == 1);
  for (const auto& piece : says) CHECK(bad.err.find(piece) != std::string::npos);
}

// Every run of white space (the wrapping of notes) as one space.
std::string one_spaced(const std::string& text) {
  std::string out;
  for (const char c : text) {
    const bool blank = c == ' ' || c == '\n';
    if (blank && !out.empty() && out.back() == ' ') continue;
    out += blank ? ' ' : c;
  }
  return out;
}

std::string npy_of(const attn::Shape& shape, const std::vector<float>& values) {
  return attn::encode_npy(shape, values.data());
}

std::string npy_f8(const std::string& shape, const std::vector<double>& values) {
  std::string header = "{'descr': '<f8', 'fortran_order': False, 'shape': " + shape + ", }";
  header.append((64 - (10 + header.size() + 1) % 64) % 64, ' ');
  header += '\n';
  std::string out("\x93NUMPY\x01\x00", 8);
  out += static_cast<char>(header.size() & 0xFF);
  out += static_cast<char>(header.size() >> 8);
  out += header;
  out.append(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(double));
  return out;
}

}  // namespace

TEST_CASE("non-finite values in --input, --weights and --states are refused, naming the file, the position and the value") {
  TempDir tmp;
  const float nan = std::nanf(""), inf = INFINITY;
  write_file(tmp.path / "nan.npy", npy_of({2, 3}, {0.1f, 0.2f, 0.3f, 0.4f, nan, 0.6f}));
  write_file(tmp.path / "inf.npy", npy_of({1, 2, 3}, {0.1f, 0.2f, 0.3f, -inf, 0.5f, inf}));
  write_file(tmp.path / "big.npy", npy_f8("(2, 3)", {0.1, 0.2, 1e300, 0.4, 0.5, 0.6}));
  write_file(tmp.path / "big.csv", "0.1, 0.2, 0.3\n0.4, 1e39, 0.6\n");
  write_file(tmp.path / "hex.csv", "0.1 0x1p302 0.3\n");
  write_file(tmp.path / "nan.csv", "0.1 0.2 0.3\n0.4 nan 0.6\n");
  fs::create_directories(tmp.path / "w");
  const std::vector<float> good(6, 0.25f);
  write_file(tmp.path / "w" / "W_query.npy", npy_of({3, 2}, good));
  write_file(tmp.path / "w" / "W_key.npy", npy_of({3, 2}, {0.1f, 0.2f, 0.3f, inf, 0.5f, 0.6f}));
  write_file(tmp.path / "w" / "W_value.npy", npy_of({3, 2}, good));
  fs::create_directories(tmp.path / "st");
  write_file(tmp.path / "st" / "H.npy", npy_of({2, 2}, {0.1f, 0.2f, 0.3f, 0.4f}));
  write_file(tmp.path / "st" / "s.npy", npy_of({2}, {nan, 0.2f}));
  const std::string d = tmp.path.string();

  check_refused({"causal", "--input", d + "/nan.npy"},
                {"--input " + d + "/nan.npy holds a non-finite value", "finite numbers (or --allow-nonfinite) vs nan at [1, 1]"});
  check_refused({"causal", "--input", d + "/inf.npy"}, {"holds 2 non-finite values", "-inf at [0, 1, 0], the first of 2"});
  check_refused({"causal", "--input", d + "/big.npy"}, {"inf at [0, 2]"});  // float64 beyond float32
  check_refused({"causal", "--input", d + "/big.csv"}, {"big.csv: line 2, column 2: '1e39' overflows float32"});
  check_refused({"causal", "--input", d + "/hex.csv"}, {"line 1, column 2: '0x1p302' overflows float32"});
  check_refused({"causal", "--input", d + "/nan.csv"}, {"line 2, column 2: 'nan' is not a finite number"});
  check_refused({"self-attention", "--weights", d + "/w"}, {"--weights " + d + "/w/W_key.npy holds a non-finite value", "inf at [1, 1]"});
  check_refused({"bahdanau", "--states", d + "/st"}, {"--states " + d + "/st/s.npy holds a non-finite value", "nan at [0]"});
}

TEST_CASE("--allow-nonfinite passes NaN and inf through, and the first stage says where they are") {
  TempDir tmp;
  const float nan = std::nanf("");
  write_file(tmp.path / "x.npy", npy_of({2, 3}, {0.1f, 0.2f, 0.3f, 0.4f, nan, 0.6f}));
  write_file(tmp.path / "x.csv", "0.1, 0.2, 0.3\n0.4, 1e39, -inf\n");
  const auto npy = attn_run({"lesson", "causal", "--input", (tmp.path / "x.npy").string(), "--allow-nonfinite"});
  CAPTURE(npy.err);
  // Accepted: the NaN reaches the softmax, so the lesson's own checks fail (status 3), as they should.
  CHECK(npy.status == 3);
  const std::string out = one_spaced(npy.out);
  const auto stage2 = out.find("[2/");
  const auto note = out.find("holds 1 non-finite value (kept by --allow-nonfinite): nan at [1, 1]. It spreads");
  CHECK(note != std::string::npos);
  CHECK(note < stage2);  // in the first stage
  CHECK(out.find("[0.4000, nan, 0.6000]") != std::string::npos);  // the value itself went through
  const auto csv = attn_run({"lesson", "self-attention", "--input", (tmp.path / "x.csv").string(), "--allow-nonfinite"});
  CHECK(csv.status != 2);
  CHECK(one_spaced(csv.out).find("holds 2 non-finite values (kept by --allow-nonfinite): inf at [1, 1], -inf at [1, 2]. They spread") !=
        std::string::npos);
  // Without a file to apply to, the flag is refused like any option that would do nothing.
  check_refused({"causal", "--allow-nonfinite"}, {"--allow-nonfinite has no file to apply to"});
}

TEST_CASE("NaN narration: an overflow is named as one, sentences hold no -nan, a NaN question fails the run") {
  TempDir tmp;
  // Every value 1e30 is finite, but the scores (about 1e60) are not: an overflow, not a masked row.
  write_file(tmp.path / "big.npy", npy_of({6, 3}, std::vector<float>(18, 1e30f)));
  const auto big = attn_run({"lesson", "causal", "--input", (tmp.path / "big.npy").string()});
  CAPTURE(big.err);
  CHECK(big.status == 3);
  const std::string out = one_spaced(big.out);
  CHECK(out.find("Overflow: `attn_scores` holds inf (first at [0, 0]) though every value before it is finite") !=
        std::string::npos);
  CHECK(out.find("?? is nan: an overflow to inf, first in `attn_scores` [0, 0] (stage 3)") != std::string::npos);
  CHECK(out.find("nothing to attend to") == std::string::npos);  // no row was masked whole
  CHECK(out.find("-nan") == std::string::npos);
  CHECK(out.find("Here the last row (\"t6\") holds nan, so it weights no token at all.") != std::string::npos);
  CHECK(out.find("question: ") == std::string::npos);  // every question's measure is NaN: none answered yes or no
  CHECK(out.find("question UNANSWERED: do the two routes give the same attn_weights here?") != std::string::npos);
  CHECK(big.err.find("attn: question unanswered in stage 7: do the two routes give the same attn_weights here?") !=
        std::string::npos);

  // inf in out_proj, kept: the mistake's question cannot be answered, and the run says so (status 3).
  const auto dump = attn_run({"lesson", "heads", "--dump", (tmp.path / "d").string()});
  REQUIRE(dump.status == 0);
  fs::create_directories(tmp.path / "w");
  for (const char* n : {"W_query", "W_key", "W_value"}) {
    const attn::NpyArray w = attn::read_npy((tmp.path / "d" / (std::string("s02_") + n + "_weight.npy")).string());
    write_file(tmp.path / "w" / (std::string(n) + ".npy"), npy_of(w.shape, w.values));
  }
  const attn::NpyArray o = attn::read_npy((tmp.path / "d" / "s02_out_proj_weight.npy").string());
  std::vector<float> proj = o.values;
  proj[0] = std::numeric_limits<float>::infinity();
  write_file(tmp.path / "w" / "out_proj.npy", npy_of(o.shape, proj));
  const auto inf = attn_run({"lesson", "heads", "--weights", (tmp.path / "w").string(), "--weights-layout", "torch",
                             "--allow-nonfinite"});
  CAPTURE(inf.err);
  CHECK(inf.status == 3);
  CHECK(one_spaced(inf.out).find("question UNANSWERED: does the mistake change the output here?") != std::string::npos);
  CHECK(one_spaced(inf.out).find("-nan") == std::string::npos);
  CHECK(inf.err.find("attn: question unanswered in stage") != std::string::npos);
}

TEST_CASE("an unreadable --weights directory is named as unreadable, not as empty") {
  TempDir tmp;
  fs::create_directories(tmp.path / "locked");
  write_file(tmp.path / "locked" / "W_query.npy", npy_of({3, 2}, std::vector<float>(6, 0.5f)));
  fs::permissions(tmp.path / "locked", fs::perms::none);
  fs::permissions(tmp.path, fs::perms::all);  // others may reach it, to be refused at "locked"
  std::vector<std::string> args{kAttn, "lesson", "causal", "--weights", (tmp.path / "locked").string()};
  // Root reads any directory: run attn as nobody there (setpriv is util-linux's, on every Debian).
  if (::geteuid() == 0) {
    if (!fs::exists("/usr/bin/setpriv")) {
      MESSAGE("skipped: running as root without /usr/bin/setpriv");
      fs::permissions(tmp.path / "locked", fs::perms::owner_all);
      return;
    }
    args.insert(args.begin(), {"/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"});
  }
  const auto r = run(args);
  fs::permissions(tmp.path / "locked", fs::perms::owner_all);  // so that TempDir can remove it
  CAPTURE(r.err);
  CHECK(r.status == 2);
  CHECK(r.out.empty());
  CHECK(r.err.find("attn: error: cannot read --weights") == 0);
  CHECK(r.err.find("(Permission denied)") != std::string::npos);
  CHECK(r.err.find("none of the expected") == std::string::npos);
}

TEST_CASE("weights with no values, and biases a lesson would ignore, are refused") {
  TempDir tmp;
  fs::create_directories(tmp.path / "zero");
  for (const char* n : {"W_query", "W_key", "W_value"}) write_file(tmp.path / "zero" / (std::string(n) + ".npy"), npy_of({3, 0}, {}));
  check_refused({"self-attention", "--weights", (tmp.path / "zero").string()}, {"W_query.npy holds no values", "every axis at least 1 vs (3, 0)"});
  check_refused({"heads", "--weights", (tmp.path / "zero").string()}, {"W_query.npy holds no values"});

  fs::create_directories(tmp.path / "bias");
  const std::vector<float> w(6, 0.5f);
  for (const char* n : {"W_query", "W_key", "W_value"}) write_file(tmp.path / "bias" / (std::string(n) + ".npy"), npy_of({3, 2}, w));
  write_file(tmp.path / "bias" / "W_key_bias.npy", npy_of({2}, {0.1f, 0.2f}));
  for (const char* lesson : {"self-attention", "causal"})
    check_refused({lesson, "--weights", (tmp.path / "bias").string()},
                  {std::string(lesson) + " does not use W_key_bias.npy (it has no biases); the heads",  // and any later lesson
                   "take", "W_query.npy, W_key.npy, W_value.npy vs"});
  check_refused({"gqa", "--weights", (tmp.path / "bias").string()},
                {"gqa does not use W_key_bias.npy (it has no biases); the heads", "take",
                 "W_query.npy, W_key.npy, W_value.npy, out_proj.npy vs"});
  // Without the bias the same directory is taken.
  fs::remove(tmp.path / "bias" / "W_key_bias.npy");
  CHECK(attn_run({"lesson", "causal", "--weights", (tmp.path / "bias").string()}).status == 0);
  write_file(tmp.path / "bias" / "out_proj.npy", npy_of({2, 2}, {1, 0, 0, 1}));
  check_refused({"causal", "--weights", (tmp.path / "bias").string()}, {"causal does not use out_proj.npy; the heads", "take"});
}

TEST_CASE("files and directories: misleading messages corrected") {
  TempDir tmp;
  fs::create_directories(tmp.path / "dir.npy");
  check_refused({"causal", "--input", (tmp.path / "dir.npy").string()}, {"(a directory, not a file)"});
  check_refused({"causal", "--input", (tmp.path / "none.csv").string()}, {"(no such file)"});
  fs::create_directories(tmp.path / "w" / "W_query.npy");
  check_refused({"causal", "--weights", (tmp.path / "w").string()}, {"W_query.npy: a directory, not a file"});
  check_refused({"causal", "--seed", "1", "--seed", "2"}, {"--seed was given more than once (--seed: once vs 2 times)"});
  check_refused({"causal", "--seed"}, {"--seed needs a value"});
}

TEST_CASE("--dump: a trailing slash names the same directory, an empty path is refused like --svg") {
  TempDir tmp;
  const auto slash = attn_run({"lesson", "causal", "--dump", (tmp.path / "out").string() + "/"});
  CAPTURE(slash.err);
  CHECK(slash.status == 0);
  CHECK(fs::exists(tmp.path / "out" / "manifest.json"));
  fs::create_directories(tmp.path / "empty");
  CHECK(attn_run({"lesson", "causal", "--dump", (tmp.path / "empty").string() + "//"}).status == 0);
  CHECK(fs::exists(tmp.path / "empty" / "manifest.json"));
  std::size_t entries = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(tmp.path)) ++entries;
  CHECK(entries == 2);  // out, empty: no temporary directory left beside them
  check_refused({"causal", "--dump", ""}, {"--dump needs a directory (--dump: a new or empty directory vs an empty path)"});
  check_refused({"causal", "--svg", ""}, {"--svg", "vs an empty path"});
}

TEST_CASE("CSV through --input: empty fields, NUL bytes, a byte-order mark, and bad values quoted short and escaped") {
  TempDir tmp;
  const std::string d = tmp.path.string();
  write_file(tmp.path / "gaps.csv", "1,,3\n4,,6\n");
  write_file(tmp.path / "nul.csv", std::string("1,2\n3,4\0\n", 9));
  write_file(tmp.path / "bom.csv", "\xEF\xBB\xBF" "0.1,0.2,0.3\n0.4,0.5,0.6\n");
  write_file(tmp.path / "long.csv", "1," + std::string(1 << 20, '7') + "x\n");
  write_file(tmp.path / "esc.csv", "1,\x1b[31mred\x07\n");
  check_refused({"causal", "--input", d + "/gaps.csv"}, {"gaps.csv: line 1, column 2: empty field"});
  check_refused({"causal", "--input", d + "/nul.csv"}, {"line 2, column 2: '4\\x00' is not a number"});
  const auto bom = attn_run({"lesson", "causal", "--input", d + "/bom.csv"});
  CHECK(bom.status == 0);
  CHECK(bom.out.find("shape (2, 3)") != std::string::npos);
  const auto longer = attn_run({"lesson", "causal", "--input", d + "/long.csv"});
  CHECK(longer.status == 2);
  CHECK(longer.err.size() < 200);
  CHECK(longer.err.find("'777777777777777777777777...' is not a number") != std::string::npos);
  const auto esc = attn_run({"lesson", "causal", "--input", d + "/esc.csv"});
  CHECK(esc.status == 2);
  CHECK(esc.err.find('\x1b') == std::string::npos);
  CHECK(esc.err.find('\x07') == std::string::npos);
  CHECK(esc.err.find("'\\x1b[31mred\\x07' is not a number") != std::string::npos);
}

TEST_CASE("--format json: tensors over 1000 values are summarised and the manifest says so, --full-json writes all") {
  const auto small = attn_run({"lesson", "causal", "--format", "json"});
  REQUIRE(small.status == 0);
  CHECK(small.out.find("\"values\": {\"mode\": \"inline\", \"inline_up_to\": 1000, \"summarised\": 0, ") != std::string::npos);
  CHECK(small.out.find("\"summary\": ") == std::string::npos);

  const auto big = attn_run({"lesson", "causal", "--seq-len", "100", "--format", "json"});
  REQUIRE(big.status == 0);
  CHECK(big.out.size() < 64 * 1024);
  // attn_scores, masked, scaled... are (100, 100): summarised; x (100, 3) is 300 values: whole.
  const auto at = big.out.find("{\"name\": \"attn_weights\", \"shape\": [100, 100], \"attention\": true, \"summary\": {\"values\": 10000, \"min\": 0, \"max\": 1, ");
  CHECK(at != std::string::npos);
  CHECK(big.out.find("\"nonfinite\": 0, \"first\": [1, 0, 0], \"last\": [") != std::string::npos);
  CHECK(big.out.find("\"summarised\": 0") == std::string::npos);
  CHECK(json_values(big.out, "x").size() == 300);

  const auto full = attn_run({"lesson", "causal", "--seq-len", "100", "--format", "json", "--full-json"});
  REQUIRE(full.status == 0);
  CHECK(full.out.find("\"values\": {\"mode\": \"inline\", \"inline_up_to\": null, \"summarised\": 0, ") != std::string::npos);
  const auto weights = json_values(full.out, "attn_weights");
  REQUIRE(weights.size() == 10000);
  CHECK(weights[0] == 1.0);  // the first query sees only itself
  CHECK(weights[1] == 0.0);
  // The summary's numbers are the full tensor's.
  double mean = 0;
  for (double w : weights) mean += w;
  CHECK(mean / 10000 == doctest::Approx(0.01).epsilon(1e-6));
}

TEST_CASE("--svg-panels draws only the panels picked, named as in the file names") {
  TempDir tmp;
  const std::vector<std::string> base = {"lesson", "heads", "--batch", "3", "--heads", "4", "--d-out", "8", "--seq-len", "3"};
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = base;
    args.insert(args.end(), extra.begin(), extra.end());
    return attn_run(args);
  };
  auto files = [&](const fs::path& dir) {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
  };
  const auto b1 = with({"--svg", (tmp.path / "b1").string(), "--svg-panels", "b1"});
  REQUIRE(b1.status == 0);
  const auto one = files(tmp.path / "b1");
  REQUIRE(one.size() == 4);  // every head of batch entry 1
  for (const auto& f : one) CHECK(f.find("-b1-h") != std::string::npos);
  CHECK(b1.out.find("pictures: 4 SVG files in ") != std::string::npos);

  const auto heads = with({"--svg", (tmp.path / "h").string(), "--svg-panels", "h0,b2-h3"});
  REQUIRE(heads.status == 0);
  CHECK(files(tmp.path / "h") == std::vector<std::string>{"heads-stage08-attn_weights-b0-h0.svg", "heads-stage08-attn_weights-b1-h0.svg",
                                                          "heads-stage08-attn_weights-b2-h0.svg", "heads-stage08-attn_weights-b2-h3.svg"});
  // Without a pick, all 12 (within the cap of 64).
  CHECK(with({"--svg", (tmp.path / "all").string()}).status == 0);
  CHECK(files(tmp.path / "all").size() == 12);
}

TEST_CASE("control characters in --tokens never reach the terminal: labels, notes and tables show '?'") {
  const auto r = attn_run({"lesson", "causal", "--tokens", "a\x1b[31mb c\x07 d"});
  REQUIRE(r.status == 0);
  CHECK(r.out.find('\x1b') == std::string::npos);
  CHECK(r.out.find('\x07') == std::string::npos);
  CHECK(r.out.find("  # a?[31mb") != std::string::npos);  // a row label
  CHECK(r.out.find("a?[31mb: ") != std::string::npos);    // the note naming each word's seed
  // The reproduce line keeps the real bytes, escaped as Python reads them.
  CHECK(r.out.find("b\"a\\x1b[31mb c\\x07 d\"") != std::string::npos);
}
