#include "tools/weft-bench/svg_plot.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace weft::tools::weft_bench {
namespace {

// Page layout, in SVG user units.
constexpr double kWidth = 900;
constexpr double kHeight = 540;
constexpr double kLeft = 80;
constexpr double kRight = 230;  // room for the legend
constexpr double kTop = 50;
constexpr double kBottom = 70;
constexpr double kPlotWidth = kWidth - kLeft - kRight;
constexpr double kPlotHeight = kHeight - kTop - kBottom;
constexpr int kMaxXTicks = 12;
constexpr int kYTicks = 5;
constexpr double kLegendRow = 22;
constexpr double kDotRadius = 3;
constexpr const char* kDashes[] = {"none", "8,4", "2,3"};
constexpr const char* kColours[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e",
                                    "#9467bd", "#8c564b", "#e377c2", "#17becf"};

std::string escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

// The smallest of 1, 2, 5 times a power of ten that is >= value.
double round_step(double value) {
  const double decade = std::pow(10.0, std::floor(std::log10(value)));
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    if (m * decade >= value) return m * decade;
  }
  return 10 * decade;
}

struct Axes {
  double x_lo = 0, x_hi = 1;  // log2 of bytes
  double y_top = 1;
  double y_step = 1;

  double px(double x) const {
    return kLeft + (std::log2(x) - x_lo) / (x_hi - x_lo) * kPlotWidth;
  }
  double py(double y) const {
    return kTop + kPlotHeight - y / y_top * kPlotHeight;
  }
};

Axes axes_for(const std::vector<PlotSeries>& series) {
  double lo = HUGE_VAL, hi = -HUGE_VAL, y_max = 0;
  for (const PlotSeries& s : series) {
    for (const PlotPoint& p : s.points) {
      if (p.x <= 0) continue;
      lo = std::min(lo, std::floor(std::log2(p.x)));
      hi = std::max(hi, std::ceil(std::log2(p.x)));
      y_max = std::max(y_max, p.y);
    }
  }
  Axes a;
  if (lo > hi) lo = hi = 0;
  a.x_lo = lo == hi ? lo - 1 : lo;
  a.x_hi = lo == hi ? hi + 1 : hi;
  a.y_step = round_step(y_max > 0 ? y_max / kYTicks : 1.0 / kYTicks);
  a.y_top = std::max(a.y_step, std::ceil(y_max / a.y_step) * a.y_step);
  return a;
}

std::string grid_and_ticks(const Axes& a) {
  std::string out;
  const int span = static_cast<int>(a.x_hi - a.x_lo);
  const int every = std::max(1, (span + kMaxXTicks - 1) / kMaxXTicks);
  for (int k = 0; k <= span; k += every) {
    const double x = kLeft + k * kPlotWidth / span;
    absl::StrAppendFormat(
        &out,
        "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
        "stroke=\"#e0e0e0\"/>\n<text x=\"%.1f\" y=\"%.1f\" "
        "text-anchor=\"middle\">%s</text>\n",
        x, kTop, x, kTop + kPlotHeight, x, kTop + kPlotHeight + 18,
        short_bytes(std::exp2(a.x_lo + k)));
  }
  for (double y = 0; y <= a.y_top * (1 + 1e-9); y += a.y_step) {
    absl::StrAppendFormat(
        &out,
        "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
        "stroke=\"#e0e0e0\"/>\n<text x=\"%.1f\" y=\"%.1f\" "
        "text-anchor=\"end\">%g</text>\n",
        kLeft, a.py(y), kLeft + kPlotWidth, a.py(y), kLeft - 8, a.py(y) + 4, y);
  }
  return out;
}

std::string frame_and_labels(const PlotLabels& labels) {
  return absl::StrFormat(
      "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
      "fill=\"none\" stroke=\"black\"/>\n"
      "<text x=\"%.1f\" y=\"22\" text-anchor=\"middle\" font-size=\"16\" "
      "font-weight=\"bold\">%s</text>\n"
      "<text x=\"%.1f\" y=\"40\" text-anchor=\"middle\" "
      "font-size=\"10\">%s</text>\n"
      "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>\n"
      "<text x=\"20\" y=\"%.1f\" text-anchor=\"middle\" "
      "transform=\"rotate(-90 20 %.1f)\">%s</text>\n",
      kLeft, kTop, kPlotWidth, kPlotHeight, kWidth / 2, escape(labels.title),
      kWidth / 2, escape(labels.subtitle), kLeft + kPlotWidth / 2, kHeight - 20,
      escape(labels.x_label), kTop + kPlotHeight / 2, kTop + kPlotHeight / 2,
      escape(labels.y_label));
}

std::string series_svg(const PlotSeries& s, const Axes& a, size_t index) {
  const char* colour = kColours[index % std::size(kColours)];
  const char* dash = kDashes[index % std::size(kDashes)];
  std::string points;
  std::string dots;
  for (const PlotPoint& p : s.points) {
    if (p.x <= 0) continue;
    absl::StrAppendFormat(&points, "%s%.1f,%.1f", points.empty() ? "" : " ",
                          a.px(p.x), a.py(p.y));
    absl::StrAppendFormat(&dots,
                          "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"%.1f\" "
                          "fill=\"%s\"/>\n",
                          a.px(p.x), a.py(p.y), kDotRadius, colour);
  }
  const double ly = kTop + 10 + index * kLegendRow;
  const double lx = kLeft + kPlotWidth + 20;
  return absl::StrFormat(
      "<g class=\"series\">\n<polyline points=\"%s\" fill=\"none\" "
      "stroke=\"%s\" stroke-width=\"2\" stroke-dasharray=\"%s\"/>\n%s"
      "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" "
      "stroke-width=\"2\" stroke-dasharray=\"%s\"/>\n"
      "<text x=\"%.1f\" y=\"%.1f\">%s</text>\n</g>\n",
      points, colour, dash, dots, lx, ly, lx + 24, ly, colour, dash, lx + 30,
      ly + 4, escape(s.name));
}

}  // namespace

std::string short_bytes(double bytes) {
  constexpr const char* kUnits[] = {"", "K", "M", "G", "T"};
  constexpr double kKibi = 1024;
  size_t unit = 0;
  while (bytes >= kKibi && unit + 1 < std::size(kUnits)) {
    bytes /= kKibi;
    ++unit;
  }
  return absl::StrFormat("%g%s", bytes, kUnits[unit]);
}

std::string svg_chart(const std::vector<PlotSeries>& series,
                      const PlotLabels& labels) {
  const Axes a = axes_for(series);
  std::string out = absl::StrFormat(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" "
      "height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" font-family=\"sans-serif\" "
      "font-size=\"12\">\n<rect width=\"100%%\" height=\"100%%\" "
      "fill=\"white\"/>\n",
      kWidth, kHeight, kWidth, kHeight);
  absl::StrAppend(&out, grid_and_ticks(a), frame_and_labels(labels));
  for (size_t i = 0; i < series.size(); ++i) {
    absl::StrAppend(&out, series_svg(series[i], a, i));
  }
  absl::StrAppend(&out, "</svg>\n");
  return out;
}

}  // namespace weft::tools::weft_bench
