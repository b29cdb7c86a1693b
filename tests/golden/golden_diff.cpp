// golden_diff GOLDEN ACTUAL: compares a lesson's output with its golden file as described in
// golden_compare.hpp. Exit status 0 when they match; 1 when they differ, after printing each
// differing line (expected, actual, and the rule or tolerance it broke); 2 when a file cannot be
// read. compare.cmake runs it for every golden case and adds a unified diff on failure.
#include <fstream>
#include <iostream>
#include <sstream>

#include "golden_compare.hpp"

namespace {

bool read_file(const char* path, std::string& out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::ostringstream ss;
  ss << in.rdbuf();
  out = ss.str();
  return !in.bad();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: golden_diff GOLDEN ACTUAL\n";
    return 2;
  }
  std::string golden, actual;
  for (int i : {1, 2})
    if (!read_file(argv[i], i == 1 ? golden : actual)) {
      std::cerr << "golden_diff: cannot read " << argv[i] << "\n";
      return 2;
    }
  const auto c = attn::golden::compare(golden, actual);
  if (c.equal) return 0;
  std::cout << argv[2] << " differs from " << argv[1] << " (numbers with decimals are compared within max("
            << attn::golden::kAbsolute << ", " << attn::golden::kUlps << " units in the golden value's last place, "
            << attn::golden::kRelative << " x |golden|); everything else exactly):\n"
            << attn::golden::describe(c);
  return 1;
}
