#include "report/dump_files.hpp"

#include "io/npy.hpp"
#include "report/manifest.hpp"

namespace attn::report {

std::size_t DumpFile::size() const { return tensor ? npy_size(tensor->shape) : text.size(); }

std::string DumpFile::bytes() const { return tensor ? encode_npy(tensor->shape, tensor->values.data()) : text; }

std::vector<DumpFile> dump_files(const Report& report, const std::string& command) {
  std::vector<DumpFile> files;
  // A shapes-only run kept no values (Report::keep_values): its dump is the manifest alone, with
  // every name and shape, and no .npy file that would have to pretend to hold numbers.
  const bool values = report.keep_values;
  for (const Stage& s : report.stages())
    for (std::size_t i = 0; values && i < s.items.size(); ++i)
      if (const auto* t = std::get_if<TensorItem>(&s.items[i])) files.push_back({tensor_file_name(s, i), t, {}});
  files.push_back({"manifest.json", nullptr,
                   manifest_json(report.header, command, report.stages(), values ? ValueMode::Files : ValueMode::None)});
  return files;
}

}  // namespace attn::report
