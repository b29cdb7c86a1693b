// Text utilities shared by the text sink and the CLI's messages (numbers have report/numbers.hpp,
// label widths report/text_width.hpp).
#pragma once

namespace attn::report {

// The "no break here" byte: a caller replaces the spaces wrap() must not break at with kKeep, wraps,
// then turns every kKeep back into a space ("causal False", "queries (6, 2)" stay on one line).
inline constexpr char kKeep = '\x01';

}  // namespace attn::report
