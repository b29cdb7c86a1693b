#include "report/step.hpp"

#include <algorithm>
#include <sstream>
#include <vector>

#include "report/text_width.hpp"

namespace attn::report {

namespace {

// Columns a line takes on screen: colour escapes (ESC [ ... m) take none.
std::size_t visible_width(const std::string& line) {
  std::string plain;
  for (std::size_t i = 0; i < line.size(); ++i) {
    if (line[i] == '\x1b') {
      while (i < line.size() && line[i] != 'm') ++i;
      continue;
    }
    plain += line[i];
  }
  return display_width(plain);
}

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// A stage's text cut into its heading (title, equation, shapes) and its body. The text starts
// with a blank line, then the title; the heading runs to the first blank line after the title.
struct StageText {
  std::vector<std::string> heading, body;
};

StageText cut(const std::string& text) {
  const auto lines = split_lines(text);
  StageText t;
  std::size_t i = 0;
  while (i < lines.size() && lines[i].empty()) ++i;  // the blank line before the title
  for (; i < lines.size() && !lines[i].empty(); ++i) t.heading.push_back(lines[i]);
  t.body.assign(lines.begin() + static_cast<std::ptrdiff_t>(i), lines.end());
  return t;
}

// The first of `forms` (longest first) that fits in `width` columns; else the last one cut to
// the width. A footer that wrapped would scroll the screen by a line and push the heading off a
// short terminal. The shortest forms are ASCII, so cutting by bytes is cutting by columns.
std::string fit_footer(const std::vector<std::string>& forms, std::size_t width) {
  for (const std::string& f : forms)
    if (display_width(f) <= width) return f;
  return forms.back().substr(0, std::max<std::size_t>(width, 1));
}

std::string reverse_video(const std::string& footer, bool on) { return on ? "\x1b[7m" + footer + "\x1b[0m" : footer; }

}  // namespace

std::string step_footer(std::size_t stage, std::size_t total, std::size_t width) {
  return step_footer(stage, total, width, stage == total);
}

std::string step_footer(std::size_t stage, std::size_t total, std::size_t width, bool last) {
  const std::string where = std::to_string(stage) + "/" + std::to_string(total);
  const std::string full = "stage " + where + " \u00b7 n " + (last ? "end" : "next") +
                           " \u00b7 p back \u00b7 q quit";
  return fit_footer({full, where + " \u00b7 n p q", where + " n p q", where}, width);
}

std::string page_footer(std::size_t stage, std::size_t total, std::size_t first, std::size_t last,
                        std::size_t lines, std::size_t width, bool last_page, bool last_stage) {
  const std::string where = std::to_string(stage) + "/" + std::to_string(total);
  const std::string range = std::to_string(first) + "-" + std::to_string(last);
  const std::string next = !last_page ? "more" : last_stage ? "end" : "next";
  const std::string full = "stage " + where + " \u00b7 lines " + range + " of " + std::to_string(lines) +
                           " \u00b7 n " + next + " \u00b7 p back \u00b7 q quit";
  return fit_footer({full, where + " " + range + "/" + std::to_string(lines) + " \u00b7 n p q",
                     where + " " + range + " n p q", where + " " + range, where},
                    width);
}

std::vector<std::size_t> page_starts(const std::vector<std::size_t>& rows, std::size_t budget) {
  std::vector<std::size_t> starts{0};
  std::size_t used = 0;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    if (used > 0 && used + rows[i] > budget) {
      starts.push_back(i);
      used = 0;
    }
    used += rows[i];
  }
  return starts;
}

StepEnd step_through(const Report& report, Sink& sink, std::ostream& out, KeySource& keys,
                     const StepOptions& options) {
  const auto& stages = report.stages();
  const std::size_t total = report.total_stages(), shown = stages.size();
  sink.begin(report.header, total);
  std::size_t i = 0, page = 0;
  std::size_t rendered_for = shown;  // which stage `text` holds (none yet)
  StageText text;
  while (i < shown) {
    const bool last_stage = i + 1 == shown;
    std::size_t columns = options.width, rows = 0;
    if (options.window && options.render) {
      const auto size = options.window();
      if (size.first > 0) columns = size.first;
      rows = size.second;
    }
    std::string footer;
    std::size_t pages = 1;
    bool paged = false;
    if (rows > 0) {
      if (rendered_for != i) {
        text = cut(options.render(stages[i], total));
        rendered_for = i;
      }
      auto rows_of = [&](const std::string& line) {
        const std::size_t w = visible_width(line);
        return w == 0 ? std::size_t{1} : (w + columns - 1) / columns;
      };
      std::vector<std::size_t> heading_rows, body_rows;
      std::size_t heading_height = 0, body_height = 0;
      for (const auto& l : text.heading) heading_height += rows_of(l);
      for (const auto& l : text.body) body_rows.push_back(rows_of(l)), body_height += body_rows.back();
      // The whole stage with its blank line before it and the footer fits: no paging.
      paged = 1 + heading_height + body_height + 1 > rows;
      if (paged) {
        // The heading stays on every page while at least 3 rows are left for the body; in a
        // window too small for that, the heading goes first and the body is paged alone.
        const bool pin = rows >= heading_height + 1 + 3;
        std::vector<std::string> body = text.body;
        std::vector<std::string> heading = pin ? text.heading : std::vector<std::string>{};
        if (!pin) {
          body.insert(body.begin(), text.heading.begin(), text.heading.end());
          body_rows.clear();
          for (const auto& l : body) body_rows.push_back(rows_of(l));
        }
        const std::size_t budget = rows - 1 - (pin ? heading_height : 0);
        const auto starts = page_starts(body_rows, budget);
        pages = starts.size();
        if (page >= pages) page = pages - 1;
        const std::size_t from = starts[page], to = page + 1 < pages ? starts[page + 1] : body.size();
        std::size_t used = 0;
        std::string screen;
        for (const auto& l : heading) screen += l + "\n";
        for (std::size_t k = from; k < to; ++k) screen += body[k] + "\n", used += body_rows[k];
        // A short last page is filled with blank lines, so the heading stays on the top row.
        for (; used < budget; ++used) screen += "\n";
        out << screen;
        footer = page_footer(stages[i].index, total, from + 1, to, body.size(), columns, page + 1 == pages, last_stage);
      } else {
        out << "\n";
        for (const auto& l : text.heading) out << l << "\n";
        for (const auto& l : text.body) out << l << "\n";
      }
    } else {
      sink.stage(stages[i], total);
    }
    if (!paged) footer = step_footer(stages[i].index, total, columns, last_stage);
    out << reverse_video(footer, options.highlight) << std::flush;
    Key key = keys.read_key();
    while (key == Key::other) key = keys.read_key();
    // Blanks over the footer, and the cursor back to the start of its line.
    out << "\r" << std::string(display_width(footer), ' ') << "\r" << std::flush;
    if (key == Key::quit) {
      sink.end();
      return StepEnd::quit;
    }
    if (key == Key::redraw) continue;  // the same stage and page again
    if (key == Key::back) {
      if (paged && page > 0) {
        --page;
      } else {
        i = i == 0 ? 0 : i - 1;  // at stage 1, "back" shows stage 1 again
        page = 0;
      }
    } else if (paged && page + 1 < pages) {
      ++page;
    } else {
      ++i;
      page = 0;
    }
  }
  sink.end();
  return StepEnd::finished;
}

}  // namespace attn::report
