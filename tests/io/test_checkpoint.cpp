// The checkpoint readers (io/safetensors, io/model_config, io/checkpoint) against the tiny
// checkpoints in tests/data/models: every tensor as attn converts it equals the float32 values
// written by make_expected.py (numpy's float16 and torch's bfloat16 conversions, not ours).
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>
#include <string>
#include <vector>

#include "io/checkpoint.hpp"
#include "io/model_config.hpp"
#include "io/npy.hpp"
#include "io/safetensors.hpp"

namespace fs = std::filesystem;
using namespace attn;

namespace {

const std::string kModels = std::string(ATTN_TEST_DATA) + "/models";

// A safetensors file in memory: header JSON (padded with spaces to `pad`), then `data`.
std::string safetensors_bytes(const std::string& json, const std::string& data, std::size_t pad = 0) {
  std::string header = json;
  while (header.size() < pad) header += ' ';
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i) out[static_cast<std::size_t>(i)] = static_cast<char>((header.size() >> (8 * i)) & 0xff);
  return out + header + data;
}

std::string u16s(std::initializer_list<std::uint16_t> values) {
  std::string s;
  for (auto v : values) {
    s += static_cast<char>(v & 0xff);
    s += static_cast<char>(v >> 8);
  }
  return s;
}

bool same_bits(float a, float b) { return std::memcmp(&a, &b, 4) == 0; }

}  // namespace

// Every case of tests/data/models/models.json: four copied by make_expected.py, four written by
// make_more_models.py (whose weights/*.npy come from hf_forward.py's numpy conversion).
const char* const kCases[] = {"gpt2_tiny",           "llama3_tiny_bf16",   "llama_tiny_f16_sharded", "qwen2_tiny",
                              "llama_one_token_f32", "gpt2_context_limit", "llama3_rope_scaled",     "qwen2_three_shards"};

TEST_CASE("every tensor of every tiny checkpoint converts to the values numpy and torch give") {
  for (const char* name : kCases) {
    CAPTURE(name);
    const Checkpoint ck = open_checkpoint(kModels + "/" + name);
    std::size_t npy_files = 0;
    for (const auto& e : fs::directory_iterator(kModels + "/" + name + "/weights")) npy_files += e.path().extension() == ".npy";
    CHECK(ck.tensors.size() == npy_files);  // every stored tensor is an expected one, and has its .npy
    for (const auto& t : ck.tensors) {
      CAPTURE(t.expected.name);
      const NpyArray want = read_npy(kModels + "/" + name + "/weights/" + t.expected.name + ".npy");
      const std::vector<float> got = ck.file(t).read_f32(ck.info(t));
      REQUIRE(want.shape == t.expected.shape);
      REQUIRE(got.size() == want.values.size());
      std::size_t differ = 0;
      for (std::size_t i = 0; i < got.size(); ++i) differ += !same_bits(got[i], want.values[i]);
      CHECK(differ == 0);
    }
  }
}

TEST_CASE("a range of a tensor reads the same values as the whole tensor") {
  const Checkpoint ck = open_checkpoint(kModels + "/llama3_tiny_bf16");
  const CheckpointTensor& t = ck.tensors.front();  // model.embed_tokens.weight (128, 48)
  const std::vector<float> whole = ck.file(t).read_f32(ck.info(t));
  std::vector<float> part(100);
  ck.file(t).read_f32(ck.info(t), 1001, 100, part.data());
  for (std::size_t i = 0; i < part.size(); ++i) CHECK(same_bits(part[i], whole[1001 + i]));
}

TEST_CASE("f16 and bf16 special values convert exactly") {
  CHECK(f16_to_float(0x3c00) == 1.0f);
  CHECK(f16_to_float(0xc000) == -2.0f);
  CHECK(f16_to_float(0x7bff) == 65504.0f);                   // largest finite half
  CHECK(f16_to_float(0x0001) == std::ldexp(1.0f, -24));      // smallest subnormal
  CHECK(f16_to_float(0x03ff) == 1023 * std::ldexp(1.0f, -24));  // largest subnormal
  CHECK(f16_to_float(0x0400) == std::ldexp(1.0f, -14));      // smallest normal
  CHECK(std::signbit(f16_to_float(0x8000)));
  CHECK(f16_to_float(0x8000) == 0.0f);
  CHECK(f16_to_float(0x7c00) == std::numeric_limits<float>::infinity());
  CHECK(f16_to_float(0xfc00) == -std::numeric_limits<float>::infinity());
  CHECK(std::isnan(f16_to_float(0x7e00)));
  CHECK(std::isnan(f16_to_float(0x7c01)));  // a signalling-NaN pattern stays NaN, not inf
  CHECK(bf16_to_float(0x3f80) == 1.0f);
  CHECK(bf16_to_float(0xc2f7) == -123.5f);
  CHECK(bf16_to_float(0x7f80) == std::numeric_limits<float>::infinity());
  CHECK(std::isnan(bf16_to_float(0x7fc0)));
}

TEST_CASE("unaligned data converts from any offset") {
  // A header of odd length puts the data at an odd file offset.
  const std::string data = u16s({0x3f80, 0x4000, 0xbf80});  // bf16 1, 2, -1
  const std::string json = R"({"x":{"dtype":"BF16","shape":[3],"data_offsets":[0,6]}})";
  const std::string bytes = safetensors_bytes(json, data, json.size() % 2 ? json.size() : json.size() + 1);
  const SafetensorsHeader h = parse_safetensors_header(bytes, bytes.size(), "mem");
  REQUIRE(h.data_start % 2 == 1);
  float out[3];
  convert_to_f32(DType::BF16, reinterpret_cast<const unsigned char*>(bytes.data()) + h.data_start, 3, out);
  CHECK(out[0] == 1.0f);
  CHECK(out[1] == 2.0f);
  CHECK(out[2] == -1.0f);
}

TEST_CASE("the header parser refuses what the reference parser accepts, and more") {
  auto refuse = [](const std::string& json, const std::string& data, const std::string& part) {
    const std::string bytes = safetensors_bytes(json, data);
    CAPTURE(json);
    try {
      parse_safetensors_header(bytes, bytes.size(), "f.safetensors");
      FAIL("accepted");
    } catch (const CheckpointError& e) {
      CHECK(std::string(e.what()).find(part) != std::string::npos);
      CHECK(std::string(e.what()).find("f.safetensors") != std::string::npos);
    }
  };
  const std::string four(4, '\0');
  refuse(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})", four, "twice");
  refuse(R"({"a":{"dtype":"F32","shape":[-1],"data_offsets":[0,4]}})", four, "non-negative");
  refuse(R"({"a":{"dtype":"F32","shape":[1.5],"data_offsets":[0,4]}})", four, "non-negative");
  refuse(R"({"a":{"dtype":"F32","shape":[4611686018427387904],"data_offsets":[0,4]}})", four, "byte size");
  refuse(R"({"a":{"dtype":"F32","shape":[4294967296,4294967296],"data_offsets":[0,4]}})", four, "too large");
  refuse(R"({"a":{"dtype":"Q4","shape":[1],"data_offsets":[0,4]}})", four, "unknown dtype");
  refuse(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"b":{"dtype":"F32","shape":[1],"data_offsets":[2,6]}})",
         std::string(8, '\0'), "overlap");
  refuse(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})", std::string(8, '\0'), "after the last");
  refuse(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})", std::string(8, '\0'), "gap");
  refuse(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})", four, "past the end");
  refuse(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4],"extra":1}})", four, "unknown field");
  refuse("{\"a\xff\":1}", four, "not valid JSON");
  refuse(R"({"__metadata__":{"k":1}})", "", "not a string");
}

TEST_CASE("config.json: transformers 5's names read the same as 4.x's") {
  const std::string v4 = R"({"model_type":"llama","hidden_size":3072,"num_hidden_layers":28,"num_attention_heads":24,
    "num_key_value_heads":8,"head_dim":128,"intermediate_size":8192,"vocab_size":128256,"max_position_embeddings":131072,
    "rms_norm_eps":1e-05,"rope_theta":500000.0,"tie_word_embeddings":true,"torch_dtype":"bfloat16",
    "rope_scaling":{"rope_type":"llama3","factor":32.0,"low_freq_factor":1.0,"high_freq_factor":4.0,"original_max_position_embeddings":8192}})";
  const std::string v5 = R"({"model_type":"llama","hidden_size":3072,"num_hidden_layers":28,"num_attention_heads":24,
    "num_key_value_heads":8,"head_dim":128,"intermediate_size":8192,"vocab_size":128256,"max_position_embeddings":131072,
    "rms_norm_eps":1e-05,"tie_word_embeddings":true,"dtype":"bfloat16",
    "rope_parameters":{"rope_type":"llama3","rope_theta":500000.0,"factor":32.0,"low_freq_factor":1.0,"high_freq_factor":4.0,"original_max_position_embeddings":8192}})";
  for (const auto& text : {v4, v5}) {
    const ModelConfig c = parse_model_config(text, "config.json");
    CHECK(c.family == ModelFamily::Llama);
    CHECK(c.head_dim == 128);
    CHECK(c.kv_heads == 8);
    CHECK(c.rope_theta == 500000.0);
    CHECK(c.rope_scaling.llama3);
    CHECK(c.rope_scaling.factor == 32.0);
    CHECK(c.rope_scaling.original_max_position_embeddings == 8192);
    CHECK(c.dtype == "bfloat16");
    CHECK(c.tie_word_embeddings);
    // Llama-3.2-3B: embedding, 28 layers of 9 tensors, the final norm; lm_head tied.
    const auto expected = expected_tensors(c);
    CHECK(expected.size() == 1 + 28 * 9 + 1);
    CHECK(expected[2].name == "model.layers.0.self_attn.q_proj.weight");
    CHECK(expected[2].shape == Shape{3072, 3072});
    CHECK(expected[3].shape == Shape{1024, 3072});  // k_proj: 8 kv heads x 128
  }
}

TEST_CASE("config.json refusals name the field and both values") {
  auto refuse = [](const std::string& text, std::initializer_list<const char*> parts) {
    CAPTURE(text);
    try {
      parse_model_config(text, "config.json");
      FAIL("accepted");
    } catch (const CheckpointError& e) {
      for (const char* p : parts) CHECK(std::string(e.what()).find(p) != std::string::npos);
    }
  };
  const std::string base = R"("model_type":"llama","num_hidden_layers":2,"intermediate_size":8,"vocab_size":10,"max_position_embeddings":16)";
  refuse("{" + base + R"(,"hidden_size":48,"num_attention_heads":5})", {"num_attention_heads does not divide hidden_size", "48", "5"});
  refuse("{" + base + R"(,"hidden_size":48,"num_attention_heads":6,"num_key_value_heads":4})", {"num_key_value_heads", "6", "4"});
  refuse("{" + base + R"(,"hidden_size":0,"num_attention_heads":6})", {"hidden_size", "0"});
  refuse("{" + base + R"(,"num_attention_heads":6})", {"no hidden_size"});
  refuse(R"({"model_type":"mistral"})", {"'mistral'", "gpt2, llama or qwen2"});
  refuse(R"({"model_type":"llama","rms_norm_eps":1e405})", {"not valid JSON", "number overflow", "1e405"});  // beyond double
  refuse("{" + base + R"(,"hidden_size":48,"num_attention_heads":6,"rope_scaling":{"type":"yarn","factor":4.0}})", {"'yarn'"});
  refuse("{" + base + R"(,"hidden_size":48,"num_attention_heads":6,"rope_theta":10000.0,"rope_parameters":{"rope_type":"default","rope_theta":500000.0}})",
         {"disagree", "10000", "500000"});
  refuse("{" + base + R"(,"hidden_size":48,"num_attention_heads":6,"torch_dtype":"float16","dtype":"bfloat16"})", {"'float16'", "'bfloat16'"});
  // Accepted: defaults as Hugging Face's, null scaling, "default" type.
  const ModelConfig c = parse_model_config("{" + base + R"(,"hidden_size":48,"num_attention_heads":6,"rope_scaling":null})", "config.json");
  CHECK(c.kv_heads == 6);
  CHECK(c.rope_theta == 10000.0);
  CHECK(!c.rope_scaling.llama3);
  CHECK(!c.tie_word_embeddings);
}

TEST_CASE("the cases of make_more_models.py: configs as save_pretrained writes them, three shards") {
  {  // head_dim 16 given, hidden / heads = 8: q_proj (64, 32), o_proj (32, 64)
    const Checkpoint ck = open_checkpoint(kModels + "/llama_one_token_f32");
    CHECK(ck.config.family == ModelFamily::Llama);
    CHECK(ck.config.head_dim == 16);
    CHECK(ck.config.head_dim_given);
    CHECK(ck.config.kv_heads == 2);
    CHECK(ck.config.tie_word_embeddings);
    CHECK(!ck.config.rope_scaling.llama3);  // "rope_scaling": null
    CHECK(ck.tensors.size() == 20);         // no lm_head.weight
  }
  {  // n_positions 16 (no n_ctx key, as transformers 4.x writes GPT2Config)
    const ModelConfig c = read_model_config(kModels + "/gpt2_context_limit/config.json");
    CHECK(c.family == ModelFamily::Gpt2);
    CHECK(c.context == 16);
    CHECK(c.heads == 3);
    CHECK(c.head_dim == 8);
    CHECK(c.intermediate == 96);  // "n_inner": null
  }
  {
    const ModelConfig c = read_model_config(kModels + "/llama3_rope_scaled/config.json");
    CHECK(c.rope_scaling.llama3);
    CHECK(c.rope_scaling.factor == 8.0);
    CHECK(c.rope_scaling.low_freq_factor == 1.0);
    CHECK(c.rope_scaling.high_freq_factor == 4.0);
    CHECK(c.rope_scaling.original_max_position_embeddings == 8);
    CHECK(c.rope_theta == 500000.0);
    CHECK(c.kv_heads == 1);
  }
  {
    const Checkpoint ck = open_checkpoint(kModels + "/qwen2_three_shards");
    CHECK(ck.config.family == ModelFamily::Qwen2);
    CHECK(ck.config.qkv_bias);
    CHECK(!ck.config.o_bias);
    CHECK(!ck.config.tie_word_embeddings);
    CHECK(ck.sharded);
    CHECK(ck.file_names == std::vector<std::string>{"model-00001-of-00003.safetensors", "model-00002-of-00003.safetensors",
                                                    "model-00003-of-00003.safetensors"});
    REQUIRE(ck.index_total_size.has_value());
    CHECK(*ck.index_total_size == 112256);  // float32 bytes of all 39 tensors
    CHECK(ck.tensors.size() == 39);
    CHECK(ck.tensors.back().expected.name == "lm_head.weight");
  }
}

TEST_CASE("GPT-2 keys with the transformer. prefix are read as well") {
  const ModelConfig c = read_model_config(kModels + "/gpt2_tiny/config.json");
  const auto plain = expected_tensors(c), prefixed = expected_tensors(c, "transformer.");
  REQUIRE(plain.size() == prefixed.size());
  CHECK(prefixed[4].name == "transformer.h.0.attn.c_attn.weight");
  CHECK(prefixed[4].shape == Shape{32, 96});  // Conv1D (in, out): (d, 3d)
}

TEST_CASE("the memory check refuses with both numbers") {
  CHECK_NOTHROW(require_memory(10, 100, "x"));
  CHECK_NOTHROW(require_memory(10, std::nullopt, "x"));
  try {
    require_memory(1000, 100, "convert w");
    FAIL("accepted");
  } catch (const CheckpointError& e) {
    const std::string m = e.what();
    CHECK(m.find("1000 bytes needed") != std::string::npos);
    CHECK(m.find("100 bytes available") != std::string::npos);
  }
  const auto avail = mem_available();
  REQUIRE(avail.has_value());
  CHECK(*avail > 0);
}
