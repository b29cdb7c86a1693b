#include "cli/render.hpp"

#include <cstdio>
#include <iostream>
#include <memory>

#include "cli/pictures.hpp"
#include "cli/sinks.hpp"
#include "lesson_kit/options.hpp"
#include "report/interrupt.hpp"
#include "report/manifest.hpp"
#include "report/stage_select.hpp"
#include "report/text_sink.hpp"

namespace attn::cli {

void select_stages(report::Report& report, const OutputOptions& options) {
  if (!options.stage) return;
  report::StageSelectionProblem problem;
  const auto numbers = report::resolve_stage_selection(*options.stage, report.stages(), report.header.lesson, problem);
  if (numbers.empty()) throw UsageError(problem.what, "--stage", problem.expected, problem.got);
  report.keep_stages(numbers, options.stage->text);
}

void check_output(const OutputOptions& options) {
  // Each file output's target, apart from the others' (cli/sinks.cpp).
  for (const FileSink& sink : file_sinks())
    if (options.*sink.path) sink.check(options);
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
  // checked before anything is written; then each file output of the table (cli/sinks.cpp: the
  // dump, the archive, the page, the pictures) is staged under temporary names and moved into
  // place, so a run that fails part-way, or is stopped by a signal, leaves none of them behind.
  // (The archive's rename comes last: a rename beside a checked, writable target is the step
  // least likely to fail, so it is the one a failure can follow least.)
  check_pictures_of(report, options);
  std::vector<std::unique_ptr<StagedOutput>> staged;
  for (const FileSink& sink : file_sinks())
    if (options.*sink.path) staged.push_back(sink.stage(report, options));
  {
    // Every output moves into place in one step (a few renames) that a signal does not cut: one
    // that comes meanwhile ends attn once they all landed (report/interrupt.hpp). Those that can
    // be taken back land first; one that cannot land takes them back, named with its option.
    const report::SignalsHeld held;
    std::vector<StagedOutput*> order, landed;
    for (const bool reversible : {true, false})
      for (const auto& s : staged)
        if (s->can_take_back() == reversible) order.push_back(s.get());
    for (StagedOutput* s : order) {
      try {
        s->commit();
      } catch (const UsageError&) {
        for (StagedOutput* l : landed) l->take_back();
        throw;
      }
      if (s->can_take_back()) landed.push_back(s);
    }
  }
  std::vector<std::string> pictures;
  for (const auto& s : staged)
    for (const auto& name : s->pictures()) pictures.push_back(name);
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
  show_text(report, options, text, pictures);
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
