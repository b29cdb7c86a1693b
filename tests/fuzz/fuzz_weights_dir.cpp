// Fuzz target: the directory loaders behind --weights DIR and --states DIR (and --input x.npy),
// followed by the lesson that reads them, through the same functions main() calls:
// cli::load_input, cli::load_npy_dir, cli::refuse_unused_weights, then LessonEntry::run.
//
// Input layout: byte 0 picks the lesson (mod 5: self-attention, causal, heads, bahdanau, luong)
// and two switches (bit 3: --weights-layout torch, bit 4: --allow-nonfinite). The rest is split
// at each "ATTNFILE" marker into the files, in order: the lesson's weight files
// (weight_file_names), its state files (state_file_names), then x.npy for --input. An empty
// piece leaves that file out. Every piece is written to a private temporary directory, so the
// loaders read real files.
//
// A refusal (attn::UsageError) is the expected outcome for bad files; any other exception, a
// crash or a sanitizer report is a bug: main() would print "internal: ..." or worse.
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "cli/external_io.hpp"
#include "lesson_kit/registry.hpp"
#include "report/stage.hpp"

namespace fs = std::filesystem;

namespace {

const char* const kLessons[] = {"self-attention", "causal", "heads", "bahdanau", "luong"};
const std::string kMarker = "ATTNFILE";

struct Scratch {
  fs::path root;
  Scratch() {
    std::string tmpl = (fs::temp_directory_path() / "attn-fuzz-XXXXXX").string();
    if (!::mkdtemp(tmpl.data())) std::abort();
    root = tmpl;
  }
  ~Scratch() {
    std::error_code ec;
    fs::remove_all(root, ec);
  }
  // An empty directory `name` under the root.
  std::string fresh(const std::string& name) {
    const fs::path p = root / name;
    fs::remove_all(p);
    fs::create_directory(p);
    return p.string();
  }
};

void write_file(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  static Scratch scratch;  // one per process; removed at exit
  const unsigned control = data[0];
  const std::string lesson_name = kLessons[control % 5];
  const bool torch_layout = control & 8, allow_nonfinite = control & 16;
  const attn::LessonEntry* lesson = attn::find_lesson(lesson_name);
  if (!lesson) std::abort();

  std::vector<std::string> pieces;
  const std::string rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  for (std::size_t from = 0;;) {
    const std::size_t at = rest.find(kMarker, from);
    pieces.push_back(rest.substr(from, at == std::string::npos ? std::string::npos : at - from));
    if (at == std::string::npos) break;
    from = at + kMarker.size();
  }

  const std::vector<std::string> weight_names = attn::weight_file_names(lesson_name);
  const std::vector<std::string> state_names = attn::state_file_names(lesson_name);
  const std::string wdir = scratch.fresh("weights"), sdir = scratch.fresh("states");
  std::size_t k = 0;
  bool any_weight = false, any_state = false;
  std::string x;
  for (const auto& n : weight_names)
    if (k < pieces.size() && !pieces[k++].empty()) {
      write_file(wdir + "/" + n + ".npy", pieces[k - 1]);
      any_weight = true;
    }
  for (const auto& n : state_names)
    if (k < pieces.size() && !pieces[k++].empty()) {
      write_file(sdir + "/" + n + ".npy", pieces[k - 1]);
      any_state = true;
    }
  if (k < pieces.size()) x = pieces[k];

  attn::LessonOptions opts;
  try {
    if (!x.empty() && (lesson->options & attn::kInput)) {
      write_file(scratch.root.string() + "/x.npy", x);
      opts.input = attn::cli::load_input(scratch.root.string() + "/x.npy", allow_nonfinite);
    }
    if (any_weight) {
      opts.weights_dir = wdir;
      attn::cli::load_npy_dir("--weights", wdir, weight_names, opts.weights, allow_nonfinite);
      attn::cli::refuse_unused_weights(*lesson, wdir);
      opts.weights_torch_layout = torch_layout;
    }
    if (any_state) {
      opts.states_dir = sdir;
      attn::cli::load_npy_dir("--states", sdir, state_names, opts.states, allow_nonfinite);
    }
    if (!any_weight && !any_state && !opts.input) return 0;  // the lesson's own defaults: not fuzzed here
    attn::report::Report report;
    lesson->run(opts, report);
    attn::cli::nonfinite_notes(opts);
  } catch (const attn::UsageError&) {
    return 0;
  }
  return 0;
}
