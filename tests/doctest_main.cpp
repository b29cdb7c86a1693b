// The one translation unit that holds doctest's runner. It is compiled once into an object
// library that every test executable links, so each test file only pays for its own code.
// Its main() treats freed memory as attn's main() does, so a test that trains a lesson costs
// what the lesson costs.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include "core/heap.hpp"

int main(int argc, char** argv) {
  attn::keep_freed_memory();
  return doctest::Context(argc, argv).run();
}
