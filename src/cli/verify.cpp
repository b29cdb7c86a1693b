#include "cli/verify.hpp"

#include <functional>
#include <map>
#include <sstream>
#include <vector>

#include "lesson_kit/presets.hpp"
#include "lesson_kit/registry.hpp"

namespace attn::cli {
namespace {

// One run of one lesson: the arguments a learner would type, and the same as options.
struct Run {
  std::string args;  // " --seed 3 --seq-len 1"
  std::function<void(LessonOptions&)> set;
};

std::vector<std::string> words(const std::string& text) {
  std::istringstream in(text);
  std::vector<std::string> out;
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

// The sizes each kind of lesson is swept over, chosen to reach the edges: one token, one
// dimension, one head, batches, grouped heads, sentences of one word and long ones.
std::vector<Run> size_runs(const LessonEntry& lesson) {
  const unsigned bits = lesson.options;
  std::vector<Run> runs;
  // A lesson whose --rope-theta cannot be 0 always turns q and k (block): its heads are whole
  // pairs of dimensions, so its edges are one head of one pair, and the smallest base.
  const LessonOption* theta = lesson.find_extra("--rope-theta");
  if ((bits & kHeads) && theta && theta->lo > 0) {
    runs.push_back({" --seq-len 1 --d-in 2 --heads 1", [](LessonOptions& o) { o.seq_len = 1, o.d_in = 2, o.heads = 1; }});
    runs.push_back({" --d-in 16 --heads 4 --kv-heads 2 --seq-len 6",
                    [](LessonOptions& o) { o.d_in = 16, o.heads = 4, o.kv_heads = 2, o.seq_len = 6; }});
    runs.push_back({" --d-in 32 --heads 8 --kv-heads 1 --seq-len 12",
                    [](LessonOptions& o) { o.d_in = 32, o.heads = 8, o.kv_heads = 1, o.seq_len = 12; }});
    runs.push_back({" --heads 4 --kv-heads 4 --seq-len 64",
                    [](LessonOptions& o) { o.heads = 4, o.kv_heads = 4, o.seq_len = 64; }});
    runs.push_back({" --rope-theta 2", [](LessonOptions& o) { o.own["--rope-theta"] = 2; }});
  } else if (bits & kHeads) {
    runs.push_back({" --seq-len 1 --d-in 1 --d-out 1 --heads 1", [](LessonOptions& o) {
                      o.seq_len = 1, o.d_in = 1, o.d_out = 1, o.heads = 1;
                    }});
    runs.push_back({" --heads 4 --d-out 8 --batch 3 --seq-len 6",
                    [](LessonOptions& o) { o.heads = 4, o.d_out = 8, o.batch = 3, o.seq_len = 6; }});
    runs.push_back({" --heads 4 --d-out 8 --kv-heads 2 --no-causal --qkv-bias", [](LessonOptions& o) {
                      o.heads = 4, o.d_out = 8, o.kv_heads = 2, o.causal = false, o.qkv_bias = true;
                    }});
    runs.push_back({" --heads 8 --d-in 16 --d-out 64 --seq-len 12",
                    [](LessonOptions& o) { o.heads = 8, o.d_in = 16, o.d_out = 64, o.seq_len = 12; }});
  } else if (bits & kDOut) {
    runs.push_back({" --seq-len 1 --d-in 1 --d-out 1", [](LessonOptions& o) { o.seq_len = 1, o.d_in = 1, o.d_out = 1; }});
    runs.push_back({" --batch 3", [](LessonOptions& o) { o.batch = 3; }});
    runs.push_back({" --seq-len 12 --d-in 16 --d-out 8", [](LessonOptions& o) { o.seq_len = 12, o.d_in = 16, o.d_out = 8; }});
    runs.push_back({" --tokens \"the cat sat on the mat\" --d-in 4", [](LessonOptions& o) {
                      o.tokens = words("the cat sat on the mat");
                      o.d_in = 4;
                    }});
  } else if (bits & kHidden) {
    runs.push_back({" --src \"a\" --tgt \"b\"", [](LessonOptions& o) { o.src = words("a"), o.tgt = words("b"); }});
    runs.push_back({" --src \"a b c\" --hidden 4", [](LessonOptions& o) { o.src = words("a b c"), o.hidden = 4; }});
    runs.push_back({" --hidden 32 --d-in 16", [](LessonOptions& o) { o.hidden = 32, o.d_in = 16; }});
    runs.push_back({" --src \"w1 w2 w3 w4 w5 w6 w7 w8 w9 w10 w11 w12 w13 w14 w15 w16\" --tgt \"x y z\"",
                    [](LessonOptions& o) {
                      o.src = words("w1 w2 w3 w4 w5 w6 w7 w8 w9 w10 w11 w12 w13 w14 w15 w16");
                      o.tgt = words("x y z");
                    }});
  } else if (bits & kSeqLen) {
    runs.push_back({" --seq-len 1", [](LessonOptions& o) { o.seq_len = 1; }});
    runs.push_back({" --seq-len 64", [](LessonOptions& o) { o.seq_len = 64; }});
  }
  // Heads that are not d_in wide together: a head width other than d_in / h (gqa, kv-cache: --d-k,
  // whose 0 means d_in / h; rope's --d-k is its only width), and an out_proj back to d_in (heads).
  const LessonOption* d_k = lesson.find_extra("--d-k");
  if (d_k && d_k->lo == 0) {
    runs.push_back({" --d-in 12 --heads 4 --d-k 6", [](LessonOptions& o) { o.d_in = 12, o.heads = 4, o.own["--d-k"] = 6; }});
    runs.push_back({" --d-in 12 --heads 5 --d-k 3 --seq-len 6",
                    [](LessonOptions& o) { o.d_in = 12, o.heads = 5, o.own["--d-k"] = 3, o.seq_len = 6; }});
  }
  if (lesson.find_extra("--out-proj-width"))
    runs.push_back({" --d-in 12 --d-out 24 --heads 4 --out-proj-width 12", [](LessonOptions& o) {
                      o.d_in = 12, o.d_out = 24, o.heads = 4, o.own["--out-proj-width"] = 12;
                    }});
  return runs;
}

struct Tally {
  std::size_t runs = 0, passed = 0, failed = 0, yes = 0, no = 0, errors = 0;
};

}  // namespace

int verify(const VerifyOptions& options, std::ostream& out) {
  std::vector<const LessonEntry*> chosen;
  for (const auto& l : lessons())
    if (options.lesson.empty() || options.lesson == l.name) chosen.push_back(&l);

  out << "attn verify: every check of " << (options.lesson.empty() ? "every lesson" : "lesson " + options.lesson)
      << ": defaults, presets, "
      << (options.seeds ? "seeds 0.." + std::to_string(options.seeds - 1) : std::string("no seed sweep (--seeds 0)"))
      << ", and a sweep of sizes\n\n";
  std::vector<std::string> failures;
  std::vector<std::pair<std::string, Tally>> table;
  Tally total;

  for (const LessonEntry* lesson : chosen) {
    // Every run: defaults, each seed, each size (with its default seed), each preset.
    std::vector<Run> runs = {{"", [](LessonOptions&) {}}};
    if (lesson->options & kSeed)
      for (std::uint64_t seed = 0; seed < options.seeds; ++seed)
        runs.push_back({" --seed " + std::to_string(seed), [seed](LessonOptions& o) { o.seed = seed; }});
    for (auto& r : size_runs(*lesson)) runs.push_back(std::move(r));
    for (const auto& p : presets())
      for (const char* l : p.lessons)
        if (std::string(l) == lesson->name) {
          const std::string name = p.name, lesson_name = lesson->name;
          runs.push_back({" --preset " + name,
                          [name, lesson_name](LessonOptions& o) { apply_preset(name, lesson_name, false, o); }});
        }

    Tally t;
    for (const Run& run : runs) {
      const std::string command = std::string("attn lesson ") + lesson->name + run.args;
      ++t.runs;
      report::Report report;
      try {
        LessonOptions opts;
        opts.shapes_only = false;
        run.set(opts);
        lesson->run(opts, report);
      } catch (const std::exception& e) {
        ++t.errors;
        failures.push_back("ERROR   " + command + ": " + e.what());
        continue;
      }
      for (const auto& s : report.stages())
        for (const auto& item : s.items) {
          const auto* c = std::get_if<report::CheckItem>(&item);
          if (!c) continue;
          // An unanswered question (its measure is NaN) counts as a failed check.
          if (report::fails_run(*c)) t.failed += 1;
          else if (c->question) (c->passed ? t.yes : t.no) += 1;
          else t.passed += 1;
          const std::string where = command + ": [" + std::to_string(s.index) + "] " + report::check_text(*c);
          if (report::fails_run(*c)) failures.push_back("FAILED  " + where);
          else if (options.list) out << "  " << where << "\n";
        }
    }
    table.push_back({lesson->name, t});
    total.runs += t.runs, total.passed += t.passed, total.failed += t.failed;
    total.yes += t.yes, total.no += t.no, total.errors += t.errors;
  }

  if (options.list) out << "\n";
  out << "  lesson            runs   checks  passed  failed   questions yes/no\n";
  for (const auto& [name, t] : table) {
    char line[160];
    std::snprintf(line, sizeof line, "  %-16s %5zu %8zu %7zu %7zu   %9zu/%zu%s\n", name.c_str(), t.runs,
                  t.passed + t.failed, t.passed, t.failed, t.yes, t.no,
                  t.errors ? ("   " + std::to_string(t.errors) + " runs refused").c_str() : "");
    out << line;
  }
  for (const auto& f : failures) out << "\n" << f;
  if (!failures.empty()) out << "\n";
  const bool ok = total.failed == 0 && total.errors == 0;
  out << "\n" << (ok ? "all " : "") << total.passed << " of " << total.passed + total.failed << " checks passed in "
      << total.runs << " runs";
  if (total.failed) out << "; " << total.failed << " FAILED";
  if (total.errors) out << "; " << total.errors << " runs ended in an error";
  out << " (questions answered: " << total.yes << " yes, " << total.no << " no)\n";
  // The closing line test runners read: every check counts, each one passed or failed.
  out << total.passed << " passed, " << total.failed + total.errors << " failed\n";
  return ok ? 0 : 3;
}

}  // namespace attn::cli
