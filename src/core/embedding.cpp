#include "core/embedding.hpp"

#include "core/generator.hpp"

namespace attn {

std::uint32_t word_seed(const std::string& word) {
  std::uint32_t h = 2166136261u;
  for (unsigned char c : word) {
    h ^= c;
    h *= 16777619u;
  }
  return h;
}

Vec word_embedding(const std::string& word, std::size_t d_in) {
  TorchGenerator gen(word_seed(word));
  return gen.rand(d_in);  // (d_in,)
}

}  // namespace attn
