// --stage SEL: which of a lesson's stages the sinks show (docs/command-line.md).
//
// SEL is a comma-separated list of picks, each a stage number as the headings print it ("5"), a
// range ("5-7"), or words matched case-insensitively inside the stage titles ("softmax",
// "causal mask"). The lesson still runs whole: the selection only decides which of its finished
// stages reach the text, JSON, --dump, --svg and --step sinks, so the numbers are those of a full
// run. A lesson's stage count is known only after it ran, so the syntax is checked first
// (parse_stage_selection) and the numbers and words against the real stages afterwards
// (resolve_stage_selection), before any sink writes a byte.
#pragma once

#include <deque>
#include <optional>
#include <string>
#include <vector>

#include "report/stage.hpp"

namespace attn::report {

struct StagePick {
  std::size_t first = 0, last = 0;  // a number (first == last) or a range, 1-based; 0 for words
  std::string words;                // lower-case words matched inside titles, or "" for a number
  std::string typed;                // the pick as typed (spaces squeezed), for the messages
};

struct StageSelection {
  std::string text;  // as typed, for the header line and the messages
  std::vector<StagePick> picks;
};

// Why a selection cannot be used: `what` is the sentence, `expected` what would have worked, and
// `got` the offending part as typed. The CLI turns it into one UsageError line.
struct StageSelectionProblem {
  std::string what, expected, got;
};

// The picks in `text`, or nullopt with `problem` set (an empty entry, a stage 0, a range that
// runs backwards, a stray dash such as "5-").
std::optional<StageSelection> parse_stage_selection(const std::string& text, StageSelectionProblem& problem);

// The stage numbers `selection` picks among `stages` (1-based, ascending, each once), or {} with
// `problem` set: a number past the last stage, or words found in no title. `lesson` names the
// lesson in the message.
std::vector<std::size_t> resolve_stage_selection(const StageSelection& selection, const std::deque<Stage>& stages,
                                                 const std::string& lesson, StageSelectionProblem& problem);

// Stage numbers (ascending) written compactly: {2, 5, 6, 7} -> "2, 5-7".
std::string stage_ranges(const std::vector<std::size_t>& stages);

}  // namespace attn::report
