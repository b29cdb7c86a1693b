// Finding a checkpoint folder's tokenizer files (tokenizer_folder.hpp).
#include "io/tokenizer_folder.hpp"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "io/json.hpp"
#include "io/npy.hpp"  // escaped_for_message
#include "io/tokenizer_error.hpp"

namespace fs = std::filesystem;

namespace attn {

namespace {

// Small JSON files beside the tokenizer: a config.json is a few kilobytes, a tokenizer_config.json
// with a chat template some hundred.
constexpr std::uintmax_t kSideFileMaxBytes = 16u << 20;

std::optional<nlohmann::json> read_side_file(const fs::path& p) {
  std::error_code ec;
  if (!fs::is_regular_file(p, ec)) return std::nullopt;
  const std::string name = escaped_for_message(p.string(), 200);
  if (fs::file_size(p, ec) > kSideFileMaxBytes)
    throw TokenizerError("file too large (" + name + ": at most 16 MiB vs " + std::to_string(fs::file_size(p, ec)) + " bytes)");
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  try {
    nlohmann::json v = parse_json_strict(ss.str(), name);
    if (!v.is_object()) throw TokenizerError("not a JSON object (" + name + ": {...} vs " + v.type_name() + ")");
    return v;
  } catch (const JsonError& e) {
    throw TokenizerError(e.what());
  }
}

}  // namespace

TokenizerFolder find_tokenizer(const std::string& path) {
  std::error_code ec;
  const fs::path given(path);
  const std::string shown = escaped_for_message(path, 200);
  TokenizerFolder f;
  fs::path dir;
  if (fs::is_directory(given, ec)) {
    dir = given;
    f.tokenizer_json = (given / "tokenizer.json").string();
    if (!fs::exists(f.tokenizer_json, ec))
      throw TokenizerError("this folder has no tokenizer.json to tokenize with (the tiny test checkpoints ship "
                           "none; a downloaded model has one) (" + shown + ": a folder with tokenizer.json vs none)");
  } else if (fs::exists(given, ec)) {
    dir = given.parent_path().empty() ? fs::path(".") : given.parent_path();
    f.tokenizer_json = path;
  } else {
    throw TokenizerError("no such file or folder (" + shown + ": a checkpoint folder or a tokenizer.json vs nothing there)");
  }
  if (const auto config = read_side_file(dir / "config.json")) {
    for (const char* key : {"n_positions", "max_position_embeddings"}) {
      const auto it = config->find(key);
      if (it == config->end()) continue;
      if (!it->is_number_unsigned() || it->get<std::uint64_t>() == 0)
        throw TokenizerError(std::string("the context length is not a positive whole number (") +
                             escaped_for_message((dir / "config.json").string(), 200) + ": " + key + " > 0 vs " +
                             escaped_for_message(it->dump(), 30) + ")");
      f.context = static_cast<std::size_t>(std::min<std::uint64_t>(it->get<std::uint64_t>(), SIZE_MAX));
      f.context_from = std::string("config.json's ") + key;
      break;
    }
  }
  if (const auto tc = read_side_file(dir / "tokenizer_config.json")) {
    const auto it = tc->find("bos_token");
    if (it != tc->end() && it->is_string()) f.bos_token = it->get<std::string>();
    else if (it != tc->end() && it->is_object() && it->contains("content") && (*it)["content"].is_string())
      f.bos_token = (*it)["content"].get<std::string>();
  }
  return f;
}

}  // namespace attn
