// The articles' names for attn's size options, and what a learner who types one is told.
//
// Phillips writes d_model, n_heads and d_key; Raschka d_in, d_out, num_heads and head_dim; the
// Evolution article d_model and d_k. `attn lesson` accepts those names where they mean the same
// thing as one of its own options in the lesson at hand (--d-model is --d-in in causal, but both
// --d-in and --d-out in heads, where the article's projections are d_model x d_model), and refuses
// them, saying why, where the lesson has no such size. docs/names.md is the table, article by
// article and lesson by lesson.
#pragma once

#include <string>
#include <vector>

#include "lesson_kit/registry.hpp"

namespace attn {

struct ArticleName {
  const char* flag;  // "--d-model"
  const char* help;  // one line for `attn lesson --help`: whose name it is, and what it sets
};

// --d-model, --num-heads, --n-heads, --d-k, --d-key, --head-dim, in that order. A lesson may
// declare one of them as its own option (rope's --d-k): there it is simply that option.
const std::vector<ArticleName>& article_names();
bool is_article_name(const std::string& flag);

// The options of `lesson` that the article name `flag` stands for: shared flags ("--d-in",
// {"--d-in", "--d-out"}, "--heads") or the lesson's own head-width option ("--d-k" in rope for
// --head-dim). Throws UsageError, one line naming `flag`, when it means nothing in this lesson:
// a head count in a one-head lesson, d_model in a lesson without an embedding width, a head width
// the lesson derives (heads: d_out / heads). `text` is the value typed, quoted in the message.
std::vector<std::string> article_name_targets(const LessonEntry& lesson, const std::string& flag,
                                              const std::string& text);

// The line for an option no one declares, as the learner typed it ("--seeed", "--dropout=0.1"):
// the articles' options attn deliberately lacks (--dropout: attn runs attention as at inference)
// get the reason and what to do; any other name the nearest of `known` (the options this command
// or lesson takes) within 3 edits, or word that the nearest is one of `elsewhere` (other lessons'
// options) and not taken here either, else `help_hint`.
std::string unknown_option_message(const std::string& typed, const std::vector<std::string>& known,
                                   const std::vector<std::string>& elsewhere, const std::string& help_hint);

}  // namespace attn
