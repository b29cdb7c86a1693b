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
  std::ostream& out_;
  TextOptions opts_;
};

// Greedy word wrap: the first line starts with `first`, the others with `rest`.
std::string wrap(const std::string& text, std::size_t width, const std::string& first,
                 const std::string& rest);

// A plain table: columns of numbers right-aligned, columns of words left-aligned.
// Rows printed whole at most; a longer table shows its first 32 and last 8 and counts the rest.
inline constexpr std::size_t kMaxTableRows = 64;
std::string render_table(const TableItem& table);

}  // namespace attn::report
