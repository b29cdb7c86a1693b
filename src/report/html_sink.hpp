// --html FILE: one self-contained page to explore a run (docs/pictures.md, "One page: --html").
//
// The page holds the header (title, setting, the "reproduce in PyTorch" lines) and every stage in
// order: title, equation, shapes in and out, notes, tables, checks and tensors. Every attention
// tensor (TensorItem::attention) is a heatmap with its tokens on the axes and each value on hover,
// with a selector for each leading axis (batch, head). A head view draws the tokens in two columns
// joined by lines whose opacity is the weight, one colour per head. A model run's `attentions`
// (L, 1, h, T, T) also becomes a layer x head grid of thumbnails (the model view), each of which
// opens large when clicked.
//
// The page is one file: its style sheet and script (src/report/html/page.css and page.js, embedded
// at build time) and the run's data, a JSON object in a <script type="application/json"> element,
// with attention values as base64 float32 (exact: a tooltip shows the value the text printed).
// Nothing is fetched: it opens from disk. Its size is bounded by the constants below, whatever the
// run; what they leave out is said on the page.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "report/stage.hpp"
#include "report/staging.hpp"

namespace attn::report {

// The most bytes a page may take; the page states it beside its own size. The three limits below
// keep every page within it (static_assert in html_sink.cpp): heatmap values at 16/3 bytes each
// (float32 in base64), the text, and the page's own style sheet and script.
inline constexpr std::size_t kHtmlPageBudget = std::size_t{4} << 20;  // 4 MiB
// Heatmap values (every attention tensor and the model view together). A run with more keeps the
// first n tokens of every heatmap, n as large as fits; a causal matrix keeps only its lower
// triangle, so it costs n (n + 1) / 2 values a panel. 28 layers x 24 heads x 9 tokens is 30,240.
inline constexpr std::size_t kHtmlHeatmapValues = std::size_t{1} << 19;  // 524,288
// A heatmap's rows and columns at most, past which cells would be too small to point at.
inline constexpr std::size_t kHtmlMaxSide = 128;
// Printed tensors (PyTorch's format, itself summarised past 1,000 values); past it, later tensors
// are listed by name and shape with a note.
inline constexpr std::size_t kHtmlTextBytes = std::size_t{1} << 20;  // 1 MiB
// A table keeps this many rows, else its first 32 and last 8 (as the text output does).
inline constexpr std::size_t kHtmlTableRows = 64;
// A curve (a loss per step) keeps at most this many points.
inline constexpr std::size_t kHtmlCurvePoints = 4096;

struct HtmlOptions {
  int precision = 4;     // decimals of tooltips and printed tensors (--precision)
  std::string command;   // the command line, shown in the header
};

// The page of `report`: a complete HTML document.
std::string html_page(const Report& report, const HtmlOptions& options = {});

// What the budget did to a page, for messages and tests: how many tokens each heatmap keeps
// (0: every token), and how many tensors' printed values were left out.
struct HtmlPlan {
  std::size_t side = 0;           // the first `side` tokens of every heatmap (0: all of them)
  std::size_t heatmap_values = 0; // values kept for heatmaps
  std::size_t tensors_without_text = 0;
};
HtmlPlan html_plan(const Report& report);

// Refuses a FILE that cannot become the page (a directory, something other than a regular file, a
// name ending in '/', or a nearest existing ancestor that is not a writable directory): throws
// std::runtime_error with the reason. Called before the lesson runs.
void check_html_target(const std::string& path);

// The page written to a temporary file beside `path` (its missing parents created) but not yet in
// place: commit() renames it to `path`; without commit() the destructor removes it and the parents
// it created. Errors are std::runtime_error naming `path`.
class StagedHtml {
 public:
  StagedHtml(const std::string& page, const std::string& path);
  void commit();

 private:
  std::optional<StagedFile> file_;  // made once the checks passed
};

}  // namespace attn::report
