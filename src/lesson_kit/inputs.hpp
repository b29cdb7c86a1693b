// Where a lesson's input x comes from, and how batched tensors are shown.
//
// Legend: B batch, T tokens, d_in embedding width.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/tensor.hpp"
#include "lesson_kit/options.hpp"
#include "report/stage.hpp"

namespace attn {

// "Your journey starts with one step", Raschka ch. 3.
const std::vector<std::string>& book_tokens();
// The book's 3-d embeddings of those six tokens.
Mat book_embeddings();  // (6, 3)

struct TokenInput {
  std::vector<std::string> tokens;  // row labels, length T
  Mat x;                            // (T, d_in)
  std::string origin;               // how x was made, in words and PyTorch
};

// The tokens (--tokens, or the book's six, or the first --seq-len of a longer default) and
// their embeddings: the book's vector where d_in is 3 and the word is one of the book's, else
// the word's own seeded vector (see core/embedding.hpp). Words compare case-insensitively.
// With `values` false x is allocated but not filled (never touched, so it costs no memory): a
// run that computes no values (check_sizes) still gets the tokens, their seeds and x's shape.
TokenInput token_input(const LessonOptions& opts, std::size_t d_in, bool values = true);

// The embedding rule alone, for any list of words. With book_vectors false every word gets its
// own seeded vector (the RNN lessons' sentences are not the book's).
TokenInput embed_tokens(std::vector<std::string> tokens, std::size_t d_in, bool book_vectors, bool values = true);

// Resolve --seq-len against --tokens; T when they agree.
std::size_t resolve_seq_len(const LessonOptions& opts, std::size_t default_t);

// (T, d_in) -> (B, T, d_in): B copies, as the book's torch.stack((inputs, inputs)).
Ten3 stack_batch(const Mat& x, std::size_t B);

// A positive size option or its default, refused past kMaxSize.
std::size_t size_option(const std::optional<std::size_t>& v, std::size_t fallback, const char* flag);

// Lessons compute with a batch axis always; without --batch they show (T, ...) like the book.
class BatchView {
 public:
  explicit BatchView(bool batched) : batched_(batched) {}
  bool batched() const { return batched_; }
  report::Stage& in(report::Stage& s, std::string name, const Ten3& t) const;
  report::Stage& show(report::Stage& s, std::string name, const Ten3& t, report::Labels rows = {},
                      report::Labels cols = {}) const;
  // The same without copying the values: the stage shares the lesson's tensor.
  report::Stage& show(report::Stage& s, std::string name, const std::shared_ptr<const Ten3>& t,
                      report::Labels rows = {}, report::Labels cols = {}) const;
  // Held tensors (report/held.hpp): shared when computed, their shapes alone when not.
  report::Stage& in(report::Stage& s, std::string name, const report::Held<Ten3>& t) const;
  report::Stage& show(report::Stage& s, std::string name, const report::Held<Ten3>& t, report::Labels rows = {},
                      report::Labels cols = {}) const;
  report::Stage& show(report::Stage& s, std::string name, const report::Held<Mat>& t, report::Labels cols = {}) const;
  // (B, n) or (n,): a per-row quantity such as row sums; labels name the n entries.
  report::Stage& show(report::Stage& s, std::string name, const Mat& t, report::Labels cols = {}) const;
  // What the learner's shape comment says: "(B, T, d)" or "(T, d)".
  std::string axes(const std::string& inner) const;

 private:
  bool batched_;
};

}  // namespace attn
