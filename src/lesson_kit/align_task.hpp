// The synthetic translation task of `attn lesson align`: English-like sentences into French-like
// ones, word by word, except that an adjective before its noun moves after it, as in French
// ("the black cat" -> "le chat noir"). Each target word comes from exactly one source word, so
// the right alignment is known and a trained attention can be measured against it.
//
// Grammar: det [adj] noun verb det [adj] noun, so sentences have 5, 6 or 7 words. Each sentence
// is drawn from u = torch.rand(9) (the generator's next nine floats): u[0] det, u[1] < 0.5 adds an
// adjective, u[2] adj, u[3] noun, u[4] verb, u[5..8] the second noun phrase likewise; a choice
// among n words is word floor(u * n), computed in double (exact for float32 u).
//
// The data: first the held-out sentences (distinct), then the training sentences, skipping any
// that is held out, so no held-out sentence is ever trained on. Everything comes from the seed.
//
// Legend: S source words, T = S target words.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/generator.hpp"

namespace attn {

struct AlignPair {
  std::vector<std::size_t> src;     // (S,) source word ids
  std::vector<std::size_t> tgt;     // (T,) target word ids, T = S
  std::vector<std::size_t> origin;  // (T,) the source position each target word translates
};

// The vocabularies: source words and their translations, position for position.
const std::vector<std::string>& align_source_words();  // "the", "a", "red", ..., "eats"
const std::vector<std::string>& align_target_words();  // "le", "un", "rouge", ..., "mange"
std::size_t align_start_id();                           // the decoder's "<s>": one past the target words
std::string align_kind(std::size_t source_id);          // "det", "adj", "noun" or "verb"

// The rule on any sequence of source ids: translate every word, and put each adjective that
// stands right before a noun after it. Also fills `origin`.
AlignPair align_translate(const std::vector<std::size_t>& src);

// One sentence of the grammar from the next nine draws of `gen`.
AlignPair align_draw_sentence(TorchGenerator& gen);

struct AlignData {
  std::vector<AlignPair> held_out;
  std::vector<AlignPair> train;
};
// n_held_out distinct sentences, then n_train sentences that are not held out (repeats among the
// training sentences are kept, as a sampler would give them).
AlignData align_make_data(TorchGenerator& gen, std::size_t n_held_out, std::size_t n_train);

// Words <-> ids. align_source_ids returns nullopt and fills `unknown` (each unknown word once, in
// order) when a word is not in the source vocabulary; words are compared in lower case.
std::optional<std::vector<std::size_t>> align_source_ids(const std::vector<std::string>& words,
                                                         std::vector<std::string>& unknown);
std::vector<std::string> align_source_text(const std::vector<std::size_t>& ids);
std::vector<std::string> align_target_text(const std::vector<std::size_t>& ids);  // "<s>" for the start id

// True when the ids follow the grammar above (det [adj] noun verb det [adj] noun).
bool align_grammatical(const std::vector<std::size_t>& src);

}  // namespace attn
