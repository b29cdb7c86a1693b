// The options of the outputs (--dump, --npz, --format, --svg, --html, --stage, --precision,
// --color, ...): no lesson reads them, so they live here beside the command line, in one table.
// One row per option: its flag, its --help group, value name and line, and the parser that turns
// its text into its typed field of OutputOptions, once (a UsageError in the one-line form for a
// value that cannot be). What depends on more than the option's own text (two outputs writing to
// one place, a directory attn cannot write, --step without a terminal) is checked afterwards by
// check_output (render.hpp) and by each sink. `attn lesson` and `attn model DIR --text` register
// them from this table; `attn lesson NAME --help` and completion list them after the lesson's.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "cli/terminal.hpp"
#include "lesson_kit/registry.hpp"
#include "lesson_kit/shared_options.hpp"
#include "report/panels.hpp"
#include "report/stage_select.hpp"
#include "report/svg_sink.hpp"
#include "report/tensor_format.hpp"

namespace attn::cli {

enum class OutputFormat { text, json };
const char* format_name(OutputFormat format);  // "text", "json"

// Where a finished lesson goes, and how it looks: every output option, typed.
struct OutputOptions {
  report::PrintOptions print;       // --precision (default 4), --sci-mode (auto: none)
  bool shapes_only = false;         // --shapes-only, or a preset that shows shapes only (llama)
  bool full = false;                // --full: no stage folded, no tensor left out of the text
  std::optional<std::string> dump;  // --dump DIR: .npy files and manifest.json
  std::optional<std::string> npz;   // --npz FILE: the same files in one zip archive numpy.load reads
  OutputFormat format = OutputFormat::text;  // --format text|json
  bool full_json = false;           // --full-json: every value in --format json, however many
  std::optional<std::string> svg;   // --svg DIR: one SVG per attention matrix goes there
  std::optional<report::PanelSelection> svg_panels;  // --svg-panels b0,h1,b2-h3: which panels --svg draws
  std::optional<std::string> html;  // --html FILE: one self-contained page (report/html_sink.hpp)
  std::optional<report::StageSelection> stage;  // --stage SEL: which stages every output shows
  bool step = false;                // --step: one stage at a time, paced by keys
  ColorChoice color = ColorChoice::automatic;  // --color auto|always|never
  report::PanelView view;           // --heatmap-scale and --head: how heatmaps and --svg draw weights
  std::string head;                 // --head as typed ("007"), quoted by the messages; "": not given
  std::string command;              // the command line, recorded in manifests (not an option)
};

struct OutputOption {
  const char* flag;    // "--dump"
  OptionGroup group;   // Outputs or Display
  const char* value;   // the value's name in --help ("DIR", "text|json"); nullptr for a flag
  const char* help;    // one line for --help
  void (*parse)(const std::string& text, OutputOptions& into);  // called when typed; "" for a flag
};

// In the order `attn lesson --help` lists them, group by group.
const std::vector<OutputOption>& output_options();

// The output options among `typed`, each parsed by its row in the table's order (options that are
// not outputs are skipped). `command` is the command line, for the manifests.
OutputOptions parse_output_options(const TypedOptions& typed, const std::string& command);

// Every option `attn lesson` has for every lesson, group by group: in each group the lesson's
// rows (lesson_kit/shared_options.hpp), then the outputs' (bits 0, no parser of a lesson's).
std::vector<SharedOption> lesson_command_options();

// Throws std::logic_error when a lesson of `lessons` declares an option of its own under an
// output option's name ("lesson 'x': --svg is a shared option"); add_lesson refuses the lessons'
// shared names already. main() calls it on the registry at start-up.
void check_own_options(const std::vector<LessonEntry>& lessons);

// --svg-panels "b0,h1,b2-h3": the picks, or an empty optional for anything but items of the form
// bN, hN, bN-hN separated by commas.
std::optional<report::PanelSelection> parse_panel_selection(const std::string& text);

}  // namespace attn::cli
