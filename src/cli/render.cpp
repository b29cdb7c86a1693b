#include "cli/render.hpp"

#include <filesystem>
#include <iostream>
#include <optional>

#include "cli/pictures.hpp"
#include "lesson_kit/options.hpp"
#include "report/dump_sink.hpp"
#include "report/manifest.hpp"
#include "report/stage_select.hpp"
#include "report/text_sink.hpp"

namespace attn::cli {

namespace {

// True when the two directories are one, or one holds the other ("out" and "out/svg").
bool same_or_inside(const std::string& a, const std::string& b) {
  namespace fs = std::filesystem;
  auto normal = [](const std::string& dir) {
    std::error_code ec;
    std::string p = fs::weakly_canonical(fs::absolute(dir, ec), ec).lexically_normal().string();
    while (p.size() > 1 && p.back() == '/') p.pop_back();
    return p + "/";
  };
  const std::string pa = normal(a), pb = normal(b);
  return pa.compare(0, pb.size(), pb) == 0 || pb.compare(0, pa.size(), pa) == 0;
}

// --stage's picks, or UsageError in the one-line form.
report::StageSelection stage_selection(const OutputOptions& options) {
  report::StageSelectionProblem problem;
  auto selection = report::parse_stage_selection(options.stage_list, problem);
  if (!selection) throw UsageError(problem.what, "--stage", problem.expected, problem.got);
  return *selection;
}

}  // namespace

void select_stages(report::Report& report, const OutputOptions& options) {
  if (!options.stage) return;
  report::StageSelectionProblem problem;
  const auto numbers = report::resolve_stage_selection(stage_selection(options), report.stages(), report.header.lesson, problem);
  if (numbers.empty()) throw UsageError(problem.what, "--stage", problem.expected, problem.got);
  report.keep_stages(numbers, options.stage_list);
}

void check_output(const OutputOptions& options) {
  if (options.format != "text" && options.format != "json")
    throw UsageError("unknown --format", "--format", "text or json", "'" + options.format + "'");
  if (options.dump && options.dump_dir.empty())
    throw UsageError("--dump needs a directory", "--dump", "a new or empty directory", "an empty path");
  if (options.dump && options.svg && !options.dump_dir.empty() && !options.svg_dir.empty() &&
      same_or_inside(options.dump_dir, options.svg_dir))
    throw UsageError("--dump and --svg would write into the same directory", "--dump",
                     "a directory apart from --svg " + options.svg_dir, options.dump_dir);
  if (options.dump) {
    try {
      report::check_dump_target(options.dump_dir);
    } catch (const std::exception& e) {
      throw UsageError(std::string("cannot dump to --dump ") + options.dump_dir + ": " + e.what());
    }
  }
  if (options.full_json && options.format != "json")
    throw UsageError("--full-json applies to --format json", "--full-json", "--format json", "--format " + options.format);
  if (options.stage) stage_selection(options);  // the syntax now; the numbers once the lesson ran
  // Every value, and none: a preset's shapes-only default (llama) takes --values to lift.
  if (options.full_json && options.shapes_only)
    throw UsageError("--full-json writes every value, --shapes-only none", "--full-json",
                     "values to write (without --shapes-only; after a shapes-only preset, add --values)", "--shapes-only");
  check_pictures(options);
}

void render(const report::Report& report, const OutputOptions& options) {
  // What the finished report can still refuse (a picture too large, too many pictures) is
  // checked before anything is written; then the dump is staged, the pictures written and the
  // dump moved into place, so a run that fails part-way leaves neither behind.
  check_pictures_of(report, options);
  std::optional<report::StagedDump> dump;
  if (options.dump) {
    try {
      dump.emplace(report, options.command, options.dump_dir);
    } catch (const std::exception& e) {
      throw UsageError(std::string("cannot dump to --dump ") + options.dump_dir + ": " + e.what());
    }
  }
  const std::vector<std::string> pictures = write_pictures(report, options);
  if (dump) {
    try {
      dump->commit();
    } catch (const std::exception& e) {
      remove_pictures(options, pictures);
      throw UsageError(std::string("cannot dump to --dump ") + options.dump_dir + ": " + e.what());
    }
  }
  if (options.format == "json") {
    // --shapes-only means names and shapes here too: the report kept no values.
    std::cout << report::manifest_json(report.header, options.command, report.stages(),
                                       report.keep_values ? report::ValueMode::Inline : report::ValueMode::None,
                                       options.full_json ? static_cast<std::size_t>(-1) : report::kJsonInlineValues);
    return;
  }
  report::TextOptions text;
  text.print.precision = options.precision;
  text.shapes_only = options.shapes_only;
  show_text(report, options, text, pictures);
}

}  // namespace attn::cli
