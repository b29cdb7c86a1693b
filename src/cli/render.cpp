#include "cli/render.hpp"

#include <cstdio>
#include <filesystem>
#include <iostream>
#include <optional>

#include "cli/pictures.hpp"
#include "lesson_kit/options.hpp"
#include "report/dump_sink.hpp"
#include "report/html_sink.hpp"
#include "report/interrupt.hpp"
#include "report/manifest.hpp"
#include "report/npz_sink.hpp"
#include "report/stage_select.hpp"
#include "report/text_sink.hpp"

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

// --html FILE: a file name attn can write, apart from every other output.
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

}  // namespace

void select_stages(report::Report& report, const OutputOptions& options) {
  if (!options.stage) return;
  report::StageSelectionProblem problem;
  const auto numbers = report::resolve_stage_selection(*options.stage, report.stages(), report.header.lesson, problem);
  if (numbers.empty()) throw UsageError(problem.what, "--stage", problem.expected, problem.got);
  report.keep_stages(numbers, options.stage->text);
}

void check_output(const OutputOptions& options) {
  if (options.dump && options.svg && !options.svg->empty() && same_or_inside(*options.dump, *options.svg))
    throw UsageError("--dump and --svg would write into the same directory", "--dump",
                     "a directory apart from --svg " + *options.svg, *options.dump);
  if (options.dump) {
    try {
      report::check_dump_target(*options.dump);
    } catch (const std::exception& e) {
      throw UsageError(std::string("cannot dump to --dump ") + *options.dump + ": " + e.what());
    }
  }
  // The archive inside the dump's directory would be swapped out with the old dump, or make the
  // directory no longer a dump attn wrote; one path for both would be a file and a directory.
  if (options.npz && options.dump && same_or_inside(*options.npz, *options.dump))
    throw UsageError("--npz and --dump would write to the same place", "--npz",
                     "a file outside --dump " + *options.dump, *options.npz);
  // --svg DIR at or under the archive's path: one of them would have to be a file and a directory.
  // (The archive inside the --svg directory is fine: the pictures only ever add their own files.)
  if (options.npz && options.svg && !options.svg->empty() && same_or_under(*options.svg, *options.npz))
    throw UsageError("--npz and --svg would write to the same place", "--npz", "a file apart from --svg " + *options.svg,
                     *options.npz);
  if (options.npz) {
    try {
      report::check_npz_target(*options.npz);
    } catch (const std::exception& e) {
      throw UsageError(std::string("cannot write --npz ") + *options.npz + ": " + e.what());
    }
  }
  if (options.html) check_html(options);
  const bool json = options.format == OutputFormat::json;
  if (options.full && json)
    throw UsageError("--full applies to the text output", "--full",
                     "text (JSON always holds every stage; --full-json: every value too)", "--format json");
  if (options.full_json && !json)
    throw UsageError("--full-json applies to --format json", "--full-json", "--format json",
                     std::string("--format ") + format_name(options.format));
  // Every value, and none: a preset's shapes-only default (llama) takes --values to lift.
  if (options.full_json && options.shapes_only)
    throw UsageError("--full-json writes every value, --shapes-only none", "--full-json",
                     "values to write (without --shapes-only; after a shapes-only preset, add --values)", "--shapes-only");
  check_pictures(options);
}

void render(const report::Report& report, const OutputOptions& options) {
  // What the finished report can still refuse (a picture too large, too many pictures) is
  // checked before anything is written; then the dump, the archive, the page and the pictures
  // are staged under temporary names and moved into place, so a run that fails part-way, or is
  // stopped by a signal, leaves none of them behind. (The archive's rename comes last: a rename
  // beside a checked, writable target is the step least likely to fail, so it is the one a
  // failure can follow least.)
  check_pictures_of(report, options);
  std::optional<report::StagedDump> dump;
  if (options.dump) {
    try {
      dump.emplace(report, options.command, *options.dump);
    } catch (const std::exception& e) {
      throw UsageError(std::string("cannot dump to --dump ") + *options.dump + ": " + e.what());
    }
  }
  std::optional<report::StagedNpz> npz;
  if (options.npz) {
    try {
      npz.emplace(report, options.command, *options.npz);
    } catch (const std::exception& e) {
      throw UsageError(std::string("cannot write --npz ") + *options.npz + ": " + e.what());
    }
  }
  std::optional<report::StagedHtml> html;
  if (options.html) {
    try {
      report::HtmlOptions page;
      page.precision = options.print.precision;
      page.command = options.command;
      html.emplace(report::html_page(report, page), *options.html);
    } catch (const std::exception& e) {
      throw UsageError(std::string("cannot write --html ") + *options.html + ": " + e.what());
    }
  }
  StagedPictures pictures(report, options);
  {
    // Every output moves into place in one step (a few renames) that a signal does not cut: one
    // that comes meanwhile ends attn once they all landed (report/interrupt.hpp).
    const report::SignalsHeld held;
    pictures.commit();
    // Each output lands in turn; one that cannot takes back the pictures and the page already
    // landed, and is named with its option.
    auto land = [&](auto& output, const std::string& refusal, bool page_landed) {
      try {
        output.commit();
      } catch (const std::exception& e) {
        pictures.take_back();
        if (page_landed) std::remove(options.html->c_str());  // this run's page goes with the rest
        throw UsageError(refusal + ": " + e.what());
      }
    };
    if (html) land(*html, "cannot write --html " + *options.html, false);
    if (dump) land(*dump, "cannot dump to --dump " + *options.dump, html.has_value());
    if (npz) land(*npz, "cannot write --npz " + *options.npz, html.has_value());
  }
  if (options.format == OutputFormat::json) {
    // --shapes-only means names and shapes here too: the report kept no values.
    std::cout << report::manifest_json(report.header, options.command, report.stages(),
                                       report.keep_values ? report::ValueMode::Inline : report::ValueMode::None,
                                       options.full_json ? static_cast<std::size_t>(-1) : report::kJsonInlineValues);
    return;
  }
  report::TextOptions text;
  text.print = options.print;
  text.shapes_only = options.shapes_only;
  // Stages chosen with --stage, and each page of --step, are shown whole.
  text.full = options.full || options.stage || options.step;
  show_text(report, options, text, pictures.names());
}

int failed_checks_status(const report::Report& report) {
  // A failed check is not hidden in the middle of the output: once everything is printed, each
  // one is named on stderr and the status says so.
  const auto failed = report::failed_checks(report);
  if (failed.empty()) return 0;
  std::cout.flush();
  for (const auto& f : failed)
    if (report::unanswered(*f.check))
      std::cerr << "attn: question unanswered in stage " << f.stage << ": " << f.check->text << " ("
                << f.check->measure << " = " << report::measured(f.check->value) << ")\n";
    else
      std::cerr << "attn: check failed in stage " << f.stage << ": " << f.check->text << " (" << f.check->measure
                << " = " << report::measured(f.check->value) << ", required "
                << (f.check->relation == report::Relation::AtMost ? "<= " : ">= ") << f.check->bound << ")\n";
  return kExitCheckFailed;
}

}  // namespace attn::cli
