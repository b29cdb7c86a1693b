// Where a finished lesson goes: the terminal text, and whatever other sinks the options ask for.
// Kept apart from main.cpp so that adding a sink does not touch (or recompile) the CLI11 wiring.
#pragma once

#include <string>

#include "report/stage.hpp"

namespace attn::cli {

struct OutputOptions {
  int precision = 4;
  std::string sci_mode = "auto";  // --sci-mode auto|on|off
  bool shapes_only = false;
  bool full = false;           // --full: no stage folded, no tensor left out of the text
  bool dump = false;           // --dump DIR was given
  std::string dump_dir;        // --dump DIR: .npy files and manifest.json
  bool npz = false;            // --npz PATH was given
  std::string npz_path;        // --npz PATH: the same files in one zip archive numpy.load reads
  std::string format = "text"; // --format text|json
  std::string command;         // the command line, recorded in manifests
  // Pictures (cli/pictures.hpp, docs/pictures.md).
  bool step = false;           // --step: one stage at a time, paced by keys
  std::string color = "auto";  // --color auto|always|never
  bool svg = false;            // --svg DIR was given
  std::string svg_dir;         // one SVG per attention matrix goes there
  bool svg_panels = false;     // --svg-panels LIST was given
  std::string svg_panel_list;  // which panels to draw: "b0", "h1,h2", "b0-h3"
  bool html = false;           // --html FILE was given
  std::string html_path;       // --html FILE: one self-contained page (report/html_sink.hpp)
  std::string heatmap_scale = "auto";  // --heatmap-scale auto|global|row
  std::string head;            // --head mean|N ("": every head)
  bool full_json = false;      // --full-json: every value in --format json, however many
  bool stage = false;          // --stage SEL was given
  std::string stage_list;      // which stages every output shows: "5-7", "2,5-7", "softmax"
};

// Refuses, before the lesson runs, output options that cannot work (an unknown --format, a
// --dump target that exists and is not a dump attn wrote, an --npz PATH that is a directory).
void check_output(const OutputOptions& options);

// --stage, after the lesson ran and before anything is written: keeps only the selected stages
// in `report` (their numbers and values untouched), or throws UsageError when a number is past
// the lesson's last stage or words are in no title. Nothing to do without --stage.
void select_stages(report::Report& report, const OutputOptions& options);

// Renders `report` to every requested sink. Everything that can be refused (a bad path, a
// missing terminal) is checked before the first byte is written.
void render(const report::Report& report, const OutputOptions& options);

// After render: each failed check named on stderr, and the exit status that says so (3), or 0.
constexpr int kExitCheckFailed = 3;
int failed_checks_status(const report::Report& report);

}  // namespace attn::cli
