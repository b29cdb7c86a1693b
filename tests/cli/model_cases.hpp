// The checkpoint fixtures of tests/data/models/models.json, as the model tests run them: each
// case's folder name and the ids its expected tensors were computed over.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "scratch.hpp"  // read_file

namespace attn::testing {

struct ModelCase {
  std::string name;
  std::vector<long> ids;
};

// Every case of `models_dir`/models.json, in its order.
inline std::vector<ModelCase> model_cases(const std::string& models_dir) {
  const auto j = nlohmann::json::parse(read_file(models_dir + "/models.json"));
  std::vector<ModelCase> out;
  for (const auto& c : j.at("cases")) out.push_back({c.at("case").get<std::string>(), c.at("ids").get<std::vector<long>>()});
  return out;
}

// "3,60,12": the ids as --ids takes them.
inline std::string id_list(const std::vector<long>& ids) {
  std::string s;
  for (long id : ids) s += (s.empty() ? "" : ",") + std::to_string(id);
  return s;
}

}  // namespace attn::testing
