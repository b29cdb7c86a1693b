#include "cli/render.hpp"

#include <iostream>

#include "report/text_sink.hpp"

namespace attn::cli {

void render(const report::Report& report, const OutputOptions& options) {
  report::TextOptions text;
  text.print.precision = options.precision;
  text.shapes_only = options.shapes_only;
  report::TextSink sink(std::cout, text);
  report::deliver(report, sink);
}

}  // namespace attn::cli
