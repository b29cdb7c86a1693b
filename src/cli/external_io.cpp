#include "cli/external_io.hpp"

#include <filesystem>

#include "io/npy.hpp"
#include "io/text_matrix.hpp"

namespace fs = std::filesystem;

namespace attn::cli {
namespace {

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

ExternalTensor as_external(const NpyArray& a, const std::string& source, const std::string& path) {
  return ExternalTensor{source, a.shape, a.values, path};
}

}  // namespace

ExternalTensor load_input(const std::string& path) {
  std::error_code ec;
  if (!fs::is_regular_file(path, ec))
    throw UsageError("cannot read --input", "--input", "an .npy or text matrix file", "'" + path + "' (no such file)");
  try {
    if (ends_with(path, ".npy")) return as_external(read_npy(path), "--input " + path, path);
    if (ends_with(path, ".csv") || ends_with(path, ".tsv") || ends_with(path, ".txt"))
      return as_external(read_text_matrix(path), "--input " + path, path);
  } catch (const NpyError& e) {
    throw UsageError(std::string("cannot read --input: ") + e.what());
  }
  throw UsageError("--input has an unknown file type", "--input", ".npy, .csv, .tsv or .txt", "'" + path + "'");
}

void load_npy_dir(const std::string& flag, const std::string& dir, const std::vector<std::string>& names,
                  std::map<std::string, ExternalTensor>& into) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    throw UsageError("cannot read " + flag, flag, "a directory of .npy files", "'" + dir + "' (not a directory)");
  std::string listed;
  for (const auto& name : names) {
    listed += (listed.empty() ? "" : ", ") + name + ".npy";
    const fs::path file = fs::path(dir) / (name + ".npy");
    if (!fs::exists(file, ec)) continue;
    try {
      into[name] = as_external(read_npy(file.string()), flag + " " + file.string(), file.string());
    } catch (const NpyError& e) {
      throw UsageError("cannot read " + flag + ": " + e.what());
    }
  }
  if (into.empty()) throw UsageError(flag + " holds none of the expected files", flag + " " + dir, listed, "none");
}

}  // namespace attn::cli
