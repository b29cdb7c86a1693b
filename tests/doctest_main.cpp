// The one translation unit that holds doctest's runner. It is compiled once into an object
// library that every test executable links, so each test file only pays for its own code.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>
