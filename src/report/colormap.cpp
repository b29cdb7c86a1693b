#include "report/colormap.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

namespace attn::report {

namespace {

// Entries 0, 8, 16, ..., 248 and 255 of the viridis table as published with matplotlib
// (_cm_listed.py, CC0). Between two samples the map is linear in the table's index.
struct Anchor {
  int index;
  double r, g, b;
};
constexpr Anchor kViridis[] = {
    {0, 0.267004, 0.004874, 0.329415},   {8, 0.277018, 0.050344, 0.375715},
    {16, 0.282327, 0.094955, 0.417331},  {24, 0.282884, 0.135920, 0.453427},
    {32, 0.278826, 0.175490, 0.483397},  {40, 0.270595, 0.214069, 0.507052},
    {48, 0.258965, 0.251537, 0.524736},  {56, 0.244972, 0.287675, 0.537260},
    {64, 0.229739, 0.322361, 0.545706},  {72, 0.214298, 0.355619, 0.551184},
    {80, 0.199430, 0.387607, 0.554642},  {88, 0.185556, 0.418570, 0.556753},
    {96, 0.172719, 0.448791, 0.557885},  {104, 0.160665, 0.478540, 0.558115},
    {112, 0.149039, 0.508051, 0.557250}, {120, 0.137770, 0.537492, 0.554906},
    {128, 0.127568, 0.566949, 0.550556}, {136, 0.120565, 0.596422, 0.543611},
    {144, 0.120638, 0.625828, 0.533488}, {152, 0.132268, 0.655014, 0.519661},
    {160, 0.157851, 0.683765, 0.501686}, {168, 0.196571, 0.711827, 0.479221},
    {176, 0.246070, 0.738910, 0.452024}, {184, 0.304148, 0.764704, 0.419943},
    {192, 0.369214, 0.788888, 0.382914}, {200, 0.440137, 0.811138, 0.340967},
    {208, 0.515992, 0.831158, 0.294279}, {216, 0.595839, 0.848717, 0.243329},
    {224, 0.678489, 0.863742, 0.189503}, {232, 0.762373, 0.876424, 0.137064},
    {240, 0.845561, 0.887322, 0.099702}, {248, 0.926106, 0.897330, 0.104071},
    {255, 0.993248, 0.906157, 0.143936},
};
constexpr std::size_t kAnchors = sizeof kViridis / sizeof kViridis[0];

std::uint8_t byte(double unit) { return static_cast<std::uint8_t>(std::lround(std::clamp(unit, 0.0, 1.0) * 255.0)); }

// The 6 levels of each axis of xterm's colour cube.
constexpr int kCube[6] = {0, 95, 135, 175, 215, 255};

int distance2(Rgb a, Rgb b) {
  const int dr = a.r - b.r, dg = a.g - b.g, db = a.b - b.b;
  return dr * dr + dg * dg + db * db;
}

// OKLab (Ottosson 2020): distances in it follow perceived colour differences far better than
// distances in sRGB, which weigh a step of blue like a step of green.
struct Lab {
  double l, a, b;
};

double linear(std::uint8_t c) {  // sRGB's transfer curve undone
  const double v = c / 255.0;
  return v <= 0.04045 ? v / 12.92 : std::pow((v + 0.055) / 1.055, 2.4);
}

Lab oklab(Rgb c) {
  const double r = linear(c.r), g = linear(c.g), b = linear(c.b);
  const double l = std::cbrt(0.4122214708 * r + 0.5363325363 * g + 0.0514459929 * b);
  const double m = std::cbrt(0.2119034982 * r + 0.6806995451 * g + 0.1073969566 * b);
  const double s = std::cbrt(0.0883024619 * r + 0.2817188376 * g + 0.6299787005 * b);
  return {0.2104542553 * l + 0.7936177850 * m - 0.0040720468 * s,
          1.9779984951 * l - 2.4285922050 * m + 0.4505937099 * s,
          0.0259040371 * l + 0.7827717662 * m - 0.8086757660 * s};
}

double distance2(Lab x, Lab y) { return (x.l - y.l) * (x.l - y.l) + (x.a - y.a) * (x.a - y.a) + (x.b - y.b) * (x.b - y.b); }

}  // namespace

void viridis_unit(double t, double& r, double& g, double& b) {
  if (!(t >= 0.0)) t = 0.0;  // also catches NaN
  if (t > 1.0) t = 1.0;
  const double pos = t * 255.0;  // a position in the 256-entry table
  std::size_t k = 0;
  while (k + 2 < kAnchors && kViridis[k + 1].index < pos) ++k;
  const Anchor& lo = kViridis[k];
  const Anchor& hi = kViridis[k + 1];
  const double f = (pos - lo.index) / (hi.index - lo.index);
  r = lo.r + (hi.r - lo.r) * f;
  g = lo.g + (hi.g - lo.g) * f;
  b = lo.b + (hi.b - lo.b) * f;
}

Rgb viridis(double t) {
  double r, g, b;
  viridis_unit(t, r, g, b);
  return {byte(r), byte(g), byte(b)};
}

Rgb xterm256_rgb(int index) {
  if (index >= 232) {
    const auto v = static_cast<std::uint8_t>(8 + 10 * (index - 232));
    return {v, v, v};
  }
  const int i = std::clamp(index, 16, 231) - 16;
  return {static_cast<std::uint8_t>(kCube[i / 36]), static_cast<std::uint8_t>(kCube[(i / 6) % 6]),
          static_cast<std::uint8_t>(kCube[i % 6])};
}

int xterm256_index(Rgb c) {
  // Every candidate is tried: the cube's levels are uneven, so rounding each channel on its own
  // can miss the nearest colour, and a grey may be nearer still.
  int best = 16, best_d = distance2(c, xterm256_rgb(16));
  for (int i = 17; i < 256; ++i) {
    const int d = distance2(c, xterm256_rgb(i));
    if (d < best_d) best = i, best_d = d;
  }
  return best;
}

const std::vector<int>& xterm256_viridis_ramp() {
  static const std::vector<int> ramp = [] {
    std::vector<Lab> palette;  // entries 16..255
    for (int i = 16; i < 256; ++i) palette.push_back(oklab(xterm256_rgb(i)));
    std::vector<int> steps;
    for (int k = 0; k < 256; ++k) {  // every entry of viridis' table, in order
      const Lab want = oklab(viridis(k / 255.0));
      std::size_t best = 0;
      for (std::size_t i = 1; i < palette.size(); ++i)
        if (distance2(want, palette[i]) < distance2(want, palette[best])) best = i;
      const int index = static_cast<int>(best) + 16;
      if (steps.empty() || steps.back() != index) steps.push_back(index);
    }
    return steps;
  }();
  return ramp;
}

int xterm256_viridis(double t) {
  const std::vector<int>& ramp = xterm256_viridis_ramp();
  if (!(t >= 0.0)) t = 0.0;  // also catches NaN
  const auto band = static_cast<std::size_t>(std::min(t, 1.0) * static_cast<double>(ramp.size()));
  return ramp[std::min(band, ramp.size() - 1)];
}

std::string viridis_background(double t, ColorDepth depth) {
  if (depth != ColorDepth::xterm256) return background(viridis(t), depth);
  char buf[32];
  std::snprintf(buf, sizeof buf, "\x1b[48;5;%dm", xterm256_viridis(t));
  return buf;
}

std::string background(Rgb c, ColorDepth depth) {
  char buf[32];
  if (depth == ColorDepth::truecolor) std::snprintf(buf, sizeof buf, "\x1b[48;2;%d;%d;%dm", c.r, c.g, c.b);
  else if (depth == ColorDepth::xterm256) std::snprintf(buf, sizeof buf, "\x1b[48;5;%dm", xterm256_index(c));
  else return "";
  return buf;
}

std::string foreground(Rgb c, ColorDepth depth) {
  char buf[32];
  if (depth == ColorDepth::truecolor) std::snprintf(buf, sizeof buf, "\x1b[38;2;%d;%d;%dm", c.r, c.g, c.b);
  else if (depth == ColorDepth::xterm256) std::snprintf(buf, sizeof buf, "\x1b[38;5;%dm", xterm256_index(c));
  else return "";
  return buf;
}

std::string hex(Rgb c) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "#%02x%02x%02x", c.r, c.g, c.b);
  return buf;
}

double luma(Rgb c) { return (0.2126 * c.r + 0.7152 * c.g + 0.0722 * c.b) / 255.0; }

}  // namespace attn::report
