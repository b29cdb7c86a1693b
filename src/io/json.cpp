// Strict JSON: nlohmann/json plus a refusal of duplicate keys and of deep nesting (json.hpp).
#include "io/json.hpp"

#include <set>
#include <vector>

#include "io/npy.hpp"  // escaped_for_message

namespace attn {

nlohmann::json parse_json_strict(const std::string& text, const std::string& what) {
  // nlohmann's parser calls back on every event; a stack of key sets, one per open object, finds
  // a key seen before in the same object.
  std::vector<std::set<std::string>> open;  // the keys of each object still open
  std::string duplicate;
  std::size_t depth_seen = 0;
  auto callback = [&](int depth, nlohmann::json::parse_event_t event, nlohmann::json& parsed) {
    using E = nlohmann::json::parse_event_t;
    depth_seen = std::max<std::size_t>(depth_seen, static_cast<std::size_t>(depth));
    if (depth_seen > kJsonMaxDepth) throw JsonError(what + ": nested deeper than " + std::to_string(kJsonMaxDepth) + " levels");
    if (event == E::object_start) open.emplace_back();
    else if (event == E::object_end && !open.empty()) open.pop_back();
    else if (event == E::key && duplicate.empty() && !open.empty() &&
             !open.back().insert(parsed.get<std::string>()).second)
      duplicate = parsed.get<std::string>();
    return true;
  };
  nlohmann::json value;
  try {
    value = nlohmann::json::parse(text, callback, /*allow_exceptions=*/true, /*ignore_comments=*/false);
  } catch (const nlohmann::json::exception& e) {
    // A parse_error, or an out_of_range for a number beyond double's range (1e405: found by
    // fuzz_model_config). e.what() is "[json.exception.parse_error.101] parse error at line 1,
    // column 7: ...": keep what follows the library's tag, escaped (it may quote bytes of the file).
    std::string why = e.what();
    const auto tag = why.find("] ");
    if (tag != std::string::npos) why = why.substr(tag + 2);
    const auto* at = dynamic_cast<const nlohmann::json::parse_error*>(&e);
    throw JsonError(what + ": not valid JSON" + (at ? " at byte " + std::to_string(at->byte) : std::string()) + " (" +
                    escaped_for_message(why, 160) + ")");
  }
  if (!duplicate.empty())
    throw JsonError(what + ": key '" + escaped_for_message(duplicate, 80, true) + "' appears twice in one object");
  return value;
}

}  // namespace attn
