// The text matrix reader behind --input m.csv: commas, tabs or spaces, comments and blank lines
// skipped, and every malformed file refused with the line that is wrong.
#include <doctest/doctest.h>

#include "io/text_matrix.hpp"

using namespace attn;

TEST_CASE("text matrices: separators, comments, blank lines") {
  const NpyArray a = parse_text_matrix("# x for three tokens\n0.43, 0.15, 0.89\n\n0.55 0.87\t0.66\r\n1e-2;2;3\n", "m.csv");
  CHECK(a.shape == Shape{3, 3});
  CHECK(a.values[0] == doctest::Approx(0.43f));
  CHECK(a.values[5] == doctest::Approx(0.66f));
  CHECK(a.values[6] == doctest::Approx(0.01f));
  const NpyArray one = parse_text_matrix("-1.5", "m.txt");
  CHECK(one.shape == Shape{1, 1});
  CHECK(one.values[0] == -1.5f);
}

TEST_CASE("text matrices: refusals name the file and the line") {
  CHECK_THROWS_WITH_AS(parse_text_matrix("1 2 3\n4 5\n", "m.csv"), doctest::Contains("m.csv: line 2 has 2 values, the first row 3"),
                       NpyError);
  CHECK_THROWS_WITH_AS(parse_text_matrix("1 2 x3\n", "m.csv"), doctest::Contains("line 1: 'x3' is not a finite number"), NpyError);
  CHECK_THROWS_WITH_AS(parse_text_matrix("1 nan\n", "m.csv"), doctest::Contains("'nan' is not a finite number"), NpyError);
  CHECK_THROWS_WITH_AS(parse_text_matrix("1 1e999\n", "m.csv"), doctest::Contains("not a finite number"), NpyError);
  CHECK_THROWS_WITH_AS(parse_text_matrix("# only a comment\n\n", "m.csv"), doctest::Contains("no values"), NpyError);
  CHECK_THROWS_WITH_AS(read_text_matrix("/nonexistent/m.csv"), doctest::Contains("cannot open"), NpyError);
}
