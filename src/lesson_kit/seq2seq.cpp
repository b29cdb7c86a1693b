// The encoder-decoder lessons' shared setup: sentences, embeddings, sizes (seq2seq.hpp).
#include "lesson_kit/numbers.hpp"
#include "lesson_kit/seq2seq.hpp"

namespace attn {

const char* const kUntrainedNote =
    "The weights are random and untrained: the shapes, arithmetic and costs are the real thing's, "
    "but no translation is learned (read the numbers as mechanism, not meaning). The decoder is fed "
    "the reference translation word by word (teacher forcing), as in training.";

void check_source_shape(const LessonOptions& opts, const Shape& shape, const std::string& source, bool complete) {
  if (shape.size() != 2 || shape[0] == 0 || shape[1] == 0)
    throw UsageError("--input must hold the source embeddings (S, d_in)", source, "(S, d_in)", shape_str(shape));
  const std::size_t S = shape[0], d_in = shape[1];
  if (S > kMaxSentence)
    throw UsageError("--input has too many rows to print", source, "at most " + std::to_string(kMaxSentence) + " words",
                     std::to_string(S));
  if (d_in > kMaxHidden)
    throw UsageError("--d-in is too large to print in this lesson", "--d-in", "1.." + std::to_string(kMaxHidden),
                     std::to_string(d_in) + " (from " + source + ")");
  if (opts.d_in && *opts.d_in != d_in)
    throw UsageError("--d-in disagrees with --input", "--d-in", std::to_string(d_in) + " (from " + source + ")",
                     std::to_string(*opts.d_in));
  if (complete && opts.src && opts.src->size() != S)
    throw UsageError("--src does not label every row of --input", "--src",
                     one_word_each(S, "row"),
                     words_given(opts.src->size()));
}

namespace {

// --input as the source sentence's embeddings: (S, d_in), labelled by --src when it has S words.
TokenInput source_from_file(const LessonOptions& opts) {
  const ExternalTensor& t = *opts.input;
  check_source_shape(opts, t.shape, t.source);
  const std::size_t S = t.shape[0], d_in = t.shape[1];
  TokenInput in;
  for (std::size_t j = 0; j < S; ++j) in.tokens.push_back(opts.src ? (*opts.src)[j] : "x" + std::to_string(j + 1));
  in.x = xt::empty<float>({S, d_in});  // (S, d_in)
  std::copy(t.values.begin(), t.values.end(), in.x.begin());
  in.origin = "The source embeddings come from " + t.source + ", shape " + shape_str(t.shape) + ".";
  return in;
}

}  // namespace

Seq2SeqSetup seq2seq_setup(const LessonOptions& opts, std::uint64_t default_seed) {
  const std::size_t d_in = opts.input && opts.input->shape.size() == 2 ? opts.input->shape[1]
                                                                         : size_option(opts.d_in, 4, "--d-in");
  const std::size_t d_h = opts.hidden.value_or(8);
  if (d_h == 0) throw UsageError("--hidden must be positive", "--hidden", "1.." + std::to_string(kMaxHidden), "0");
  if (d_h > kMaxHidden)
    throw UsageError("--hidden is too large to print", "--hidden", "1.." + std::to_string(kMaxHidden), std::to_string(d_h));
  if (d_in > kMaxHidden)
    throw UsageError("--d-in is too large to print in this lesson", "--d-in", "1.." + std::to_string(kMaxHidden),
                     std::to_string(d_in));
  const std::vector<std::string> src = opts.src.value_or(std::vector<std::string>{"the", "cat", "sat", "on", "the", "mat"});
  const std::vector<std::string> tgt =
      opts.tgt.value_or(std::vector<std::string>{"le", "chat", "s'est", "assis", "sur", "le", "tapis"});
  for (const auto* words : {&src, &tgt}) {
    const char* flag = words == &src ? "--src" : "--tgt";
    if (words->empty()) throw UsageError(std::string(flag) + " needs at least one word", flag, "words separated by spaces", "''");
    if (words->size() > kMaxSentence)
      throw UsageError(std::string(flag) + " is too long to print", flag, "at most " + std::to_string(kMaxSentence) + " words",
                       std::to_string(words->size()));
  }
  return {opts.seed.value_or(default_seed), d_in, d_h,
          opts.input ? source_from_file(opts) : embed_tokens(src, d_in, false), embed_tokens(tgt, d_in, false),
          embed_tokens({"<s>"}, d_in, false), opts.input ? opts.input->source : std::string()};
}

std::vector<std::string> Seq2SeqSetup::setting() const {
  std::vector<std::string> s = {"seed " + std::to_string(seed), "source words " + std::to_string(src.tokens.size()),
          "target words " + std::to_string(tgt.tokens.size()), "d_in " + std::to_string(d_in),
          "d_h " + std::to_string(d_h)};
  if (!src_from.empty()) s.push_back("source embeddings from " + src_from.substr(src_from.find(' ') + 1));
  return s;
}

}  // namespace attn
