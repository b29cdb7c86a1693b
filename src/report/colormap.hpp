// Viridis, the colour map of the articles' attention figures, and the terminal escape codes that
// paint with it.
//
// Viridis (van der Walt and Smith, matplotlib 1.5+) rises steadily in lightness from dark purple
// to yellow, so a larger weight always looks brighter, in grey print and to colour-blind readers
// alike. The map here is piecewise linear between 33 samples of the published 256-entry table
// (every 8th entry and the last); it stays within 1.7/255 of the full table.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace attn::report {

struct Rgb {
  std::uint8_t r = 0, g = 0, b = 0;
  bool operator==(const Rgb& o) const { return r == o.r && g == o.g && b == o.b; }
};

// viridis(0) is the dark purple end, viridis(1) the yellow end; t outside [0, 1] is clamped and
// NaN maps to 0 (callers draw NaN with their own mark before they get here).
Rgb viridis(double t);
// The same in [0, 1] floats, for tests against the published table.
void viridis_unit(double t, double& r, double& g, double& b);

// How many colours the terminal can show. `none` means characters only.
enum class ColorDepth { none, xterm256, truecolor };

// The nearest entry of the xterm 256-colour palette (the 6x6x6 cube 16..231 and the grey ramp
// 232..255; the 16 system colours are skipped because terminals redefine them).
int xterm256_index(Rgb c);
// The colour an xterm 256 index stands for (16..255).
Rgb xterm256_rgb(int index);

// Viridis in the xterm palette. Near viridis the palette holds only a dozen colours (its cube has
// six levels per channel), so looking up the nearest colour of each value merges neighbours
// unevenly: viridis 0.2 and 0.3 land on one blue, 0.4 and 0.5 on one teal, while elsewhere a small
// difference jumps a step, and equal weights seem to differ. The ramp is instead the palette
// colours met along viridis (at each of its 256 entries, the perceptually nearest, in OKLab), in
// order, and t picks one of them in equal bands: each step stands for the same share of the scale,
// and lightness rises at every step (tests/report/test_colormap.cpp).
const std::vector<int>& xterm256_viridis_ramp();
// The step of that ramp for t in [0, 1] (clamped; NaN gives the first).
int xterm256_viridis(double t);

// Escape codes: a background colour at the given depth ("" at ColorDepth::none), and the reset.
std::string background(Rgb c, ColorDepth depth);
std::string foreground(Rgb c, ColorDepth depth);
// viridis(t) as a background: the colour itself in truecolor, its step of the ramp above in 256
// colours, "" at ColorDepth::none. What heatmaps paint with.
std::string viridis_background(double t, ColorDepth depth);
inline constexpr const char* kReset = "\x1b[0m";

// Hex "#21918c", for SVG.
std::string hex(Rgb c);

// Perceived lightness of a colour in [0, 1] (Rec. 709 luma): picks black or white text on it.
double luma(Rgb c);

}  // namespace attn::report
