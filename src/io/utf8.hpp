// UTF-8 validity, one character at a time: the one decoder the error lines, the manifest, the
// label widths and the tokenizer share (built into attn_core, so every layer above may include it).
#pragma once

#include <cstddef>
#include <string_view>

namespace attn {

// Bytes in the valid UTF-8 character at s[i]: 1 for ASCII, 2 to 4 for a shortest-form sequence
// that is no surrogate and at most U+10FFFF (valid as in Rust's str), 0 when none starts there
// (a stray continuation byte, a bad lead byte, a sequence cut short or wrong inside). i < s.size().
std::size_t utf8_length(std::string_view s, std::size_t i);

// For an s[i] where utf8_length is 0: the bytes of the maximal invalid subsequence there (the lead
// byte and the continuation bytes after it that could still have made a valid character), which
// Unicode's "best practice" (§3.9) replaces with one U+FFFD, as Python's
// bytes.decode("utf-8", "replace") and browsers do. At least 1.
std::size_t utf8_invalid_length(std::string_view s, std::size_t i);

// The code point of the valid n-byte character at s[i] (n from utf8_length).
char32_t utf8_code_point(std::string_view s, std::size_t i, std::size_t n);

}  // namespace attn
