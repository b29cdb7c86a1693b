// TEMPORARY placeholder: replaced by the luong lesson's tests.
#include <doctest/doctest.h>
TEST_CASE("luong lesson tests are written") { FAIL("tests/lessons/test_luong.cpp is still a placeholder"); }
