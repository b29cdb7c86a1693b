#include "cli/external_io.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "io/npy.hpp"
#include "io/text_matrix.hpp"
#include "lesson_kit/external.hpp"
#include "lesson_kit/registry.hpp"
#include "lesson_kit/seq2seq.hpp"

namespace fs = std::filesystem;

namespace attn::cli {
namespace {

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

ExternalTensor as_external(const NpyArray& a, const std::string& source, const std::string& path) {
  return ExternalTensor{source, a.shape, a.values, path};
}

std::string where(const NpyArray& a, const NonFinite& nf, std::size_t shown) {
  std::string s;
  for (std::size_t k = 0; k < nf.first.size() && k < shown; ++k)
    s += (k ? ", " : "") + value_str(a.values[nf.first[k]]) + " at " + index_str(a.shape, nf.first[k]);
  return s;
}

}  // namespace

void require_finite(const ExternalTensor& t) {
  const NpyArray a{t.shape, t.values};
  const NonFinite nf = find_nonfinite(t.values, 1);
  if (nf.count == 0) return;
  throw UsageError(t.source + " holds " + (nf.count == 1 ? "a non-finite value" : std::to_string(nf.count) + " non-finite values"),
                   t.source, "finite numbers (or --allow-nonfinite)",
                   where(a, nf, 1) + (nf.count > 1 ? ", the first of " + std::to_string(nf.count) : ""));
}

void check_declared_input(const LessonEntry& lesson, const LessonOptions& opts, const Shape& shape,
                          const std::string& source, bool complete) {
  // The encoder-decoder lessons read --input as source embeddings (S, d_in); every other lesson
  // reads x (T, d_in) or (B, T, d_in) and scores its tokens against each other.
  if (lesson.options & kSrc) check_source_shape(opts, shape, source, complete);
  else check_input_shape(opts, shape, source, 1, complete);
}

ExternalTensor load_input(const std::string& path, bool allow_nonfinite, const DeclaredCheck& check) {
  if (const std::string problem = not_a_file(path); !problem.empty())
    throw UsageError("cannot read --input", "--input", "an .npy or text matrix file", "'" + path + "' (" + problem + ")");
  ExternalTensor t;
  const std::string source = "--input " + path;
  try {
    if (ends_with(path, ".npy")) {
      t = as_external(read_npy(path, [&](const Shape& declared) { if (check) check(declared, source, true); }), source, path);
    } else if (ends_with(path, ".csv") || ends_with(path, ".tsv") || ends_with(path, ".txt")) {
      const ShapeCheck rows_so_far = [&](const Shape& rows) {
        if (!check) return;
        try {
          check(rows, source, false);
        } catch (const UsageError& e) {
          // The shape in the message is the rows read so far: say that the read stopped there.
          std::string what = e.what();
          if (!what.empty() && what.back() == ')') what.pop_back();
          throw UsageError(what + "; reading stopped at row " + std::to_string(rows[0]) + ")");
        }
      };
      t = as_external(read_text_matrix(path, allow_nonfinite, rows_so_far), source, path);
    } else {
      throw UsageError("--input has an unknown file type", "--input", ".npy, .csv, .tsv or .txt", "'" + path + "'");
    }
  } catch (const NpyError& e) {
    throw UsageError(std::string("cannot read --input: ") + e.what());
  }
  if (!allow_nonfinite) require_finite(t);
  return t;
}

void load_npy_dir(const std::string& flag, const std::string& dir, const std::vector<std::string>& names,
                  std::map<std::string, ExternalTensor>& into, bool allow_nonfinite, bool shapes_only) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    const std::string problem = fs::exists(dir, ec) ? "not a directory" : "no such directory";
    throw UsageError("cannot read " + flag, flag, "a directory of .npy files", "'" + dir + "' (" + problem + ")");
  }
  // A directory attn may not list or enter would otherwise look empty ("holds none of the expected
  // files"): name the permission instead.
  if (::access(dir.c_str(), R_OK | X_OK) != 0)
    throw UsageError("cannot read " + flag, flag, "a directory of .npy files attn may read",
                     "'" + dir + "' (" + std::strerror(errno) + ")");
  std::string listed;
  for (const auto& name : names) {
    listed += (listed.empty() ? "" : ", ") + name + ".npy";
    const fs::path file = fs::path(dir) / (name + ".npy");
    if (!fs::exists(fs::symlink_status(file, ec)) && !fs::exists(file, ec)) continue;
    ExternalTensor t;
    try {
      // Every tensor a lesson reads from a directory is shown: the printing limit (and the memory
      // limit) apply to the shape the header declares, before the data is read.
      const auto limit = [&](const Shape& declared) {
        check_size(name + ".npy", declared, shapes_only, flag + " " + file.string());
      };
      t = as_external(read_npy(file.string(), limit), flag + " " + file.string(), file.string());
    } catch (const NpyError& e) {
      throw UsageError("cannot read " + flag + ": " + e.what());
    }
    std::size_t count = 1;
    for (std::size_t d : t.shape) count *= d;
    if (count == 0)
      throw UsageError(name + ".npy holds no values", t.source, "every axis at least 1", shape_str(t.shape));
    if (!allow_nonfinite) require_finite(t);
    into[name] = std::move(t);
  }
  if (into.empty()) throw UsageError(flag + " holds none of the expected files", flag + " " + dir, listed, "none");
}

void refuse_unused_weights(const LessonEntry& lesson, const std::string& dir) {
  const std::vector<std::string> mine = weight_file_names(lesson);
  std::map<std::string, std::vector<std::string>> takers;  // file name -> the lessons that take it
  for (const auto& l : lessons()) {
    if (!(l.options & kWeights) || &l == &lesson) continue;
    // Only lessons reading the same kind of directory: bahdanau's W_a.npy beside luong's W_g.npy
    // is nobody's mistake, but a bias beside W_query.npy looks like it is used.
    const std::vector<std::string> theirs = weight_file_names(l);
    bool overlap = false;
    for (const auto& name : theirs)
      for (const auto& m : mine) overlap = overlap || m == name;
    if (!overlap) continue;
    for (const auto& name : theirs) {
      bool taken = false;
      for (const auto& m : mine) taken = taken || m == name;
      if (!taken) takers[name].push_back(l.name);
    }
  }
  std::string listed;
  for (const auto& m : mine) listed += (listed.empty() ? "" : ", ") + m + ".npy";
  std::error_code ec;
  for (const auto& [name, names] : takers) {
    const fs::path file = fs::path(dir) / (name + ".npy");
    if (!fs::exists(fs::symlink_status(file, ec))) continue;
    const bool bias = ends_with(name, "_bias");
    std::string by;  // "heads", "heads and gqa", "a, b and c"
    for (std::size_t i = 0; i < names.size(); ++i)
      by += (i == 0 ? "" : i + 1 == names.size() ? " and " : ", ") + names[i];
    throw UsageError(std::string(lesson.name) + " does not use " + name + ".npy" + (bias ? " (it has no biases)" : "") +
                         "; the " + by + " lesson" + (names.size() > 1 ? "s take" : " takes") + " it",
                     "--weights " + dir, listed, file.string());
  }
}

std::vector<std::string> nonfinite_notes(const LessonOptions& opts) {
  std::vector<std::string> notes;
  auto add = [&](const ExternalTensor& t) {
    const NpyArray a{t.shape, t.values};
    const NonFinite nf = find_nonfinite(t.values, 3);
    if (nf.count == 0) return;
    notes.push_back(t.source + " holds " + std::to_string(nf.count) + " non-finite value" + (nf.count == 1 ? "" : "s") +
                    " (kept by --allow-nonfinite): " + where(a, nf, 3) + (nf.count > 3 ? ", ..." : "") +
                    (nf.count == 1 ? ". It spreads" : ". They spread") + " to every value computed from " +
                    (nf.count == 1 ? "it." : "them."));
  };
  if (opts.input) add(*opts.input);
  for (const auto& [name, t] : opts.weights) add(t);
  for (const auto& [name, t] : opts.states) add(t);
  return notes;
}

OptionFiles option_files(const LessonEntry& lesson) {
  OptionFiles files;
  files.input = [&lesson](const std::string& path, bool allow_nonfinite, LessonOptions& o) {
    const auto limits = [&](const Shape& shape, const std::string& source, bool complete) {
      check_declared_input(lesson, o, shape, source, complete);
    };
    o.input = load_input(path, allow_nonfinite, limits);
  };
  files.weights = [&lesson](const std::string& dir, bool allow_nonfinite, LessonOptions& o) {
    o.weights_dir = dir;
    load_npy_dir("--weights", dir, weight_file_names(lesson), o.weights, allow_nonfinite, o.shapes_only);
    refuse_unused_weights(lesson, dir);
  };
  files.states = [&lesson](const std::string& dir, bool allow_nonfinite, LessonOptions& o) {
    o.states_dir = dir;
    load_npy_dir("--states", dir, state_file_names(lesson), o.states, allow_nonfinite, o.shapes_only);
  };
  return files;
}

}  // namespace attn::cli
