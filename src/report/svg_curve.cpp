#include "report/svg_curve.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "report/svg_text.hpp"

namespace attn::report {

using svg::num;
using svg::xml;

namespace {

// A tick label for the y axis: plain digits where they read well, else an exponent.
std::string axis_number(double v) {
  char buf[32];
  const double a = std::fabs(v);
  std::snprintf(buf, sizeof buf, a != 0.0 && (a < 1e-3 || a >= 1e5) ? "%.0e" : "%g", v);
  return buf;
}

// A round step (1, 2 or 5 times a power of ten) that cuts `span` into at most `parts` pieces.
double nice_step(double span, double parts) {
  const double raw = span / parts;
  const double unit = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (m * unit >= raw) return m * unit;
  return 10.0 * unit;
}

}  // namespace

std::string svg_curve(const Header& h, const Stage& s, std::size_t total_stages, const TensorItem& t) {
  const std::vector<float>& v = t.values;
  const std::size_t n = v.size();
  double lo = INFINITY, hi = -INFINITY;
  for (float x : v)
    if (std::isfinite(x)) lo = std::min(lo, static_cast<double>(x)), hi = std::max(hi, static_cast<double>(x));
  const bool any = std::isfinite(lo);
  const bool log_y = any && lo > 0.0 && hi / lo > 20.0;
  // The y range: whole decades on a log axis, the data's range (or +-0.5 around a flat curve) otherwise.
  double y0 = 0.0, y1 = 1.0;
  if (log_y) y0 = std::floor(std::log10(lo)), y1 = std::ceil(std::log10(hi));
  else if (any) y0 = lo, y1 = hi > lo ? hi : lo + 1.0, y0 = hi > lo ? lo : lo - 1.0;
  auto y_of = [&](double value) { return log_y ? std::log10(value) : value; };

  const double W = 760.0, H = 440.0, left = 78.0, right = 24.0, top = 84.0, bottom = 56.0;
  const double pw = W - left - right, ph = H - top - bottom;
  auto px = [&](double i) { return left + (n > 1 ? (i - 1.0) / static_cast<double>(n - 1) : 0.5) * pw; };
  auto py = [&](double y) { return top + (1.0 - (y - y0) / (y1 - y0)) * ph; };

  const std::string title = t.name + " " + shape_str(t.shape);
  const std::string subtitle = h.invocation() + ", stage " + std::to_string(s.index) + "/" +
                               std::to_string(total_stages) + ": " + s.title;
  const std::string axes = "x: " + t.curve_x + " 1.." + std::to_string(n) + "; y: " + t.name +
                           (log_y ? ", logarithmic scale" : "") +
                           (any ? "; from " + fixed(hi, 4) + " down to " + fixed(lo, 4) : "; no finite values");
  std::string o;
  o += "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  o += "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + num(W) + "\" height=\"" + num(H) + "\" viewBox=\"0 0 " +
       num(W) + " " + num(H) + "\" font-family=\"DejaVu Sans, Verdana, Arial, sans-serif\">\n";
  o += "<title>" + xml(title + " - " + subtitle) + "</title>\n";
  o += "<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n";
  o += "<text x=\"16\" y=\"26\" font-size=\"15\" font-weight=\"bold\" fill=\"#111\">" + xml(title) + "</text>\n";
  o += "<text x=\"16\" y=\"46\" font-size=\"12\" fill=\"#333\">" + xml(subtitle) + "</text>\n";
  o += "<text x=\"16\" y=\"64\" font-size=\"11\" fill=\"#666\">" + xml(axes) + "</text>\n";

  // Grid lines and tick labels: every decade on a log axis, round steps on a linear one.
  o += "<g font-size=\"11\" fill=\"#333\" stroke-width=\"1\">\n";
  std::vector<double> yticks;
  if (log_y) {
    for (double d = y0; d <= y1 + 1e-9; d += 1.0) yticks.push_back(d);
  } else {
    const double step = nice_step(y1 - y0, 5.0);
    for (double k = std::ceil(y0 / step - 1e-9); k * step <= y1 + step * 1e-9; k += 1.0) yticks.push_back(k * step);
  }
  for (double y : yticks) {
    o += "<line x1=\"" + num(left) + "\" y1=\"" + num(py(y)) + "\" x2=\"" + num(left + pw) + "\" y2=\"" + num(py(y)) +
         "\" stroke=\"#e4e4e4\"/>\n";
    o += "<text x=\"" + num(left - 6) + "\" y=\"" + num(py(y)) + "\" dy=\"0.35em\" text-anchor=\"end\">" +
         axis_number(log_y ? std::pow(10.0, y) : y) + "</text>\n";
  }
  std::vector<double> xticks = {1.0};
  if (n > 1) {
    const double step = nice_step(static_cast<double>(n - 1), 6.0);
    for (double x = step; x < static_cast<double>(n) - step * 0.3; x += step) xticks.push_back(x);
    xticks.push_back(static_cast<double>(n));
  }
  for (double x : xticks) {
    o += "<line x1=\"" + num(px(x)) + "\" y1=\"" + num(top) + "\" x2=\"" + num(px(x)) + "\" y2=\"" + num(top + ph) +
         "\" stroke=\"#e4e4e4\"/>\n";
    o += "<text x=\"" + num(px(x)) + "\" y=\"" + num(top + ph + 18) + "\" text-anchor=\"middle\">" +
         axis_number(x) + "</text>\n";
  }
  o += "<text x=\"" + num(left + pw / 2) + "\" y=\"" + num(H - 12) + "\" text-anchor=\"middle\">" + xml(t.curve_x) +
       "</text>\n";
  o += "</g>\n";
  o += "<rect x=\"" + num(left) + "\" y=\"" + num(top) + "\" width=\"" + num(pw) + "\" height=\"" + num(ph) +
       "\" fill=\"none\" stroke=\"#444\" stroke-width=\"1\"/>\n";

  // The curve: one polyline per run of finite points.
  std::string points;
  auto flush = [&] {
    if (!points.empty())
      o += "<polyline fill=\"none\" stroke=\"#3b528b\" stroke-width=\"1.5\" points=\"" + points + "\"/>\n";
    points.clear();
  };
  for (std::size_t i = 0; i < n; ++i) {
    const double value = v[i];
    if (!std::isfinite(value) || (log_y && value <= 0.0)) {
      flush();
      continue;
    }
    points += (points.empty() ? "" : " ") + num(px(static_cast<double>(i + 1))) + "," + num(py(y_of(value)));
  }
  flush();
  o += "</svg>\n";
  return o;
}

}  // namespace attn::report
