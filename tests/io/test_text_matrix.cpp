// The text matrix reader behind --input m.csv: commas, tabs or spaces, comments and blank lines
// skipped, and every malformed file refused with the line that is wrong.
#include <doctest/doctest.h>

#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <stdexcept>
#include <vector>

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
  CHECK_THROWS_WITH_AS(parse_text_matrix("1 2 x3\n", "m.csv"), doctest::Contains("line 1, column 3: 'x3' is not a number"), NpyError);
  CHECK_THROWS_WITH_AS(parse_text_matrix("1 nan\n", "m.csv"), doctest::Contains("line 1, column 2: 'nan' is not a finite number"), NpyError);
  CHECK_THROWS_WITH_AS(parse_text_matrix("# only a comment\n\n", "m.csv"), doctest::Contains("no values"), NpyError);
  CHECK_THROWS_WITH_AS(read_text_matrix("/nonexistent/m.csv"), doctest::Contains("no such file"), NpyError);
  CHECK_THROWS_WITH_AS(read_text_matrix("/"), doctest::Contains("/: a directory, not a file"), NpyError);
}

TEST_CASE("text matrices: values beyond float32 are refused as overflow, unless non-finite values are allowed") {
  CHECK_THROWS_WITH_AS(parse_text_matrix("1, 2\n3, 1e39\n", "m.csv"),
                       doctest::Contains("m.csv: line 2, column 2: '1e39' overflows float32"), NpyError);
  CHECK_THROWS_WITH_AS(parse_text_matrix("0x1p302\n", "m.csv"), doctest::Contains("'0x1p302' overflows float32"), NpyError);
  CHECK_THROWS_WITH_AS(parse_text_matrix("-1e999\n", "m.csv"), doctest::Contains("overflows float32"), NpyError);
  CHECK_THROWS_WITH_AS(parse_text_matrix("1 -inf\n", "m.csv"), doctest::Contains("'-inf' is not a finite number"), NpyError);
  // The largest float32 itself is finite and kept.
  CHECK(parse_text_matrix("3.4028235e38\n", "m.csv").values[0] == std::numeric_limits<float>::max());
  const NpyArray kept = parse_text_matrix("1e39, nan\n-inf, 2\n", "m.csv", true);
  REQUIRE(kept.shape == Shape{2, 2});
  CHECK(std::isinf(kept.values[0]));
  CHECK(kept.values[0] > 0);
  CHECK(std::isnan(kept.values[1]));
  CHECK(std::isinf(kept.values[2]));
  CHECK(kept.values[2] < 0);
  CHECK(kept.values[3] == 2.0f);
}

TEST_CASE("text matrices: a value below float32's range is the float32 it rounds to") {
  const NpyArray a = parse_text_matrix("1e-320, 1e-40, -1e-50\n", "m.csv");
  CHECK(a.values[0] == 0.0f);
  CHECK(a.values[1] == std::strtof("1e-40", nullptr));
  CHECK(a.values[1] > 0.0f);  // a float32 subnormal, not zero
  CHECK(a.values[2] == 0.0f);
  CHECK(std::signbit(a.values[2]));
}

TEST_CASE("text matrices: empty fields are refused, not collapsed") {
  CHECK_THROWS_WITH_AS(parse_text_matrix("1,,3\n4,,6\n", "m.csv"), doctest::Contains("line 1, column 2: empty field"), NpyError);
  CHECK_THROWS_WITH_AS(parse_text_matrix("1,2,\n", "m.csv"), doctest::Contains("line 1, column 3: empty field"), NpyError);
  CHECK_THROWS_WITH_AS(parse_text_matrix(",1,2\n", "m.csv"), doctest::Contains("line 1, column 1: empty field"), NpyError);
  CHECK_THROWS_WITH_AS(parse_text_matrix("1\t\t2\n", "m.tsv"), doctest::Contains("column 2: empty field"), NpyError);
  // Spaces around a separator, or several spaces alone, are not empty fields.
  CHECK(parse_text_matrix("1 ,  2 ; 3\n4   5\t6\n", "m.csv").shape == Shape{2, 3});
}

TEST_CASE("text matrices: a NUL byte inside a field is refused, and shown escaped") {
  const std::string text = std::string("1,2\n3,4") + '\0' + "5\n";
  CHECK_THROWS_WITH_AS(parse_text_matrix(text, "m.csv"), doctest::Contains("line 2, column 2: '4\\x005' is not a number"), NpyError);
}

TEST_CASE("text matrices: a UTF-8 byte-order mark is skipped") {
  const NpyArray a = parse_text_matrix("\xEF\xBB\xBF" "1,2\n3,4\n", "m.csv");
  CHECK(a.shape == Shape{2, 2});
  CHECK(a.values[0] == 1.0f);
  // Only at the start of the file: elsewhere it is a bad value.
  CHECK_THROWS_AS(parse_text_matrix("1,2\n\xEF\xBB\xBF" "3,4\n", "m.csv"), NpyError);
}

TEST_CASE("text matrices: a bad value is quoted shortened with control bytes escaped") {
  const std::string huge(1 << 20, 'z');
  try {
    parse_text_matrix("1," + huge + "\n", "m.csv");
    FAIL("accepted a 1 MB field");
  } catch (const NpyError& e) {
    const std::string what = e.what();
    CHECK(what.size() < 120);
    CHECK(what.find("'zzzzzzzzzzzzzzzzzzzzzzzz...' is not a number") != std::string::npos);
  }
  try {
    parse_text_matrix("\x1b[31mred\x07\n", "m.csv");
    FAIL("accepted an escape sequence");
  } catch (const NpyError& e) {
    const std::string what = e.what();
    CHECK(what.find('\x1b') == std::string::npos);
    CHECK(what.find('\x07') == std::string::npos);
    CHECK(what.find("'\\x1b[31mred\\x07' is not a number") != std::string::npos);
  }
  CHECK(quoted_for_message("a'b\\c\xff") == "'a\\x27b\\x5cc\\xff'");
}

TEST_CASE("text matrices: a size check sees the rows so far and stops the read at the row that crosses it") {
  namespace fs = std::filesystem;
  const fs::path path = fs::temp_directory_path() / ("attn-rows-" + std::to_string(::getpid()) + ".csv");
  {
    std::ofstream out(path);
    for (int i = 0; i < 1000; ++i) out << "1, 2, 3\n";
  }
  std::vector<Shape> seen;
  const auto at_most_10_rows = [&](const Shape& s) {
    seen.push_back(s);
    if (s[0] > 10) throw std::runtime_error("more than 10 rows");
  };
  CHECK_THROWS_WITH(read_text_matrix(path.string(), false, at_most_10_rows), "more than 10 rows");
  REQUIRE(seen.size() == 11);  // rows 1..11, then no more read
  CHECK(seen.front() == Shape{1, 3});
  CHECK(seen.back() == Shape{11, 3});
  seen.clear();
  CHECK(read_text_matrix(path.string(), false, [&](const Shape& s) { seen.push_back(s); }).shape == Shape{1000, 3});
  CHECK(seen.size() == 1000);
  fs::remove(path);
}

TEST_CASE("text matrices: the read stops at the first byte that cannot be part of a number") {
  // A stray byte is quoted with what came before it in its field and a little after it.
  CHECK_THROWS_WITH_AS(parse_text_matrix(std::string("1,2\n3,\0\0\0\0", 10), "m.csv"),
                       doctest::Contains("line 2, column 2: '\\x00\\x00\\x00\\x00' is not a number"), NpyError);
  CHECK_THROWS_WITH_AS(parse_text_matrix("1,2\n3,4\"5\n", "m.csv"), doctest::Contains("'4\"5' is not a number"), NpyError);
  CHECK_THROWS_WITH_AS(parse_text_matrix("0.5 # a comment after a value\n", "m.csv"),
                       doctest::Contains("line 1, column 2: '#' is not a number"), NpyError);
  // A field longer than any float32 needs is refused without reading it to its end.
  CHECK_THROWS_WITH_AS(parse_text_matrix("1," + std::string(5000, '1') + "\n", "m.csv"),
                       doctest::Contains("'111111111111111111111111...' is not a number"), NpyError);
  // A file of 200 MB of NUL bytes is refused at once: it is never held whole.
  namespace fs = std::filesystem;
  const fs::path path = fs::temp_directory_path() / ("attn-nul-" + std::to_string(::getpid()) + ".csv");
  { std::ofstream out(path); }
  fs::resize_file(path, 200000000);
  const auto t0 = std::chrono::steady_clock::now();
  CHECK_THROWS_WITH_AS(read_text_matrix(path.string()), doctest::Contains("line 1, column 1: '\\x00"), NpyError);
  CHECK(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() < 5);
  fs::remove(path);
}
