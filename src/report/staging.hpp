// What --dump DIR and --npz PATH share in writing their output where it belongs: the parents to
// create (and to remove again when the output never lands) and the check that the nearest
// existing one takes new entries. Both write into a temporary entry beside the target and rename
// it at the end (dump_sink.hpp, npz_sink.hpp).
#pragma once

#include <string>
#include <vector>

namespace attn::report {

// `path` without trailing slashes: "out/" and "out//" name "out" (the last component would
// otherwise be empty, and the output staged beside a parent that does not exist).
std::string without_trailing_slash(const std::string& path);

// Throws std::runtime_error with the reason unless the nearest existing ancestor of `target`'s
// parent is a directory that takes new entries (so the missing parents can be created).
void check_parent_writable(const std::string& target);

// Creates the missing parents of `target` (absolute), outermost first, and returns them in that
// order; throws std::runtime_error naming the one that could not be made (after removing those
// made before it).
std::vector<std::string> make_parents(const std::string& target);

// Removes the directories of `made` (outermost first) that are still empty, innermost first.
void remove_if_empty(const std::vector<std::string>& made);

}  // namespace attn::report
