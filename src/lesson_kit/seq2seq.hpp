// What the encoder-decoder lessons (bottleneck, bahdanau, luong) share: a source sentence, its
// translation, their embeddings, the sizes, and the sentence every one of them says on screen.
//
// Legend: S source words, T_tgt target words, d_in embedding width, d_h hidden width.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "lesson_kit/inputs.hpp"
#include "lesson_kit/options.hpp"
#include "report/stage.hpp"

namespace attn {

struct Seq2SeqSetup {
  std::uint64_t seed;
  std::size_t d_in;  // embedding width (--d-in, default 4)
  std::size_t d_h;   // hidden width (--hidden, default 8)
  TokenInput src;    // S words and their (S, d_in) embeddings
  TokenInput tgt;    // T_tgt words and their (T_tgt, d_in) embeddings
  TokenInput start;  // the decoder's first input, "<s>": (1, d_in)
  std::string src_from;  // "--input x.npy" when the source embeddings came from a file, else ""
  std::vector<std::string> setting() const;  // the header's "seed 7", "source words 6", ...
};

// Defaults: "the cat sat on the mat" -> "le chat s'est assis sur le tapis", d_in 4, d_h 8.
Seq2SeqSetup seq2seq_setup(const LessonOptions& opts, std::uint64_t default_seed);

// --input for these lessons: the source embeddings (S, d_in), at most kMaxSentence rows and
// kMaxHidden columns, agreeing with --d-in and (when `complete`) --src. The lessons call it on the
// loaded file; the command line calls it on the shape a file declares before reading its data
// (with `complete` false on a text file's rows so far). Throws UsageError.
void check_source_shape(const LessonOptions& opts, const Shape& shape, const std::string& source, bool complete = true);

// Said in every RNN lesson's first stage: the weights are random, so the mechanism, shapes and
// costs are real but the translation is not.
extern const char* const kUntrainedNote;

}  // namespace attn
