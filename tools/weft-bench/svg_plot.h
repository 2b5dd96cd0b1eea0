// A line chart as a self-contained SVG document, written by hand (no
// plotting library): a log2 x axis with power-of-two ticks labelled in
// bytes (1K, 4M, ...), a linear y axis from 0 with round ticks, axis
// labels, a title, one <polyline> per series with a dot per point (dashed
// differently from its neighbours, so lines on top of each other still
// show), and a legend. weft-bench draws bus bandwidth against size with it, one
// series per op and algorithm.
#ifndef WEFT_TOOLS_WEFT_BENCH_SVG_PLOT_H_
#define WEFT_TOOLS_WEFT_BENCH_SVG_PLOT_H_

#include <string>
#include <vector>

namespace weft::tools::weft_bench {

struct PlotPoint {
  double x = 0;  // > 0 (log axis); other points are left out
  double y = 0;  // >= 0
};

struct PlotSeries {
  std::string name;
  std::vector<PlotPoint> points;  // drawn in order
};

struct PlotLabels {
  std::string title;
  std::string subtitle;  // smaller, under the title
  std::string x_label;
  std::string y_label;
};

std::string svg_chart(const std::vector<PlotSeries>& series,
                      const PlotLabels& labels);

// "512", "4K", "64M", "2G": a power-of-two byte count, short.
std::string short_bytes(double bytes);

}  // namespace weft::tools::weft_bench

#endif  // WEFT_TOOLS_WEFT_BENCH_SVG_PLOT_H_
