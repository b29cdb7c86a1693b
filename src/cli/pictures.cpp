#include "cli/pictures.hpp"

#include <unistd.h>

#include <cstdio>
#include <iostream>
#include <sstream>

#include "cli/terminal.hpp"
#include "lesson_kit/options.hpp"
#include "report/staging.hpp"
#include "report/step.hpp"
#include "report/svg_sink.hpp"

namespace attn::cli {

namespace {

// --head against the lesson's attention: it needs a head axis, and N one of its heads.
void check_head(const report::Report& report, const OutputOptions& options) {
  if (options.view.heads == report::PanelView::Heads::all) return;
  std::size_t fewest = 0;  // the smallest head count of an attention tensor with a head axis
  std::string named;
  for (const report::Stage& s : report.stages())
    for (const report::Item& item : s.items)
      if (const auto* t = std::get_if<report::TensorItem>(&item); t && t->attention && t->curve_x.empty()) {
        const std::size_t h = report::head_count(t->shape);
        if (h > 0 && (fewest == 0 || h < fewest)) fewest = h, named = t->name + " " + shape_str(t->shape);
      }
  if (fewest == 0)
    throw UsageError("--head picks heads, but no attention weights of this run have a head axis", "--head",
                     "a lesson whose weights are (B, h, T, S), such as heads", "no head axis");
  if (options.view.heads == report::PanelView::Heads::one && options.view.head >= fewest)
    throw UsageError("--head " + options.head + " is past the last head of " + named, "--head",
                     "mean or 0.." + std::to_string(fewest - 1), options.head);
}

}  // namespace

void check_pictures(const OutputOptions& options) {
  if (options.step) {
    // Waiting for a key that can never come would hang: refuse at once instead.
    const bool in = isatty(STDIN_FILENO) == 1, out = isatty(STDOUT_FILENO) == 1;
    if (!in || !out)
      throw UsageError("--step needs a terminal", "--step", "standard input and output on a terminal",
                       std::string(!in ? "standard input" : "standard output") + " is not a terminal");
    if (options.format != OutputFormat::text)
      throw UsageError("--step shows the text output", "--step", "--format text",
                       std::string("--format ") + format_name(options.format));
  }
  if (options.svg_panels && !options.svg)
    throw UsageError("--svg-panels picks the pictures --svg draws", "--svg-panels", "--svg DIR", "no --svg");
}

void check_svg(const OutputOptions& options) {
  if (options.shapes_only)
    throw UsageError("--svg draws values, but this run shows shapes only", "--svg",
                     "values (drop --shapes-only; a preset that shows shapes takes --values)", "shapes only");
  const std::string problem = report::svg_dir_problem(*options.svg);
  if (!problem.empty())
    throw UsageError("--svg cannot write there", "--svg", "a directory attn may write in (created if missing)", problem);
}

void check_pictures_of(const report::Report& report, const OutputOptions& options) {
  check_head(report, options);
  if (!options.svg) return;
  check_svg(options);  // again: the directory may have changed while the lesson ran
  const std::string too_large = report::svg_size_problem(report);
  if (!too_large.empty())
    throw UsageError(too_large + " is too large to draw as SVG", "--svg",
                     "at most " + std::to_string(report::kMaxSvgSide) + " rows and columns", too_large);
  std::size_t count = 0;
  std::string available;
  const std::string unmatched =
      report::svg_unmatched_pick(report, options.svg_panels.value_or(report::PanelSelection{}), count, available, options.view);
  if (!unmatched.empty())
    throw UsageError("--svg-panels " + unmatched + " matches no panel of this run", "--svg-panels", available, unmatched);
  if (count > report::kMaxSvgFiles)
    throw UsageError("--svg would write " + std::to_string(count) + " pictures, one per (batch, head) of each attention tensor",
                     options.svg_panels ? "--svg-panels" : "--svg",
                     "at most " + std::to_string(report::kMaxSvgFiles) + " per run; pick panels with --svg-panels, e.g. b0 or h0,h1",
                     std::to_string(count));
}

// The directories made first (their members are destroyed last), then the pictures in them.
struct StagedPictures::Files {
  std::string dir;
  report::MadeDirs made;
  report::SvgSink sink;
  Files(const std::string& d, report::PanelSelection selection, report::PanelView view)
      : dir(d), made(d), sink(d, std::move(selection), view) {}
};

StagedPictures::StagedPictures(const report::Report& report, const OutputOptions& options) {
  if (!options.svg) return;
  check_pictures_of(report, options);
  try {
    files_ = std::make_unique<Files>(*options.svg, options.svg_panels.value_or(report::PanelSelection{}), options.view);
    report::deliver(report, files_->sink);
  } catch (const std::runtime_error& e) {  // the file system said no (read-only, full, ...)
    // Nothing half-done stays: the pictures of this run and the directories it made go.
    files_.reset();
    throw UsageError(std::string("--svg: ") + e.what());
  }
}

StagedPictures::~StagedPictures() = default;

void StagedPictures::commit() {
  if (!files_) return;
  try {
    files_->sink.commit();
  } catch (const std::runtime_error& e) {
    files_.reset();
    throw UsageError(std::string("--svg: ") + e.what());
  }
  files_->made.keep();
}

void StagedPictures::take_back() {
  if (!files_) return;
  for (const auto& name : files_->sink.written()) std::remove((files_->dir + "/" + name).c_str());
  files_->made.remove();
}

const std::vector<std::string>& StagedPictures::names() const {
  static const std::vector<std::string> none;
  return files_ ? files_->sink.written() : none;
}

void show_text(const report::Report& report, const OutputOptions& options, report::TextOptions text,
               const std::vector<std::string>& pictures) {
  const Terminal term = probe_terminal(options.color);
  text.heatmaps = !options.shapes_only;  // a heatmap shows values
  text.page_width = term.stdout_tty ? term.width : 100;
  text.heatmap.width = term.width;
  text.heatmap.color = term.color;
  text.heatmap.decimals = options.print.precision;
  text.heatmap.view = options.view;
  report::TextSink sink(std::cout, text);
  if (options.step) {
    report::StepOptions step;
    step.width = term.width;
    step.highlight = term.color != report::ColorDepth::none;
    // Paging needs the window's size, asked again before each page (it may have been resized):
    // the real one (lines wrap at the window's edge whatever COLUMNS says), else 80 x 24.
    step.window = [&term]() {
      const auto now = window_size();
      return std::pair<std::size_t, std::size_t>{now.first > 0 ? now.first : term.width, now.second > 0 ? now.second : 24};
    };
    std::ostringstream page_text;
    report::TextSink page_sink(page_text, text);
    step.render = [&page_text, &page_sink](const report::Stage& s, std::size_t total) {
      page_text.str("");
      page_sink.stage(s, total);
      return page_text.str();
    };
    TerminalKeys keys(STDIN_FILENO);  // restores the terminal however this block is left
    report::step_through(report, sink, std::cout, keys, step);
  } else {
    report::deliver(report, sink);
  }
  if (!pictures.empty()) {
    std::cout << "\npictures: " << pictures.size() << " SVG file" << (pictures.size() == 1 ? "" : "s") << " in "
              << *options.svg << "\n";
    const std::size_t listed = pictures.size() <= 10 ? pictures.size() : 8;
    for (std::size_t i = 0; i < listed; ++i) std::cout << "    " << pictures[i] << "\n";
    if (listed < pictures.size()) std::cout << "    ... and " << pictures.size() - listed << " more\n";
  }
}

}  // namespace attn::cli
