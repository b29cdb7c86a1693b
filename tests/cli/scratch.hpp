// Scratch space for tests that write files: a temporary directory removed, with everything in it,
// when the test ends, and a whole file read back as bytes.
#pragma once

#include <stdlib.h>  // mkdtemp

#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <system_error>

namespace attn::testing {

struct TempDir {
  std::filesystem::path path;
  // /tmp/<prefix>-XXXXXX: the prefix names the test, so a directory a killed test left says whose.
  explicit TempDir(const std::string& prefix = "attn-test") {
    std::string name = "/tmp/" + prefix + "-XXXXXX";
    if (!mkdtemp(name.data())) throw std::runtime_error("mkdtemp failed for " + name);
    path = name;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
};

// The file's bytes; "" when it cannot be read (the test's CHECK then says what was expected).
inline std::string read_file(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace attn::testing
