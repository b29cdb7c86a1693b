// attn model DIR --summary through the binary: the summary of a tiny checkpoint, checked line by
// line against what transformers prints and what the files hold; and the catalogue of broken
// checkpoints, each made at test time from a fixture in tests/data/models and each refused with
// status 2, nothing on stdout and one stderr line that names the file and the fault.
#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "io/model_config.hpp"
#include "io/checkpoint.hpp"  // expected_tensors: the names of the big sparse checkpoint
#include "process.hpp"
#include "scratch.hpp"

namespace fs = std::filesystem;
using attn::testing::read_file;
using attn::testing::run;
using attn::testing::TempDir;

namespace {

const std::string kAttn = ATTN_BINARY;
const std::string kModels = std::string(ATTN_TEST_DATA) + "/models";

void write(const fs::path& p, const std::string& bytes) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out << bytes;
}

// Replaces the first `from` in the file with `to`; the test fails when `from` is absent.
void replace(const fs::path& p, const std::string& from, const std::string& to) {
  std::string s = read_file(p);
  const auto at = s.find(from);
  REQUIRE_MESSAGE(at != std::string::npos, std::string(p.string() + " has no " + from));
  write(p, s.replace(at, from.size(), to));
}

std::string u64le(std::uint64_t n) {
  std::string s(8, '\0');
  for (int i = 0; i < 8; ++i) s[static_cast<std::size_t>(i)] = static_cast<char>((n >> (8 * i)) & 0xff);
  return s;
}

// Edits the header JSON of a safetensors file and writes the length it now has.
void edit_header(const fs::path& p, const std::string& from, const std::string& to) {
  const std::string s = read_file(p);
  std::uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | static_cast<unsigned char>(s[static_cast<std::size_t>(i)]);
  std::string header = s.substr(8, n);
  const auto at = header.find(from);
  REQUIRE_MESSAGE(at != std::string::npos, std::string("header has no " + from));
  header.replace(at, from.size(), to);
  write(p, u64le(header.size()) + header + s.substr(8 + n));
}

// A copy of fixture `name` in a fresh temporary folder, without the expected .npy files.
struct Copy {
  TempDir tmp{"attn-model-cli"};
  fs::path dir;
  explicit Copy(const std::string& name) : dir(tmp.path / name) {
    fs::create_directory(dir);
    for (const auto& e : fs::directory_iterator(kModels + "/" + name))
      if (e.is_regular_file()) fs::copy_file(e.path(), dir / e.path().filename());
  }
  fs::path operator/(const std::string& f) const { return dir / f; }
};

struct Refusal {
  std::string title;
  std::string fixture;
  std::function<void(const Copy&)> spoil;
  std::vector<std::string> names;  // each must be in the stderr line
};

const std::string kLlama = "llama3_tiny_bf16", kSharded = "llama_tiny_f16_sharded", kQwen = "qwen2_tiny";
const std::string kNorm = R"("model.norm.weight":{"dtype":"BF16","shape":[48],"data_offsets":[92544,92640]})";

std::vector<Refusal> refusals() {
  return {
      {"truncated file", kLlama, [](const Copy& c) { fs::resize_file(c / "model.safetensors", fs::file_size(c / "model.safetensors") - 10); },
       {"model.safetensors", "'model.norm.weight' runs past the end"}},
      {"header length past the end", kLlama, [](const Copy& c) { replace(c / "model.safetensors", read_file(c / "model.safetensors").substr(0, 8), u64le(200000)); },
       {"model.safetensors", "header length runs past the end", "200000"}},
      {"header too long", kLlama, [](const Copy& c) { replace(c / "model.safetensors", read_file(c / "model.safetensors").substr(0, 8), u64le(100000001)); },
       {"model.safetensors", "header length is too large", "100000000"}},
      {"header not JSON", kLlama, [](const Copy& c) { edit_header(c / "model.safetensors", "{\"model.embed_tokens", "[\"model.embed_tokens"); },
       {"model.safetensors", "not valid JSON"}},
      {"invalid UTF-8 in the header", kLlama, [](const Copy& c) { edit_header(c / "model.safetensors", "\"model.norm.weight\"", "\"\xff" "odel.norm.weight\""); },
       {"model.safetensors", "not valid JSON"}},
      {"duplicate name", kLlama,
       [](const Copy& c) { replace(c / "model.safetensors", "model.layers.1.input_layernorm.weight", "model.layers.0.input_layernorm.weight"); },
       {"model.safetensors", "'model.layers.0.input_layernorm.weight' appears twice"}},
      {"offsets overlapping", kLlama, [](const Copy& c) { edit_header(c / "model.safetensors", "[92544,92640]", "[92543,92639]"); },
       {"model.safetensors", "overlap", "model.norm.weight"}},
      {"a gap", kLlama,
       [](const Copy& c) {
         edit_header(c / "model.safetensors", "[92544,92640]", "[92548,92644]");
         std::ofstream(c / "model.safetensors", std::ios::app) << std::string(4, '\0');
       },
       {"model.safetensors", "a gap of 4 bytes before tensor 'model.norm.weight'"}},
      {"offsets past the end", kLlama, [](const Copy& c) { edit_header(c / "model.safetensors", "[48],\"data_offsets\":[92544,92640]", "[98],\"data_offsets\":[92544,92740]"); },
       {"model.safetensors", "'model.norm.weight' runs past the end"}},
      {"bytes after the last tensor", kLlama, [](const Copy& c) { std::ofstream(c / "model.safetensors", std::ios::app) << std::string(16, '\0'); },
       {"model.safetensors", "bytes after the last tensor", "92640", "92656"}},
      {"size not shape x dtype", kLlama, [](const Copy& c) { edit_header(c / "model.safetensors", "[48],\"data_offsets\":[92544", "[47],\"data_offsets\":[92544"); },
       {"model.safetensors", "'model.norm.weight' has a byte size", "(47,) x 2 bytes (BF16)", "96 bytes"}},
      {"unknown dtype I32", kLlama, [](const Copy& c) { edit_header(c / "model.safetensors", "\"BF16\",\"shape\":[48],\"data_offsets\":[92544", "\"I32\",\"shape\":[24],\"data_offsets\":[92544"); },
       {"model.safetensors", "'model.norm.weight'", "F32, F16 or BF16 vs I32"}},
      {"a dtype safetensors does not define", kLlama, [](const Copy& c) { edit_header(c / "model.safetensors", "\"BF16\",\"shape\":[48],\"data_offsets\":[92544", "\"Q4_K\",\"shape\":[48],\"data_offsets\":[92544"); },
       {"model.safetensors", "unknown dtype", "\"Q4_K\""}},
      {"shape with 2^62 elements", kLlama, [](const Copy& c) { edit_header(c / "model.safetensors", "[48],\"data_offsets\":[92544", "[4611686018427387904],\"data_offsets\":[92544"); },
       {"model.safetensors", "'model.norm.weight' has a byte size", "(4611686018427387904,)"}},
      {"negative shape entry", kLlama, [](const Copy& c) { edit_header(c / "model.safetensors", "[48],\"data_offsets\":[92544", "[-48],\"data_offsets\":[92544"); },
       {"model.safetensors", "'model.norm.weight'", "non-negative", "-48"}},
      {"missing shard", kSharded, [](const Copy& c) { fs::remove(c / "model-00002-of-00002.safetensors"); },
       {"model.safetensors.index.json", "missing", "model-00002-of-00002.safetensors"}},
      {"tensor in the wrong shard per the index", kSharded,
       [](const Copy& c) { replace(c / "model.safetensors.index.json", "\"model.norm.weight\": \"model-00002-of-00002", "\"model.norm.weight\": \"model-00001-of-00002"); },
       {"model.safetensors.index.json", "'model.norm.weight' is not in the shard the index names", "model-00002-of-00002.safetensors"}},
      {"tensor twice across shards", kSharded,
       [](const Copy& c) { fs::copy_file(c / "model-00001-of-00002.safetensors", c / "model-00002-of-00002.safetensors", fs::copy_options::overwrite_existing); },
       {"model.safetensors.index.json", "stored in two shards", "model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"}},
      {"shard tensor missing from the index", kSharded, [](const Copy& c) { replace(c / "model.safetensors.index.json", "\"lm_head.weight\": \"model-00002-of-00002.safetensors\"", "\"lm_head.weighx\": \"model-00002-of-00002.safetensors\""); },
       {"model.safetensors.index.json", "'lm_head.weight' of a shard is not in the index"}},
      {"wrong shape for the config", kLlama, [](const Copy& c) { replace(c / "config.json", "\"intermediate_size\": 96", "\"intermediate_size\": 80"); },
       {"model.safetensors", "'model.layers.0.mlp.gate_proj.weight' has the wrong shape", "(80, 48) = (intermediate_size, hidden_size) vs (96, 48)"}},
      {"missing tensor", kLlama, [](const Copy& c) { replace(c / "config.json", "\"num_hidden_layers\": 2", "\"num_hidden_layers\": 3"); },
       {"model.safetensors", "'model.layers.2.input_layernorm.weight' is missing", "(48,) = (hidden_size,)"}},
      {"unexpected tensor", kLlama, [](const Copy& c) { replace(c / "model.safetensors", "\"model.norm.weight\"", "\"model.nrom.weight\""); },
       {"model.safetensors", "unexpected tensor 'model.nrom.weight'"}},
      {"lm_head stored although tied", kSharded, [](const Copy& c) { replace(c / "config.json", "\"tie_word_embeddings\": false", "\"tie_word_embeddings\": true"); },
       {"model-00002-of-00002.safetensors", "'lm_head.weight'", "tie_word_embeddings: true"}},
      {"NaN weight", kLlama,
       [](const Copy& c) {
         std::string s = read_file(c / "model.safetensors");
         const std::uint64_t n = static_cast<unsigned char>(s[0]) | (static_cast<unsigned char>(s[1]) << 8);
         s[8 + n + 2 * 50] = '\xc0';  // model.embed_tokens.weight[1, 2] = bf16 0x7fc0, a NaN
         s[8 + n + 2 * 50 + 1] = '\x7f';
         write(c / "model.safetensors", s);
       },
       {"model.safetensors", "'model.embed_tokens.weight' holds a non-finite value at [1, 2]", "nan", "--allow-nonfinite"}},
      {"unknown model_type", kLlama, [](const Copy& c) { replace(c / "config.json", "\"model_type\": \"llama\"", "\"model_type\": \"mistral\""); },
       {"config.json", "model_type is not supported", "'mistral'", "gpt2, llama or qwen2"}},
      {"heads not dividing the width", kQwen, [](const Copy& c) { replace(c / "config.json", "\"num_attention_heads\": 4", "\"num_attention_heads\": 5"); },
       {"config.json", "num_attention_heads does not divide hidden_size", "hidden_size 32", "num_attention_heads 5"}},
      {"kv heads not dividing heads", kLlama, [](const Copy& c) { replace(c / "config.json", "\"num_key_value_heads\": 2", "\"num_key_value_heads\": 4"); },
       {"config.json", "num_key_value_heads does not divide num_attention_heads", "6", "4"}},
      {"config.json not JSON", kLlama, [](const Copy& c) { write(c / "config.json", "{\"model_type\": \"llama\","); },
       {"config.json", "not valid JSON"}},
      {"no config.json", kLlama, [](const Copy& c) { fs::remove(c / "config.json"); }, {"llama3_tiny_bf16", "no config.json"}},
      {"no safetensors", kLlama, [](const Copy& c) { fs::remove(c / "model.safetensors"); },
       {"llama3_tiny_bf16", "no safetensors weights", "model.safetensors or model.safetensors.index.json"}},
      {"100 GB sparse file after the tensors", kLlama, [](const Copy& c) { fs::resize_file(c / "model.safetensors", 100ull << 30); },
       {"model.safetensors", "bytes after the last tensor", "data ending at byte 92640"}},
  };
}

void check_refused(const attn::testing::Result& r, const std::vector<std::string>& names) {
  CHECK(r.status == 2);
  CHECK(r.out.empty());
  CHECK(r.err.rfind("attn: error: ", 0) == 0);
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  for (const auto& n : names) CHECK_MESSAGE(r.err.find(n) != std::string::npos, std::string("missing: " + n));
  // Bytes from files are escaped: no control characters, nothing above ASCII.
  for (std::size_t i = 0; i + 1 < r.err.size(); ++i) CHECK((r.err[i] >= 0x20 && r.err[i] < 0x7f));
}

}  // namespace

TEST_CASE("broken checkpoints: each refused with one line naming the file and the fault") {
  for (const auto& c : refusals()) {
    SUBCASE(c.title.c_str()) {
      Copy copy(c.fixture);
      c.spoil(copy);
      const auto start = std::chrono::steady_clock::now();
      const auto r = run({kAttn, "model", copy.dir.string(), "--summary"});
      const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      CAPTURE(r.err);
      check_refused(r, c.names);
      CHECK(seconds < 20);  // a refusal, not a read: generous for a loaded machine
    }
  }
}

TEST_CASE("--allow-nonfinite reports the NaN instead of refusing it") {
  Copy c(kLlama);
  std::string s = read_file(c / "model.safetensors");
  const std::uint64_t n = static_cast<unsigned char>(s[0]) | (static_cast<unsigned char>(s[1]) << 8);
  s[8 + n + 2 * 50] = '\xc0';
  s[8 + n + 2 * 50 + 1] = '\x7f';
  write(c / "model.safetensors", s);
  const auto r = run({kAttn, "model", c.dir.string(), "--summary", "--allow-nonfinite"});
  CHECK(r.status == 0);
  CHECK(r.err.empty());
  CHECK(r.out.find("Values: 1 of 46,320 are not finite (--allow-nonfinite);\n"
                   "  the first: model.embed_tokens.weight[1, 2] = nan\n") != std::string::npos);
}

TEST_CASE("a folder that is not a checkpoint folder") {
  TempDir tmp("attn-model-cli");
  check_refused(run({kAttn, "model", (tmp.path / "absent").string()}), {"absent", "no such checkpoint folder"});
  write(tmp.path / "file", "x");
  check_refused(run({kAttn, "model", (tmp.path / "file").string()}), {"file", "not a folder"});
  check_refused(run({kAttn, "model", kModels + "/qwen2_tiny", "--headers-only", "--allow-nonfinite"}), {"--allow-nonfinite"});
}

TEST_CASE("a 100 GB sparse checkpoint whose tensors tile it is refused by the memory check, quickly") {
  // Llama, one layer, width 16384, MLP 131072, 2^20 tokens, float32: model.embed_tokens.weight
  // alone is 2^34 values (64 GiB as float32), and the layer (which a run holds whole) 28 GiB,
  // more than this machine has available.
  TempDir tmp("attn-model-cli");
  const std::string config = R"({"model_type":"llama","hidden_size":16384,"num_hidden_layers":1,"num_attention_heads":128,
    "intermediate_size":131072,"vocab_size":1048576,"max_position_embeddings":4096,"tie_word_embeddings":true})";
  write(tmp.path / "config.json", config);
  const auto expected = attn::expected_tensors(attn::parse_model_config(config, "config.json"));
  std::string header = "{";
  std::uint64_t at = 0;
  for (const auto& e : expected) {
    std::uint64_t count = 1;
    std::string shape;
    for (auto d : e.shape) {
      count *= d;
      shape += (shape.empty() ? "" : ",") + std::to_string(d);
    }
    header += (at ? "," : "") + std::string("\"") + e.name + "\":{\"dtype\":\"F32\",\"shape\":[" + shape +
              "],\"data_offsets\":[" + std::to_string(at) + "," + std::to_string(at + 4 * count) + "]}";
    at += 4 * count;
  }
  header += "}";
  write(tmp.path / "model.safetensors", u64le(header.size()) + header);
  fs::resize_file(tmp.path / "model.safetensors", 8 + header.size() + at);  // a hole: no disk used
  REQUIRE(fs::file_size(tmp.path / "model.safetensors") > (64ull << 30));
  const auto start = std::chrono::steady_clock::now();
  const auto r = run({kAttn, "model", tmp.path.string(), "--summary"});
  CHECK(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() < 20);
  CAPTURE(r.err);
  check_refused(r, {"not enough memory to convert model.embed_tokens.weight", "MemAvailable", "68719476736 bytes needed"});
  // A run reads the embedding rows of its tokens only, but holds a whole layer as float32.
  const auto ran = run({kAttn, "model", tmp.path.string(), "--ids", "1,2"});
  CAPTURE(ran.err);
  check_refused(ran, {"not enough memory to run", "on 2 tokens", "MemAvailable"});
  // --headers-only reads no values, so it needs no such memory: the summary prints.
  const auto h = run({kAttn, "model", tmp.path.string(), "--headers-only"});
  CHECK(h.status == 0);
  CHECK(h.out.find("Values: not read (--headers-only)") != std::string::npos);
}

namespace {

attn::testing::Result summary_of(const std::string& name, const std::string& options = "") {
  // From the models folder, so that the first line names the folder as typed: "qwen2_tiny".
  return attn::testing::run_shell("cd '" + kModels + "' && '" + kAttn + "' model " + name + " " + options);
}

}  // namespace

TEST_CASE("the summary of qwen2_tiny, line for line (tests/data/models/qwen2_tiny.summary.txt)") {
  // Read and checked by hand: the module tree is transformers 4.48+'s print of Qwen2Model
  // (q, k, v with bias=True, o_proj without; Qwen2RMSNorm((32,), eps=1e-06); rotary_emb on the
  // model); 20,224 parameters = 2,560 embedding + 2 x 8,816 per layer + 32 final norm; BF16 is
  // 2 bytes each; the largest tensor is the (80, 32) embedding, 10,240 bytes as float32.
  const auto r = summary_of("qwen2_tiny", "--summary");
  CHECK(r.status == 0);
  CHECK(r.err.empty());
  CHECK(r.out == read_file(kModels + "/qwen2_tiny.summary.txt"));
  // `attn model DIR` alone prints the same.
  CHECK(summary_of("qwen2_tiny").out == r.out);
}

TEST_CASE("the summaries of the other tiny checkpoints: the lines that differ by family") {
  const auto gpt2 = summary_of("gpt2_tiny").out;
  for (const char* line : {"GPT2Model(\n  (wte): Embedding(96, 32)\n  (wpe): Embedding(64, 32)\n  (drop): Dropout(p=0.1, inplace=False)\n",
                           "    (0-1): 2 x GPT2Block(\n      (ln_1): LayerNorm((32,), eps=1e-05, elementwise_affine=True)\n",
                           "        (c_attn): Conv1D(nf=96, nx=32)\n", "        (c_fc): Conv1D(nf=128, nx=32)\n",
                           "        (act): NewGELUActivation()\n",
                           "  h.0.attn.c_attn.weight  F32   (32, 96)\n",
                           "  parameters         30,592\n", "  lm_head            tied to wte (tie_word_embeddings)\n"})
    CHECK_MESSAGE(gpt2.find(line) != std::string::npos, line);
  const auto llama3 = summary_of("llama3_tiny_bf16").out;
  for (const char* line : {"  kv heads           2 (num_key_value_heads): each read by 3 query heads\n",
                           "  head size          8 (head_dim)\n", "  RoPE base          500000 (rope_theta)\n",
                           "  RoPE scaling       llama3: factor 32, low_freq_factor 1,\n"
                           "                     high_freq_factor 4, original_max_position_embeddings 8192\n",
                           "        (k_proj): Linear(in_features=48, out_features=16, bias=False)\n",
                           "  layer 1: the same names, dtypes, shapes as layer 0 (checked)\n"})
    CHECK_MESSAGE(llama3.find(line) != std::string::npos, line);
  const auto sharded = summary_of("llama_tiny_f16_sharded").out;
  for (const char* line : {"  model.safetensors.index.json\n                          2 shards, total_size 83,904 (= their data)\n",
                           "    (0-2): 3 x LlamaDecoderLayer(\n", "      (input_layernorm): LlamaRMSNorm((32,), eps=1e-06)\n",
                           "  layers 1-2: the same names, dtypes, shapes as layer 0 (checked)\n",
                           "  lm_head.weight                                  F16   (100, 32)\n",
                           "  lm_head            its own weight (tie_word_embeddings false)\n",
                           "  RoPE scaling       none\n"})
    CHECK_MESSAGE(sharded.find(line) != std::string::npos, line);
  for (const auto* out : {&gpt2, &llama3, &sharded}) {
    std::istringstream lines(*out);
    for (std::string l; std::getline(lines, l);) CHECK_MESSAGE(l.size() <= 80, l);
  }
}

TEST_CASE("the summaries of make_more_models.py's cases (tests/data/models/README.md)") {
  const std::vector<std::pair<std::string, std::vector<std::string>>> cases = {
      {"llama_one_token_f32",
       {"        (q_proj): Linear(in_features=32, out_features=64, bias=False)\n",
        "        (o_proj): Linear(in_features=64, out_features=32, bias=False)\n", "  head size          16 (head_dim)\n",
        "  RoPE scaling       none\n"}},
      {"gpt2_context_limit", {"  (wpe): Embedding(16, 24)\n", "  context            16 positions (n_positions)\n"}},
      {"llama3_rope_scaled",
       {"  RoPE scaling       llama3: factor 8, low_freq_factor 1,\n"
        "                     high_freq_factor 4, original_max_position_embeddings 8\n"}},
      {"qwen2_three_shards",
       {"  model.safetensors.index.json\n                          3 shards, total_size 112,256 (= their data)\n",
        "  model-00003-of-00003.safetensors\n", "  lm_head            its own weight (tie_word_embeddings false)\n",
        "  biases             q, k, v\n"}},
  };
  for (const auto& [name, lines] : cases) {
    const auto& checkpoint = name;  // clang 14 cannot capture a structured binding (CAPTURE is a lambda)
    CAPTURE(checkpoint);
    const auto r = summary_of(name);
    CHECK(r.status == 0);
    CHECK(r.err.empty());
    for (const auto& line : lines) CHECK_MESSAGE(r.out.find(line) != std::string::npos, line);
    CHECK(r.out.find("Values: all ") != std::string::npos);
    std::istringstream text(r.out);
    for (std::string l; std::getline(text, l);) CHECK_MESSAGE(l.size() <= 80, l);
  }
}

TEST_CASE("--headers-only skips the value scan and says so") {
  const auto r = summary_of("llama3_tiny_bf16", "--headers-only");
  CHECK(r.status == 0);
  CHECK(r.out.find("Values: not read (--headers-only): names, shapes, dtypes and offsets checked\n") != std::string::npos);
  CHECK(r.out.find("Values: all") == std::string::npos);
}

TEST_CASE("GPT-2 keys with the transformer. prefix, and causal-mask buffers skipped on purpose") {
  Copy c("gpt2_tiny");
  // As saved from GPT2LMHeadModel: every key under transformer., plus h.N.attn.bias buffers
  // (1, 1, n_positions, n_positions) that attn does not read.
  std::string s = read_file(c / "model.safetensors");
  std::uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | static_cast<unsigned char>(s[static_cast<std::size_t>(i)]);
  std::string header = s.substr(8, n);
  for (std::size_t at = 0; (at = header.find("\":{\"dtype\"", at)) != std::string::npos; at += 10) {
    const std::size_t open = header.rfind('"', at - 1);
    header.insert(open + 1, "transformer.");
    at += 12;
  }
  const std::uint64_t end = s.size() - 8 - n, buffer = 4 * 64 * 64;
  header.insert(1, "\"transformer.h.0.attn.bias\":{\"dtype\":\"F32\",\"shape\":[1,1,64,64],\"data_offsets\":[" + std::to_string(end) + "," +
                       std::to_string(end + buffer) + "]},\"transformer.h.1.attn.bias\":{\"dtype\":\"F32\",\"shape\":[1,1,64,64],\"data_offsets\":[" +
                       std::to_string(end + buffer) + "," + std::to_string(end + 2 * buffer) + "]},");
  write(c / "model.safetensors", u64le(header.size()) + header + s.substr(8 + n) + std::string(2 * buffer, '\0'));
  const auto r = run({kAttn, "model", c.dir.string()});
  CAPTURE(r.err);
  CHECK(r.status == 0);
  CHECK(r.out.find("  skipped buffers         2 (transformer.h.0.attn.bias, ...: not weights)\n") != std::string::npos);
  CHECK(r.out.find("  transformer.h.0.attn.c_attn.weight  F32   (32, 96)\n") != std::string::npos);
  CHECK(r.out.find("  layer 1: the same names, dtypes, shapes as layer 0 (checked)\n") != std::string::npos);
  CHECK(r.out.find("  parameters         30,592\n") != std::string::npos);  // the buffers are not parameters
  // A key without the prefix among prefixed ones is not a GPT-2 weight attn knows.
  replace(c / "model.safetensors", "\"transformer.ln_f.bias\"", "\"xxxxxxxxxxx.ln_f.bias\"");
  check_refused(run({kAttn, "model", c.dir.string()}), {"unexpected tensor 'xxxxxxxxxxx.ln_f.bias'"});
}
