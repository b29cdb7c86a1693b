// The colour map behind every heatmap. Viridis is checked against matplotlib's published table
// (entries quoted below), so the terminal and the SVGs show the colours the articles' figures show.
#include <doctest/doctest.h>

#include <cmath>
#include <string>

#include "report/colormap.hpp"

using namespace attn::report;

TEST_CASE("viridis: both ends are the table's first and last entries") {
  double r, g, b;
  viridis_unit(0.0, r, g, b);  // _viridis_data[0]
  CHECK(r == doctest::Approx(0.267004));
  CHECK(g == doctest::Approx(0.004874));
  CHECK(b == doctest::Approx(0.329415));
  viridis_unit(1.0, r, g, b);  // _viridis_data[255]
  CHECK(r == doctest::Approx(0.993248));
  CHECK(g == doctest::Approx(0.906157));
  CHECK(b == doctest::Approx(0.143936));
  CHECK(hex(viridis(0.0)) == "#440154");  // the colours matplotlib's docs name
  CHECK(hex(viridis(1.0)) == "#fde725");
}

TEST_CASE("viridis: the midpoint lies between table entries 127 and 128") {
  double r, g, b;
  viridis_unit(0.5, r, g, b);  // position 127.5 of 0..255
  // _viridis_data[127] = (0.128729, 0.563265, 0.551229), [128] = (0.127568, 0.566949, 0.550556)
  CHECK(r == doctest::Approx((0.128729 + 0.127568) / 2).epsilon(0.01));
  CHECK(g == doctest::Approx((0.563265 + 0.566949) / 2).epsilon(0.01));
  CHECK(b == doctest::Approx((0.551229 + 0.550556) / 2).epsilon(0.01));
  CHECK(hex(viridis(128.0 / 255.0)) == "#21918c");  // entry 128 itself, the well-known teal
}

TEST_CASE("viridis: entries between the samples stay close to the full table") {
  // A few entries the map does not store, with their published values.
  struct Entry {
    int index;
    double r, g, b;
  };
  const Entry entries[] = {{4, 0.272594, 0.025563, 0.353093},
                           {60, 0.237441, 0.305202, 0.541921},
                           {150, 0.128087, 0.647749, 0.523491},
                           {201, 0.449368, 0.813768, 0.335384},
                           {250, 0.945636, 0.899815, 0.112838}};
  for (const auto& e : entries) {
    CAPTURE(e.index);
    double r, g, b;
    viridis_unit(e.index / 255.0, r, g, b);
    CHECK(std::abs(r - e.r) < 0.007);
    CHECK(std::abs(g - e.g) < 0.007);
    CHECK(std::abs(b - e.b) < 0.007);
  }
}

TEST_CASE("viridis: lightness rises all the way, so more weight always looks brighter") {
  double previous = -1.0;
  for (int i = 0; i <= 100; ++i) {
    const double l = luma(viridis(i / 100.0));
    CHECK(l >= previous);
    previous = l;
  }
}

TEST_CASE("viridis: out-of-range and NaN inputs are clamped, not garbage") {
  CHECK(viridis(-3.0) == viridis(0.0));
  CHECK(viridis(7.0) == viridis(1.0));
  CHECK(viridis(std::nan("")) == viridis(0.0));
}

TEST_CASE("xterm 256 colours: the cube and the grey ramp") {
  CHECK(xterm256_index({255, 0, 0}) == 196);
  CHECK(xterm256_index({0, 0, 0}) == 16);
  CHECK(xterm256_index({255, 255, 255}) == 231);
  CHECK(xterm256_index({128, 128, 128}) == 244);  // grey 8 + 10 * 12
  CHECK(xterm256_rgb(244) == Rgb{128, 128, 128});
  CHECK(xterm256_rgb(21) == Rgb{0, 0, 255});
  // Every viridis colour lands on a nearby palette entry.
  for (int i = 0; i <= 20; ++i) {
    const Rgb c = viridis(i / 20.0);
    const Rgb p = xterm256_rgb(xterm256_index(c));
    CHECK(std::abs(c.r - p.r) + std::abs(c.g - p.g) + std::abs(c.b - p.b) < 90);
  }
}

TEST_CASE("escape codes per colour depth") {
  const Rgb purple = viridis(0.0);
  CHECK(background(purple, ColorDepth::truecolor) == "\x1b[48;2;68;1;84m");
  CHECK(background(purple, ColorDepth::xterm256) == "\x1b[48;5;" + std::to_string(xterm256_index(purple)) + "m");
  CHECK(background(purple, ColorDepth::none).empty());
  CHECK(foreground(purple, ColorDepth::none).empty());
  CHECK(std::string(kReset) == "\x1b[0m");
}

TEST_CASE("xterm 256 colours: viridis as a ramp of palette colours in equal steps") {
  const std::vector<int>& ramp = xterm256_viridis_ramp();
  // Measured: the palette colours nearest to viridis, in OKLab, are 12 (53 54 24 30 36 71 42 77
  // 113 148 184 220); nearest by sRGB distance they are 14, but not in order of lightness.
  CHECK(ramp.size() >= 10);
  CHECK(ramp.front() == xterm256_viridis(0.0));
  CHECK(ramp.back() == xterm256_viridis(1.0));
  for (std::size_t k = 1; k < ramp.size(); ++k) {
    CAPTURE(k);
    CHECK(ramp[k] != ramp[k - 1]);
    CHECK(luma(xterm256_rgb(ramp[k])) > luma(xterm256_rgb(ramp[k - 1])));  // lighter at every step
  }
  // What nearest-colour lookup merged (the report): 0.2 and 0.3, 0.4 and 0.5.
  CHECK(xterm256_index(viridis(0.2)) == xterm256_index(viridis(0.3)));
  CHECK(xterm256_index(viridis(0.4)) == xterm256_index(viridis(0.5)));
  // On the ramp, values a tenth apart never share a colour, and the steps are equal bands.
  for (int i = 1; i <= 10; ++i) {
    CAPTURE(i);
    CHECK(xterm256_viridis(i / 10.0) != xterm256_viridis((i - 1) / 10.0));
  }
  const double band = 1.0 / static_cast<double>(ramp.size());
  for (std::size_t k = 0; k < ramp.size(); ++k) {
    CAPTURE(k);
    CHECK(xterm256_viridis((k + 0.01) * band) == ramp[k]);
    CHECK(xterm256_viridis((k + 0.99) * band) == ramp[k]);
  }
  CHECK(xterm256_viridis(-1.0) == ramp.front());
  CHECK(xterm256_viridis(std::nan("")) == ramp.front());
  CHECK(xterm256_viridis(2.0) == ramp.back());
  // Each step stays near the part of viridis it stands for, in lightness: measured at most 0.152
  // apart (steps 5 and 7), since the palette offers no colour between its dozen.
  for (std::size_t k = 0; k < ramp.size(); ++k) {
    const Rgb want = viridis((k + 0.5) * band), got = xterm256_rgb(ramp[k]);
    CAPTURE(k);
    CHECK(std::abs(luma(want) - luma(got)) < 0.2);
  }
  CHECK(viridis_background(0.25, ColorDepth::xterm256) == "\x1b[48;5;" + std::to_string(xterm256_viridis(0.25)) + "m");
  CHECK(viridis_background(0.25, ColorDepth::truecolor) == background(viridis(0.25), ColorDepth::truecolor));
  CHECK(viridis_background(0.25, ColorDepth::none).empty());
}
