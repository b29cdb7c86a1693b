// A tensor a lesson computes and shows, held once and shared: the lesson and every stage that
// shows it point at the same buffer (Stage::show), so showing a (T, T) tensor costs no copy.
// When a run computes no values (--shapes-only past printable sizes, lesson_kit/options.hpp),
// a Held carries only its shape: stages still list it with that shape, and nothing is allocated.
#pragma once

#include <memory>
#include <stdexcept>
#include <type_traits>
#include <utility>

#include "core/tensor.hpp"

namespace attn::report {

template <class E>
class Held {
 public:
  Held() = default;
  // Only the shape: the run computes no values.
  explicit Held(Shape shape) : shape_(std::move(shape)) {}
  // The tensor itself, moved into shared storage.
  explicit Held(E t) : shape_(to_shape(t.shape())), t_(std::make_shared<const E>(std::move(t))) {}

  const Shape& shape() const { return shape_; }
  bool computed() const { return t_ != nullptr; }
  const E& operator*() const { return get(); }
  const E* operator->() const { return &get(); }
  const std::shared_ptr<const E>& shared() const { return t_; }

 private:
  const E& get() const {
    if (!t_) throw std::logic_error("Held: the tensor " + shape_str(shape_) + " was not computed in this run");
    return *t_;
  }
  Shape shape_;
  std::shared_ptr<const E> t_;
};

// f() when `compute`, else only `shape`. A computed result must have that shape: the declared
// shape is what a run without values shows, so a mismatch is a bug and throws std::logic_error
// (every test run computes, and would catch it).
template <class F>
auto hold(bool compute, Shape shape, F&& f) -> Held<std::decay_t<decltype(f())>> {
  using E = std::decay_t<decltype(f())>;
  if (!compute) return Held<E>(std::move(shape));
  Held<E> h(f());
  if (h.shape() != shape)
    throw std::logic_error("hold: computed " + shape_str(h.shape()) + ", declared " + shape_str(shape));
  return h;
}

}  // namespace attn::report
