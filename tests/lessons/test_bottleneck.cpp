// TEMPORARY placeholder: replaced by the bottleneck lesson's tests.
#include <doctest/doctest.h>
TEST_CASE("bottleneck lesson tests are written") { FAIL("tests/lessons/test_bottleneck.cpp is still a placeholder"); }
