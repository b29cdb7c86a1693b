// The manifest and --format json read by a real JSON parser (nlohmann/json, a test-only
// dependency: the product writes its JSON by hand). What a notebook relies on: --shapes-only
// means names and shapes in every output; manifest version 3 carries the setting as an object,
// the token labels, and the command as a line a shell reads back into the same words; bytes that
// are not UTF-8 never make a document a parser rejects.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "process.hpp"
#include "scratch.hpp"

namespace fs = std::filesystem;
using attn::testing::read_file;
using attn::testing::TempDir;
using attn::testing::run;
using nlohmann::json;

namespace {

const std::string kAttn = ATTN_BINARY;
const std::string kData = ATTN_TEST_DATA;
const std::string kFffd = "\xEF\xBF\xBD";  // U+FFFD, the replacement character, in UTF-8

attn::testing::Result attn_run(std::vector<std::string> args) {
  args.insert(args.begin(), kAttn);
  return run(args);
}

// The document, parsed; a parse error fails the test with the parser's message.
json parse(const std::string& text) {
  json j;
  try {
    j = json::parse(text);
  } catch (const json::parse_error& e) {
    FAIL_CHECK("not JSON: " << e.what());
  }
  return j;
}

// attn lesson ARGS --format json, which must succeed, parsed.
json lesson_json(std::vector<std::string> args) {
  args.insert(args.begin(), "lesson");
  args.insert(args.end(), {"--format", "json"});
  const auto r = attn_run(args);
  REQUIRE_MESSAGE(r.status == 0, r.err);
  CHECK(r.err.empty());
  return parse(r.out);
}

// Each stage's tensors as "name (shape)" lines: what a run without values must still list.
std::vector<std::string> names_and_shapes(const json& m) {
  std::vector<std::string> out;
  for (const auto& s : m.at("stages"))
    for (const auto& t : s.at("tensors")) out.push_back(std::to_string(s.at("index").get<int>()) + " " +
                                                        t.at("name").get<std::string>() + " " + t.at("shape").dump());
  return out;
}

std::vector<std::string> lesson_names() {
  const auto r = attn_run({"list", "--names"});
  REQUIRE(r.status == 0);
  std::vector<std::string> names;
  std::istringstream in(r.out);
  for (std::string line; std::getline(in, line);) names.push_back(line);
  REQUIRE(names.size() >= 10);
  return names;
}

// The words bash makes of `line`: each printed with a NUL after it.
std::vector<std::string> shell_words(const std::string& line) {
  const auto r = run({"/bin/bash", "-c", "words() { printf '%s\\0' \"$@\"; }; words " + line});
  REQUIRE_MESSAGE(r.status == 0, r.err);
  std::vector<std::string> words;
  for (std::size_t at = 0; at < r.out.size();) {
    const std::size_t end = r.out.find('\0', at);
    words.push_back(r.out.substr(at, end - at));
    at = end + 1;
  }
  return words;
}

}  // namespace

TEST_CASE("--shapes-only --format json: every tensor's name and shape, and no values") {
  const json full = lesson_json({"causal"});
  const json shapes = lesson_json({"causal", "--shapes-only"});
  CHECK(full.at("values").at("mode") == "inline");
  CHECK(shapes.at("values").at("mode") == "none");
  CHECK(names_and_shapes(shapes) == names_and_shapes(full));  // the same stages, names and shapes
  std::size_t tensors = 0;
  for (const auto& s : shapes.at("stages"))
    for (const auto& t : s.at("tensors")) {
      CAPTURE(t.at("name"));
      ++tensors;
      CHECK(t.contains("shape"));
      CHECK_FALSE(t.contains("values"));
      CHECK_FALSE(t.contains("summary"));
      CHECK_FALSE(t.contains("file"));
    }
  CHECK(tensors >= 15);

  // The preset that is shapes-only by default once wrote every value of Llama's weights (382 MB
  // before summaries; summaries still made the run compute and hold 25 million): now the shapes.
  const auto llama = attn_run({"lesson", "heads", "--preset", "llama", "--format", "json"});
  REQUIRE(llama.status == 0);
  CHECK(llama.out.size() < 200 * 1024);
  CHECK(llama.out.find("\"summary\"") == std::string::npos);
  const json m = parse(llama.out);
  CHECK(m.at("values").at("mode") == "none");
  bool weights_seen = false;
  for (const auto& s : m.at("stages"))
    for (const auto& t : s.at("tensors"))
      if (t.at("name") == "attn_weights") weights_seen = t.at("shape") == json::array({1, 24, 9, 9});
  CHECK(weights_seen);

  // Past the sizes values may have, a shapes-only JSON run computes nothing and is not refused.
  const auto big = attn_run({"lesson", "heads", "--seq-len", "5000", "--batch", "64", "--shapes-only", "--format", "json"});
  REQUIRE_MESSAGE(big.status == 0, big.err);
  CHECK(big.out.find("\"name\": \"attn_scores\", \"shape\": [64, 2, 5000, 5000]") != std::string::npos);
  CHECK(parse(big.out).at("values").at("mode") == "none");

  // --full-json asks for every value: beside --shapes-only (or a shapes-only preset) it is refused.
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"lesson", "causal", "--shapes-only", "--format", "json", "--full-json"},
           {"lesson", "heads", "--preset", "llama", "--format", "json", "--full-json"}}) {
    const auto r = attn_run(args);
    CHECK(r.status == 2);
    CHECK(r.out.empty());
    CHECK(r.err.rfind("attn: error: --full-json writes every value, --shapes-only none (--full-json: ", 0) == 0);
    CHECK(r.err.find("add --values") != std::string::npos);
  }
}

TEST_CASE("--shapes-only --dump writes manifest.json alone, with every name and shape") {
  TempDir tmp{"attn-json"};
  const fs::path dir = tmp.path / "causal";
  const auto shapes = attn_run({"lesson", "causal", "--shapes-only", "--dump", dir.string()});
  REQUIRE_MESSAGE(shapes.status == 0, shapes.err);
  CHECK(shapes.out.find("\ntensor(") == std::string::npos);  // the text is shapes-only too: no tensor printed
  std::vector<std::string> files;
  for (const auto& e : fs::directory_iterator(dir)) files.push_back(e.path().filename().string());
  CHECK(files == std::vector<std::string>{"manifest.json"});
  const json m = parse(read_file(dir / "manifest.json"));
  CHECK(m.at("values").at("mode") == "none");
  for (const auto& s : m.at("stages"))
    for (const auto& t : s.at("tensors")) CHECK_FALSE(t.contains("file"));

  // A full dump replaces it (a manifest-only dump is a dump attn wrote), with the same tensors.
  const auto full = attn_run({"lesson", "causal", "--dump", dir.string()});
  REQUIRE_MESSAGE(full.status == 0, full.err);
  const json f = parse(read_file(dir / "manifest.json"));
  CHECK(f.at("values").at("mode") == "files");
  CHECK(names_and_shapes(f) == names_and_shapes(m));
  std::size_t npy = 0;
  for (const auto& s : f.at("stages"))
    for (const auto& t : s.at("tensors")) npy += fs::exists(dir / t.at("file").get<std::string>());
  CHECK(npy == names_and_shapes(f).size());
  // And a shapes-only dump replaces that one whole: no .npy file is left from before.
  REQUIRE(attn_run({"lesson", "causal", "--shapes-only", "--dump", dir.string()}).status == 0);
  std::size_t left = 0;
  for (const auto& e : fs::directory_iterator(dir)) left += e.path().extension() == ".npy";
  CHECK(left == 0);
}

TEST_CASE("manifest version 3: the setting as an object, the token labels, the schema fields") {
  TempDir tmp{"attn-json"};
  const fs::path dir = tmp.path / "d";
  const auto r = attn_run({"lesson", "causal", "--tokens", "the cat sat on it", "--seed", "7", "--dump", dir.string()});
  REQUIRE_MESSAGE(r.status == 0, r.err);
  const json m = parse(read_file(dir / "manifest.json"));
  CHECK(m.at("format") == "attn-manifest-3");
  CHECK(m.at("version") == 3);
  CHECK(m.at("lesson") == "causal");
  const json& setting = m.at("setting");
  REQUIRE(setting.is_object());
  CHECK(setting.at("seed").is_number_integer());
  CHECK(setting.at("seed") == 7);
  CHECK(setting.at("tokens") == 5);
  CHECK(setting.at("d_in") == 3);
  CHECK(setting.at("d_out") == 2);
  CHECK(m.at("setting_text").at(0) == "seed 7");  // the header's line, as printed
  CHECK(m.at("setting_notes").is_object());
  const std::vector<std::string> words = {"the", "cat", "sat", "on", "it"};
  CHECK(m.at("tokens").get<std::vector<std::string>>() == words);
  // Each labelled tensor names its rows' (and columns') labels by index into "labels".
  bool x_seen = false, weights_seen = false;
  for (const auto& s : m.at("stages"))
    for (const auto& t : s.at("tensors")) {
      if (t.at("name") == "x") {
        x_seen = true;
        CHECK(m.at("labels").at(t.at("row_labels").get<std::size_t>()).get<std::vector<std::string>>() == words);
      }
      if (t.at("name") == "attn_weights") {
        weights_seen = true;
        CHECK(m.at("labels").at(t.at("col_labels").get<std::size_t>()).get<std::vector<std::string>>() == words);
      }
      CHECK(fs::exists(dir / t.at("file").get<std::string>()));
    }
  CHECK(x_seen);
  CHECK(weights_seen);
  CHECK(m.at("checks").at("failed") == 0);

  // A setting with a note and several words in a name: bahdanau on the scores_rnn fixture's files.
  const fs::path states = tmp.path / "states", weights = tmp.path / "weights";
  fs::create_directories(states);
  fs::create_directories(weights);
  for (const char* n : {"H", "s"}) fs::copy_file(kData + "/scores_rnn__" + n + ".npy", states / (std::string(n) + ".npy"));
  for (const char* n : {"W_a", "U_a", "v_a"})
    fs::copy_file(kData + "/scores_rnn__" + n + ".npy", weights / (std::string(n) + ".npy"));
  const json b = lesson_json({"bahdanau", "--states", states.string(), "--weights", weights.string(),
                              "--weights-layout", "torch", "--shapes-only"});
  CHECK(b.at("setting").at("states") == states.string());
  CHECK(b.at("setting").at("weights") == weights.string());
  CHECK(b.at("setting_notes").at("weights") == "torch layout (out, in)");
  CHECK(b.at("setting").at("source_states").is_number_integer());
  const json seeded = lesson_json({"bahdanau", "--states", states.string(), "--shapes-only"});
  CHECK(seeded.at("setting").at("seed").is_number_integer());
  CHECK(seeded.at("setting_notes").at("seed") == "the alignment model");
}

TEST_CASE("the manifest's command, pasted into bash, runs the same command") {
  // Spaces, quotes, $, a backslash, a glob and bytes that are not UTF-8.
  const std::vector<std::string> args = {"lesson", "causal", "--tokens", "it's \"a\" $HOME \\n * caf\xC3\xA9 \xFF\xFE x\xE2\x82",
                                         "--seed", "3", "--format", "json"};
  const auto direct = attn_run(args);
  REQUIRE_MESSAGE(direct.status == 0, direct.err);
  const std::string command = parse(direct.out).at("command");
  CHECK(command.find("$'") != std::string::npos);  // the invalid bytes are written \xff, \xfe
  std::vector<std::string> want = {"attn"};
  want.insert(want.end(), args.begin(), args.end());
  CHECK(shell_words(command) == want);
  // Run as it stands, with `attn` the built binary: the same bytes come out.
  const auto again = run({"/bin/bash", "-c", "attn() { '" + kAttn + "' \"$@\"; }; " + command});
  CHECK(again.status == 0);
  CHECK(again.out == direct.out);
}

TEST_CASE("tokens that are not UTF-8: the JSON parses, each invalid sequence is U+FFFD") {
  // \xFF and \xFE are never UTF-8; \xE2\x82 is a three-byte sequence cut short (one U+FFFD);
  // \xC3\xA9 is a valid e-acute and stays; \xED\xA0\x80 would encode a surrogate (three U+FFFD).
  const std::string tokens = "ab\xFF\xFE cd caf\xC3\xA9 x\xE2\x82 s\xED\xA0\x80";
  const json m = lesson_json({"causal", "--tokens", tokens});
  const std::vector<std::string> want = {"ab" + kFffd + kFffd, "cd", "caf\xC3\xA9", "x" + kFffd,
                                         "s" + kFffd + kFffd + kFffd};
  CHECK(m.at("tokens").get<std::vector<std::string>>() == want);
  CHECK(m.at("values").at("mode") == "inline");
  // The same in a dump's manifest, and with --shapes-only.
  TempDir tmp{"attn-json"};
  REQUIRE(attn_run({"lesson", "heads", "--tokens", tokens, "--dump", (tmp.path / "d").string()}).status == 0);
  CHECK(parse(read_file(tmp.path / "d" / "manifest.json")).at("tokens").get<std::vector<std::string>>() == want);
  CHECK(lesson_json({"self-attention", "--tokens", tokens, "--shapes-only"}).at("tokens").get<std::vector<std::string>>() ==
        want);
}

TEST_CASE("every lesson and preset: the JSON parses, and each setting entry is a name and a value") {
  std::vector<std::vector<std::string>> runs;
  // align trains its model even without values (for its checks): 20 s in a Debug build, for the
  // same writer; its setting entries ("held-out 64") are covered by learn-heads' kind.
  for (const auto& name : lesson_names())
    if (name != "align") runs.push_back({name, "--shapes-only"});
  runs.push_back({"heads", "--preset", "llama"});
  runs.push_back({"heads", "--preset", "phillips", "--shapes-only"});
  runs.push_back({"heads", "--preset", "rakesh", "--shapes-only"});
  runs.push_back({"causal", "--preset", "evolution", "--shapes-only"});
  runs.push_back({"gqa", "--preset", "llama"});
  runs.push_back({"kv-cache", "--prompt-len", "3", "--rope-theta", "10000", "--d-in", "16", "--shapes-only"});
  // With values too, where they are cheap: NaN and infinities are written as strings.
  runs.push_back({"causal"});
  runs.push_back({"heads"});
  runs.push_back({"luong"});
  for (const auto& args : runs) {
    std::string label;
    for (const auto& a : args) label += a + " ";
    CAPTURE(label);
    const json m = lesson_json(args);
    CHECK(m.at("version") == 3);
    const json& setting = m.at("setting");
    REQUIRE(setting.is_object());
    CHECK(setting.size() == m.at("setting_text").size());  // one name per entry, none merged
    CHECK(setting.size() >= 2);
    for (const auto& [key, value] : setting.items()) {
      const auto& setting_name = key;  // clang 14 cannot capture a structured binding (CAPTURE is a lambda)
      CAPTURE(setting_name);
      CHECK(!key.empty());
      CHECK(key.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") == std::string::npos);
      const bool scalar = value.is_number() || value.is_boolean() || (value.is_string() && !value.get<std::string>().empty());
      bool numbers = value.is_array() && !value.empty();
      if (value.is_array())
        for (const auto& v : value) numbers = numbers && v.is_number();
      CHECK((scalar || numbers));
    }
    for (const auto& [key, note] : m.at("setting_notes").items()) CHECK((setting.contains(key) && note.is_string()));
    CHECK(m.at("tokens").is_array());
    CHECK(m.at("command").get<std::string>().rfind("attn lesson " + args[0], 0) == 0);
  }
}
