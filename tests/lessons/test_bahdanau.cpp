// TEMPORARY placeholder: replaced by the bahdanau lesson's tests.
#include <doctest/doctest.h>
TEST_CASE("bahdanau lesson tests are written") { FAIL("tests/lessons/test_bahdanau.cpp is still a placeholder"); }
