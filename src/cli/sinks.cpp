// The table of file outputs (sinks.hpp): one row per option, its checks and its staging.
#include "cli/sinks.hpp"

#include <cstdio>
#include <filesystem>

#include "cli/pictures.hpp"
#include "lesson_kit/options.hpp"
#include "report/dump_sink.hpp"
#include "report/html_sink.hpp"
#include "report/npz_sink.hpp"

namespace attn::cli {

namespace {

// A path as one spelling, ending in '/': "out", "./out/" and "x/../out" agree.
std::string normal_dir(const std::string& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path absolute = fs::absolute(dir, ec);
  fs::path resolved = fs::weakly_canonical(absolute, ec);
  // A path that cannot be resolved (a symbolic link loop, a directory attn may not enter) gives an
  // empty path, which would read as "/" and so as the same directory as every other output: it
  // is compared as written instead (the output's own check then names what is wrong with it).
  if (ec || resolved.empty()) resolved = absolute;
  std::string p = resolved.lexically_normal().string();
  while (p.size() > 1 && p.back() == '/') p.pop_back();
  return p + "/";
}

// True when `inner` is `outer` or lies inside it ("out/svg" in "out").
bool same_or_under(const std::string& inner, const std::string& outer) {
  const std::string pi = normal_dir(inner), po = normal_dir(outer);
  return pi.compare(0, po.size(), po) == 0;
}

// True when the two directories are one, or one holds the other ("out" and "out/svg").
bool same_or_inside(const std::string& a, const std::string& b) { return same_or_under(a, b) || same_or_under(b, a); }

// A report:: staged output (StagedDump, StagedNpz, StagedHtml) behind StagedOutput; `refusal`
// starts the message of a failed commit ("cannot dump to --dump out").
template <class Staged>
class Landing : public StagedOutput {
 public:
  template <class... Args>
  Landing(std::string refusal, Args&&... args) : refusal_(std::move(refusal)), staged_(std::forward<Args>(args)...) {}
  void commit() override {
    try {
      staged_.commit();
    } catch (const std::exception& e) {
      throw UsageError(refusal_ + ": " + e.what());
    }
  }

 private:
  std::string refusal_;
  Staged staged_;
};

// --dump DIR: apart from --svg, and a new directory or one holding a dump attn wrote.
void check_dump(const OutputOptions& options) {
  const std::string& dir = *options.dump;
  if (options.svg && !options.svg->empty() && same_or_inside(dir, *options.svg))
    throw UsageError("--dump and --svg would write into the same directory", "--dump",
                     "a directory apart from --svg " + *options.svg, dir);
  try {
    report::check_dump_target(dir);
  } catch (const std::exception& e) {
    throw UsageError(std::string("cannot dump to --dump ") + dir + ": " + e.what());
  }
}

std::unique_ptr<StagedOutput> stage_dump(const report::Report& report, const OutputOptions& options) {
  const std::string refusal = "cannot dump to --dump " + *options.dump;
  try {
    return std::make_unique<Landing<report::StagedDump>>(refusal, report, options.command, *options.dump);
  } catch (const std::exception& e) {
    throw UsageError(refusal + ": " + e.what());
  }
}

// --npz FILE: a file apart from --dump and --svg, where attn may write.
void check_npz(const OutputOptions& options) {
  const std::string& path = *options.npz;
  // The archive inside the dump's directory would be swapped out with the old dump, or make the
  // directory no longer a dump attn wrote; one path for both would be a file and a directory.
  if (options.dump && same_or_inside(path, *options.dump))
    throw UsageError("--npz and --dump would write to the same place", "--npz", "a file outside --dump " + *options.dump,
                     path);
  // --svg DIR at or under the archive's path: one of them would have to be a file and a directory.
  // (The archive inside the --svg directory is fine: the pictures only ever add their own files.)
  if (options.svg && !options.svg->empty() && same_or_under(*options.svg, path))
    throw UsageError("--npz and --svg would write to the same place", "--npz", "a file apart from --svg " + *options.svg,
                     path);
  try {
    report::check_npz_target(path);
  } catch (const std::exception& e) {
    throw UsageError(std::string("cannot write --npz ") + path + ": " + e.what());
  }
}

std::unique_ptr<StagedOutput> stage_npz(const report::Report& report, const OutputOptions& options) {
  const std::string refusal = "cannot write --npz " + *options.npz;
  try {
    return std::make_unique<Landing<report::StagedNpz>>(refusal, report, options.command, *options.npz);
  } catch (const std::exception& e) {
    throw UsageError(refusal + ": " + e.what());
  }
}

// --html FILE: values to draw, a file name attn can write, apart from every other output.
void check_html(const OutputOptions& options) {
  const std::string& path = *options.html;
  if (options.shapes_only)
    throw UsageError("--html draws values, but this run shows shapes only", "--html",
                     "values (drop --shapes-only; a preset that shows shapes takes --values)", "shapes only");
  if (options.npz && normal_dir(path) == normal_dir(*options.npz))
    throw UsageError("--html and --npz would write the same file", "--html", "a file apart from --npz " + *options.npz, path);
  if (options.dump && same_or_inside(path, *options.dump))
    throw UsageError("--html and --dump would write to the same place", "--html", "a file outside --dump " + *options.dump, path);
  if (options.svg && !options.svg->empty() && same_or_under(*options.svg, path))
    throw UsageError("--html and --svg would write to the same place", "--html", "a file apart from --svg " + *options.svg, path);
  try {
    report::check_html_target(path);
  } catch (const std::exception& e) {
    throw UsageError(std::string("cannot write --html ") + path + ": " + e.what());
  }
}

// The page can be taken back: this run wrote it whole.
class HtmlLanding : public Landing<report::StagedHtml> {
 public:
  HtmlLanding(const std::string& page, const std::string& path)
      : Landing("cannot write --html " + path, page, path), path_(path) {}
  bool can_take_back() const override { return true; }
  void take_back() override { std::remove(path_.c_str()); }

 private:
  std::string path_;
};

std::unique_ptr<StagedOutput> stage_html(const report::Report& report, const OutputOptions& options) {
  try {
    report::HtmlOptions page;
    page.precision = options.print.precision;
    page.command = options.command;
    return std::make_unique<HtmlLanding>(report::html_page(report, page), *options.html);
  } catch (const std::exception& e) {
    throw UsageError(std::string("cannot write --html ") + *options.html + ": " + e.what());
  }
}

// --svg DIR: StagedPictures (pictures.hpp) stages, commits and takes back on its own.
class PicturesLanding : public StagedOutput {
 public:
  PicturesLanding(const report::Report& report, const OutputOptions& options) : pictures_(report, options) {}
  void commit() override { pictures_.commit(); }
  bool can_take_back() const override { return true; }
  void take_back() override { pictures_.take_back(); }
  std::vector<std::string> pictures() const override { return pictures_.names(); }

 private:
  StagedPictures pictures_;
};

std::unique_ptr<StagedOutput> stage_svg(const report::Report& report, const OutputOptions& options) {
  return std::make_unique<PicturesLanding>(report, options);
}

}  // namespace

const std::vector<FileSink>& file_sinks() {
  using O = OutputOptions;
  static const std::vector<FileSink> table = {
      {"--dump", &O::dump, check_dump, stage_dump},
      {"--npz", &O::npz, check_npz, stage_npz},
      {"--html", &O::html, check_html, stage_html},
      {"--svg", &O::svg, check_svg, stage_svg},
  };
  return table;
}

}  // namespace attn::cli
