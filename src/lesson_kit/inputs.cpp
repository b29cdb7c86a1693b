// The book's tokens and embeddings, seeded word vectors, size options and BatchView (inputs.hpp).
#include "lesson_kit/inputs.hpp"

#include <algorithm>
#include <cctype>
#include <unordered_set>

#include <xtensor/xview.hpp>

#include "core/embedding.hpp"

namespace attn {

const std::vector<std::string>& book_tokens() {
  static const std::vector<std::string> tokens = {"Your", "journey", "starts", "with", "one", "step"};
  return tokens;
}

Mat book_embeddings() {
  return Mat{{0.43f, 0.15f, 0.89f},   // Your     (x^1)
             {0.55f, 0.87f, 0.66f},   // journey  (x^2)
             {0.57f, 0.85f, 0.64f},   // starts   (x^3)
             {0.22f, 0.58f, 0.33f},   // with     (x^4)
             {0.77f, 0.25f, 0.10f},   // one      (x^5)
             {0.05f, 0.80f, 0.55f}};  // step     (x^6)
}

namespace {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

}  // namespace

std::size_t size_option(const std::optional<std::size_t>& v, std::size_t fallback, const char* flag) {
  const std::size_t n = v.value_or(fallback);
  if (n == 0) throw UsageError(std::string(flag) + " must be positive", flag, "1.." + std::to_string(kMaxSize), "0");
  if (n > kMaxSize)
    throw UsageError(std::string(flag) + " is too large", flag, "1.." + std::to_string(kMaxSize), std::to_string(n));
  return n;
}

std::size_t resolve_seq_len(const LessonOptions& opts, std::size_t default_t) {
  if (opts.tokens) {
    const std::size_t n = opts.tokens->size();
    if (opts.seq_len && *opts.seq_len != n)
      throw UsageError("--seq-len disagrees with the number of --tokens", "--seq-len",
                       std::to_string(n) + " (one per token)", std::to_string(*opts.seq_len));
    return n;
  }
  return size_option(opts.seq_len, default_t, "--seq-len");
}

TokenInput token_input(const LessonOptions& opts, std::size_t d_in, bool values) {
  const std::size_t T = resolve_seq_len(opts, book_tokens().size());
  std::vector<std::string> tokens;
  if (opts.tokens) {
    tokens = *opts.tokens;
  } else {
    // The book's sentence, cut short or extended with numbered tokens.
    for (std::size_t t = 0; t < T; ++t)
      tokens.push_back(t < book_tokens().size() ? book_tokens()[t] : "tok" + std::to_string(t + 1));
  }
  check_size("x", {T, d_in}, opts.shapes_only, "--seq-len, --d-in");
  return embed_tokens(std::move(tokens), d_in, /*book=*/true, values);
}

TokenInput embed_tokens(std::vector<std::string> tokens, std::size_t d_in, bool book_vectors, bool values) {
  const std::size_t T = tokens.size();
  TokenInput in;
  in.tokens = std::move(tokens);
  in.x = values ? Mat(xt::zeros<float>({T, d_in})) : Mat(xt::empty<float>({T, d_in}));  // (T, d_in)
  const Mat book = book_embeddings();  // (6, 3)
  std::vector<std::pair<std::string, std::uint32_t>> seeded;  // words with their own vector, first seen first
  std::unordered_set<std::string> seen;  // the same words, to look up: a list scan made 65536 words take seconds
  std::size_t from_book = 0;
  for (std::size_t t = 0; t < T; ++t) {
    const std::string word = lower(in.tokens[t]);
    std::size_t book_row = book_tokens().size();
    for (std::size_t r = 0; r < book_tokens().size(); ++r)
      if (lower(book_tokens()[r]) == word) book_row = r;
    if (book_vectors && d_in == 3 && book_row < book_tokens().size()) {
      if (values)
        for (std::size_t k = 0; k < 3; ++k) in.x(t, k) = book(book_row, k);
      ++from_book;
    } else {
      if (values) {
        const Vec e = word_embedding(word, d_in);  // (d_in,)
        std::copy(e.begin(), e.end(), &in.x(t, 0));
      }
      if (seen.insert(word).second) seeded.emplace_back(word, word_seed(word));
    }
  }
  if (seeded.empty()) {
    in.origin = "x holds the book's 3-d embeddings of these tokens (Raschka 3.3).";
  } else {
    in.origin = !book_vectors ? "Each word gets its own vector"
                : d_in == 3 ? "Each word without a book embedding gets its own vector"
                            : "Raschka's book gives its six words 3-d embeddings (ch. 3.3), so with d_in = " +
                                  std::to_string(d_in) + " every word gets its own vector";
    in.origin += ", the same every time (a repeated word repeats it): torch.manual_seed(seed); "
                 "torch.rand(" + std::to_string(d_in) + "), seed = fnv1a32(word):";
    constexpr std::size_t kListed = 8;  // a long input lists its first words only
    for (std::size_t i = 0; i < seeded.size() && i < kListed; ++i)
      in.origin += std::string(i ? ", " : " ") + seeded[i].first + ": " + std::to_string(seeded[i].second);
    if (seeded.size() > kListed) in.origin += " and " + std::to_string(seeded.size() - kListed) + " more";
    in.origin += from_book == 0 ? "." : ". The others are Raschka's 3-d embeddings from the book.";
  }
  return in;
}

Ten3 stack_batch(const Mat& x, std::size_t B) {
  const std::size_t T = x.shape()[0], d = x.shape()[1];
  Ten3 out = xt::empty<float>({B, T, d});  // (B, T, d_in)
  for (std::size_t b = 0; b < B; ++b) std::copy(x.begin(), x.end(), out.begin() + b * T * d);
  return out;
}

// Without the batch axis, entry 0 of a row-major (B, ...) tensor is its first contiguous block:
// shapes and values are read there, never copied through an xtensor view (at T = 4096 a (T, T)
// copy is 64 MB).
report::Stage& BatchView::in(report::Stage& s, std::string name, const Ten3& t) const {
  if (batched_) return s.in(std::move(name), t);
  return s.in_shape(std::move(name), {t.shape()[1], t.shape()[2]});  // (B, a, b) -> (a, b)
}

report::Stage& BatchView::show(report::Stage& s, std::string name, const Ten3& t,
                               report::Labels rows, report::Labels cols) const {
  if (batched_) return s.show(std::move(name), t, std::move(rows), std::move(cols));
  // (B, a, b) -> (a, b), B is 1 here
  return s.show_copy(std::move(name), {t.shape()[1], t.shape()[2]}, t.data(), std::move(rows), std::move(cols));
}

report::Stage& BatchView::show(report::Stage& s, std::string name, const std::shared_ptr<const Ten3>& t,
                               report::Labels rows, report::Labels cols) const {
  if (batched_) return s.show(std::move(name), t, std::move(rows), std::move(cols));
  // (B, a, b) -> (a, b), B is 1 here: the same values, shared
  return s.show_shared(std::move(name), {t->shape()[1], t->shape()[2]}, t, t->data(), std::move(rows),
                       std::move(cols));
}

report::Stage& BatchView::in(report::Stage& s, std::string name, const report::Held<Ten3>& t) const {
  const Shape& n = t.shape();
  return batched_ ? s.in_shape(std::move(name), n) : s.in_shape(std::move(name), {n[1], n[2]});
}

report::Stage& BatchView::show(report::Stage& s, std::string name, const report::Held<Ten3>& t,
                               report::Labels rows, report::Labels cols) const {
  if (t.computed()) return show(s, std::move(name), t.shared(), std::move(rows), std::move(cols));
  const Shape& n = t.shape();
  return s.show(std::move(name), report::Held<Ten3>(batched_ ? n : Shape{n[1], n[2]}), std::move(rows),
                std::move(cols));
}

report::Stage& BatchView::show(report::Stage& s, std::string name, const report::Held<Mat>& t,
                               report::Labels cols) const {
  if (t.computed()) return show(s, std::move(name), *t, std::move(cols));  // (B, n): small, copied
  const Shape& n = t.shape();
  return s.show(std::move(name), report::Held<Mat>(batched_ ? n : Shape{n[1]}), {}, std::move(cols));
}

report::Stage& BatchView::show(report::Stage& s, std::string name, const Mat& t,
                               report::Labels cols) const {
  if (batched_) return s.show(std::move(name), t, {}, std::move(cols));
  return s.show_copy(std::move(name), {t.shape()[1]}, t.data(), {}, std::move(cols));  // (B, n) -> (n,), B is 1 here
}

std::string BatchView::axes(const std::string& inner) const {
  return batched_ ? "(B, " + inner + ")" : "(" + inner + ")";
}

}  // namespace attn
