#include "cli/render.hpp"

#include <iostream>

#include "cli/pictures.hpp"
#include "lesson_kit/options.hpp"
#include "report/dump_sink.hpp"
#include "report/manifest.hpp"
#include "report/text_sink.hpp"

namespace attn::cli {

void check_output(const OutputOptions& options) {
  if (options.format != "text" && options.format != "json")
    throw UsageError("unknown --format", "--format", "text or json", "'" + options.format + "'");
  if (options.dump && options.dump_dir.empty())
    throw UsageError("--dump needs a directory", "--dump", "a new or empty directory", "an empty path");
  if (options.dump) {
    try {
      report::check_dump_target(options.dump_dir);
    } catch (const std::exception& e) {
      throw UsageError(std::string("cannot dump to --dump ") + options.dump_dir + ": " + e.what());
    }
  }
  check_pictures(options);
}

void render(const report::Report& report, const OutputOptions& options) {
  const std::vector<std::string> pictures = write_pictures(report, options);
  if (options.dump) {
    try {
      report::write_dump(report, options.command, options.dump_dir);
    } catch (const std::exception& e) {
      throw UsageError(std::string("cannot dump to --dump ") + options.dump_dir + ": " + e.what());
    }
  }
  if (options.format == "json") {
    std::cout << report::manifest_json(report.header, options.command, report.stages(), true);
    return;
  }
  report::TextOptions text;
  text.print.precision = options.precision;
  text.shapes_only = options.shapes_only;
  show_text(report, options, text, pictures);
}

}  // namespace attn::cli
