// The files of a lesson's dump, as a list: each .npy (one per tensor shown, float32, C order) and
// manifest.json last. `--dump DIR` writes them into DIR and `--npz PATH` stores them in one zip
// archive under the same names, so the two outputs cannot drift apart: both read this list.
// With --shapes-only (Report::keep_values false) the list is manifest.json alone.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "report/stage.hpp"

namespace attn::report {

// One file: a tensor's .npy (`tensor` set) or the manifest (`text`). Its bytes are made only when
// asked for, one file at a time, so that writing a dump never holds a second copy of every tensor;
// its size is known before (the .npz checks zip's 4 GiB limit before writing a byte).
struct DumpFile {
  std::string name;                    // "s06_attn_weights.npy", "manifest.json"
  const TensorItem* tensor = nullptr;  // the tensor of a .npy; null for manifest.json
  std::string text;                    // manifest.json's text

  std::size_t size() const;
  std::string bytes() const;
};

// The dump of `report` run as `command` (recorded in the manifest): every tensor's .npy in stage
// order, then manifest.json. The items point into `report`, which must outlive the list.
std::vector<DumpFile> dump_files(const Report& report, const std::string& command);

}  // namespace attn::report
