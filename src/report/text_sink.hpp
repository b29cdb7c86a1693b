// The terminal printer: a lesson header, then each stage as
//   [3/9] title / equation / in and out shapes / tensors, notes, tables and checks.
#pragma once

#include <ostream>

#include "report/heatmap.hpp"
#include "report/stage.hpp"
#include "report/tensor_format.hpp"

namespace attn::report {

struct TextOptions {
  PrintOptions print;
  bool shapes_only = false;  // names and shapes, no values
  std::size_t width = 80;    // notes are wrapped to this many columns
  // Tables fold their columns, and equation and PyTorch lines wrap, to fit this many: 100 on a
  // pipe, the window's width on a terminal.
  std::size_t page_width = 100;
  // --full: folded stages whole and detail tensors printed (Stage::fold, Stage::detail). A
  // lesson's default run is kept to one sitting without it.
  bool full = false;
  // Attention-weight tensors are also drawn as heatmaps (docs/pictures.md), laid out to the
  // terminal's width rather than to `width`: the picture may use a wide window.
  bool heatmaps = true;
  HeatmapOptions heatmap;
};

class TextSink : public Sink {
 public:
  TextSink(std::ostream& out, TextOptions options) : out_(out), opts_(std::move(options)) {}
  void begin(const Header& header, std::size_t total_stages) override;
  void stage(const Stage& stage, std::size_t total_stages) override;
  void end() override;

 private:
  void item(const Item& item);
  void flush_folded();
  std::ostream& out_;
  TextOptions opts_;
  // A run of folded stages, printed as their titles and one line counting them once the run ends.
  std::string folded_titles_;
  std::size_t folded_count_ = 0, folded_first_ = 0;
  const Stage* folded_last_ = nullptr;
};

// Greedy word wrap: the first line starts with `first`, the others with `rest`.
std::string wrap(const std::string& text, std::size_t width, const std::string& first,
                 const std::string& rest);

// A plain table: columns of numbers right-aligned, columns of words left-aligned.
// Rows printed whole at most; a longer table shows its first 32 and last 8 and counts the rest.
// Wider than `width` columns, it is printed in parts, each with the first column (the row's
// label) and as many of the next columns as fit.
inline constexpr std::size_t kMaxTableRows = 64;
std::string render_table(const TableItem& table, std::size_t width = static_cast<std::size_t>(-1));

// An equation line that fits `width` columns once indented by `indent`: broken after "; " where
// it can, else between words, each further line indented four more.
std::string wrap_equation(const std::string& line, std::size_t width, const std::string& indent);

// A line of Python broken, where it is wider than `width` once indented by `indent`, after a
// comma inside brackets (outside strings and comments): Python joins such lines itself, so the
// block still runs as printed. Each further line starts under the bracket that is open, or four
// columns in when that is too far right.
std::string wrap_python(const std::string& line, std::size_t width, const std::string& indent);

}  // namespace attn::report
