// `watch --plot FILE.svg`: one self-contained SVG (no scripts, fonts or links), per GPU a
// panel over time with utilization and memory used (%, left axis) and the CPU of the job's
// processes on that GPU (cores, right axis); without GPU readings one panel with the job's
// CPU. Long runs are drawn from at most kMaxPoints points per series (every k-th point),
// which keeps the file small; the JSON keeps every sample.
#include <algorithm>
#include <cmath>
#include <optional>

#include <fmt/format.h>

#include "report/escape.hpp"
#include "report/watch_report.hpp"
#include "util/strings.hpp"

namespace cd {
namespace {

constexpr double kWidth = 960, kPanelH = 220, kLeft = 60, kRight = 60, kTop = 50, kPlotH = 150;
constexpr size_t kMaxPoints = 2000;

std::string xml_escape(std::string_view s) {
  std::string out;
  for (char c : shown(std::string(s))) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

struct Axes {
  double x0, y0, w, h, t_max, right_max;
  double x(double t) const { return x0 + (t_max > 0 ? t / t_max : 0) * w; }
  double y_pct(double v) const { return y0 + h - std::clamp(v, 0.0, 100.0) / 100 * h; }
  double y_right(double v) const { return y0 + h - std::clamp(v / right_max, 0.0, 1.0) * h; }
};

// A "nice" step for about `n` ticks over [0, max].
double tick_step(double max, int n) {
  double raw = max / n, mag = std::pow(10, std::floor(std::log10(raw > 0 ? raw : 1)));
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (raw <= m * mag) return m * mag;
  return 10 * mag;
}

void axes(const Axes& a, const std::string& title, std::string& out) {
  out += fmt::format("<g class=\"axes\"><text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"14\" font-weight=\"bold\">{}</text>\n", a.x0, a.y0 - 26,
                     xml_escape(title));
  out += fmt::format("<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" fill=\"none\" stroke=\"#444\"/>\n", a.x0, a.y0, a.w, a.h);
  for (int v = 0; v <= 100; v += 25) {
    double y = a.y_pct(v);
    out += fmt::format("<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"#ddd\"/>", a.x0, y, a.x0 + a.w, y);
    out += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"11\" text-anchor=\"end\">{} %</text>\n", a.x0 - 4, y + 4, v);
  }
  for (int k = 0; k <= 4; ++k) {
    double v = a.right_max * k / 4, y = a.y_right(v);
    out += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"11\" fill=\"#2a9d3f\">{:.2g}</text>\n", a.x0 + a.w + 4, y + 4, v);
  }
  out += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"11\" fill=\"#2a9d3f\" transform=\"rotate(90 {:.1f} {:.1f})\">CPU cores</text>\n",
                     a.x0 + a.w + 40, a.y0 + a.h / 2 - 25, a.x0 + a.w + 40, a.y0 + a.h / 2 - 25);
  double step = tick_step(a.t_max > 0 ? a.t_max : 1, 8);
  for (double t = 0; t <= a.t_max + 1e-9; t += step) {
    double x = a.x(t);
    out += fmt::format("<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"#444\"/>", x, a.y0 + a.h, x, a.y0 + a.h + 4);
    out += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"11\" text-anchor=\"middle\">{:g}</text>\n", x, a.y0 + a.h + 16, t);
  }
  out += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"11\" text-anchor=\"middle\">time (s)</text></g>\n", a.x0 + a.w / 2, a.y0 + a.h + 30);
}

template <class Value>
void series(const WatchModel& m, const Axes& a, const char* name, const char* color, Value value, std::string& out) {
  size_t every = std::max<size_t>(1, (m.series.size() + kMaxPoints - 1) / kMaxPoints);
  std::string pts;
  for (size_t k = 0; k < m.series.size(); k += every) {
    auto y = value(m.series[k]);
    if (!y) continue;
    pts += fmt::format("{:.1f},{:.1f} ", a.x(m.series[k].t - m.series.front().t), *y);
  }
  out += fmt::format("<polyline class=\"series\" data-series=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"1.5\" points=\"{}\"/>\n", name,
                     color, pts);
}

void legend(const Axes& a, std::string& out) {
  const std::pair<const char*, const char*> items[] = {{"GPU utilization %", "#1f63c6"}, {"memory used %", "#e07b00"}, {"CPU cores", "#2a9d3f"}};
  double x = a.x0;  // under the title, never over it
  for (const auto& [label, color] : items) {
    out += fmt::format("<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"14\" height=\"4\" fill=\"{}\"/><text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"11\">{}</text>\n",
                       x, a.y0 - 13, color, x + 18, a.y0 - 8, label);
    x += 140;
  }
}

std::string cut_text(const std::string& s, size_t n) {
  if (s.size() <= n) return s;
  size_t at = n;
  while (at > 0 && (static_cast<unsigned char>(s[at]) & 0xC0) == 0x80) --at;
  return s.substr(0, at) + "…";
}

}  // namespace

std::string render_watch_svg(const WatchModel& m) {
  const WatchFacts& f = *m.facts;
  size_t panels = std::max<size_t>(1, f.gpus.size());
  double t_max = m.duration_s, cpu_max = 1;
  for (const auto& p : m.series) {
    cpu_max = std::max(cpu_max, p.job_cpu_cores);
  }
  cpu_max = std::ceil(cpu_max);
  double height = kPanelH * static_cast<double>(panels) + 30;
  std::string what = f.mode == "command" ? join(f.command, " ") : f.mode == "pid" ? fmt::format("pid {}", f.root_pid) : "all GPUs";
  std::string out = fmt::format(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{:.0f}\" height=\"{:.0f}\" "
      "viewBox=\"0 0 {:.0f} {:.0f}\" font-family=\"sans-serif\">\n<title>cuda-doctor watch: {}</title>\n"
      "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n",
      kWidth, height, kWidth, height, xml_escape(what));
  for (size_t i = 0; i < panels; ++i) {
    Axes a{kLeft, kTop + kPanelH * static_cast<double>(i), kWidth - kLeft - kRight, kPlotH, t_max, cpu_max};
    bool gpu = i < f.gpus.size();
    std::string title = gpu ? fmt::format("GPU {} · {} · {}", f.gpus[i].index, f.gpus[i].name, cut_text(what, 60)) : "no GPU readings · " + cut_text(what, 60);
    out += fmt::format("<g class=\"panel\" id=\"gpu{}\">\n", gpu ? f.gpus[i].index : -1);
    axes(a, title, out);
    legend(a, out);
    if (gpu) {
      series(m, a, "util", "#1f63c6", [&](const WatchPoint& p) { return p.gpu && p.util[i] >= 0 ? std::optional(a.y_pct(p.util[i])) : std::nullopt; }, out);
      series(m, a, "memory", "#e07b00",
             [&](const WatchPoint& p) { return p.gpu && p.mem_percent[i] >= 0 ? std::optional(a.y_pct(p.mem_percent[i])) : std::nullopt; }, out);
      // Which process belongs to which GPU is unknown when NVML listed none of the job's PIDs: the whole job's CPU then.
      series(m, a, "cpu", "#2a9d3f",
             [&](const WatchPoint& p) { return std::optional(a.y_right(m.contexts_known ? p.gpu_cpu_cores[i] : p.job_cpu_cores)); }, out);
    } else {
      series(m, a, "cpu", "#2a9d3f", [&](const WatchPoint& p) { return std::optional(a.y_right(p.job_cpu_cores)); }, out);
    }
    out += "</g>\n";
  }
  out += "</svg>\n";
  return out;
}

}  // namespace cd
