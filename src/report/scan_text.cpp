// `scan` text: every name, path, note and version shown here came from input and goes
// through shown() (issue 12 #7); the JSON keeps them as they are.
#include <fmt/format.h>

#include <map>
#include <set>

#include "report/scan_report.hpp"
#include "util/escape.hpp"
#include "util/root.hpp"
#include "util/strings.hpp"

namespace cd {
namespace {

Color verdict_color(Verdict v) {
  if (v == Verdict::native) return Color::green;
  if (v == Verdict::jit) return Color::yellow;
  if (v == Verdict::no_cuda_code) return Color::gray;
  return Color::red;
}

std::string verdict_text(const GpuVerdict& v) {
  if (v.verdict != Verdict::native && v.verdict != Verdict::no_cuda_code && v.containers_failing < v.containers_judged)
    return fmt::format("{} in {}/{}", verdict_name(v.verdict), v.verdict == Verdict::jit ? v.containers_jit : v.containers_failing,
                       v.containers_judged);
  return verdict_name(v.verdict);
}

const std::vector<GpuVerdict>& verdicts_of(const ScanReport& r, const BinaryScan* b) {
  static const std::vector<GpuVerdict> none;
  size_t i = static_cast<size_t>(b - r.binaries.data());
  return i < r.verdicts.size() ? r.verdicts[i] : none;
}

std::string human_bytes(uint64_t b) {
  if (b >= (1ull << 30)) return fmt::format("{:.1f} GB", static_cast<double>(b) / (1ull << 30));
  if (b >= (1ull << 20)) return fmt::format("{:.1f} MB", static_cast<double>(b) / (1ull << 20));
  return fmt::format("{} kB", (b + 1023) / 1024);
}

// "sm_75 sm_80 …" and "compute_120 (9.0)" lists of a set of images.
std::pair<std::string, std::string> arch_lists(const std::vector<KernelImage>& images, const std::vector<int>* only = nullptr) {
  std::set<std::pair<int, std::string>> sass, ptx;
  for (size_t i = 0; i < images.size(); ++i) {
    if (only && std::find(only->begin(), only->end(), static_cast<int>(i)) == only->end()) continue;
    const KernelImage& img = images[i];
    if (img.kind == "sass") sass.insert({img.arch, img.name()});
    if (img.kind == "ptx") ptx.insert({img.arch, fmt::format("{}({}.{})", img.name(), img.ptx_major, img.ptx_minor)});
  }
  std::vector<std::string> s, p;
  for (const auto& [_, n] : sass) s.push_back(n);
  for (const auto& [_, n] : ptx) p.push_back(n);
  return {s.empty() ? "-" : join(s, " "), p.empty() ? "-" : join(p, " ")};
}

std::string corrupt_text(const BinaryScan& b) {
  return fmt::format("corrupt ({} problem{})", b.problems, b.problems == 1 ? "" : "s");
}

// Display heading for each binary: its package, else its directory.
std::string heading_of(const BinaryScan& b) { return shown(b.package.empty() ? path_dirname(b.path) : b.package); }

}  // namespace

std::string render_scan_text(const ScanReport& r, const std::vector<Finding>& findings, const ReportOptions& opts) {
  const Style& st = opts.style;
  const JudgeTargets& t = r.targets;
  std::string out;
  std::vector<std::string> gpu_names;
  for (const auto& g : t.gpus) gpu_names.push_back(shown(g.label()));
  out += fmt::format("{} {}{}\n", st.paint("GPU", Color::bold),
                     gpu_names.empty() ? "none (pass --gpu sm_89 | 12.0 | \"RTX 4090\" | H100)" : join(gpu_names, ", "),
                     t.gpu_source.empty() || gpu_names.empty() ? "" : fmt::format("  [{}]", t.gpu_source));
  if (t.driver.cuda || !t.driver.version.empty())
    out += fmt::format("{} {}{}{}\n", st.paint("driver", Color::bold), t.driver.version.empty() ? "?" : shown(t.driver.version),
                       t.driver.cuda ? fmt::format(" (CUDA {}.{})", t.driver.cuda / 1000, t.driver.cuda % 1000 / 10) : "",
                       t.driver_source.empty() ? "" : fmt::format("  [{}]", t.driver_source));
  for (const auto& n : r.notes) out += st.paint("note: " + shown(n), Color::yellow) + "\n";

  // Binaries grouped by package (or directory), in path order.
  std::map<std::string, std::vector<const BinaryScan*>> by_heading;
  for (const auto& b : r.binaries) by_heading[heading_of(b)].push_back(&b);
  size_t name_width = 0;
  for (const auto& b : r.binaries) name_width = std::max(name_width, display_width(shown(path_basename(b.path))));
  name_width = std::min<size_t>(name_width, 44);
  for (const auto& [heading, list] : by_heading) {
    out += "\n" + st.paint(heading, Color::bold) + "\n";
    for (const BinaryScan* b : list) {
      std::string name = shown(path_basename(b->path));
      std::string pad(name_width > display_width(name) ? name_width - display_width(name) : 0, ' ');
      if (!b->error.empty()) {
        out += fmt::format("  {}{}  {}\n", name, pad, st.paint(shown(b->error), Color::red));
        continue;
      }
      if (b->containers == 0) {
        // A corrupt file says so, and where (its notes), instead of "no CUDA kernels".
        out += fmt::format("  {}{}  {}\n", name, pad,
                           is_corrupt(*b) ? st.paint(corrupt_text(*b), Color::red) : st.paint("no CUDA kernels", Color::gray));
        for (const auto& n : b->notes) out += "    " + st.paint("note: " + shown(n), Color::yellow) + "\n";
        continue;
      }
      auto [sass, ptx] = arch_lists(b->images);
      std::vector<std::string> verdicts;
      for (const auto& v : verdicts_of(r, b))
        verdicts.push_back(fmt::format("sm_{} {}", v.sm, st.paint(verdict_text(v), verdict_color(v.verdict))));
      out += fmt::format("  {}{}  {:>5} ctr  SASS {}  PTX {}{}\n", name, pad, b->containers, sass, ptx,
                         verdicts.empty() ? "" : "  → " + join(verdicts, ", "));
      // A verdict may rest on the library's own kernel table (cuFFT's .ldata): show what it holds.
      if (b->dispatch_containers > 0) {
        auto [ts, tp] = arch_lists(b->dispatch_images);
        out += fmt::format("  {:{}}  {:>5} ctr in its own kernel table{}  SASS {}  PTX {}\n", "", name_width, b->dispatch_containers,
                           b->dispatch_cut ? " (read in part)" : "", ts, tp);
      }
      if (opts.verbose > 0) {
        out += st.paint(fmt::format("      {}  {}\n", shown(b->path), shown(b->format)), Color::gray);
        if (!b->same_build_as.empty())
          out += st.paint(fmt::format("      not read: the same build (size, GNU build-id) as {}\n", shown(b->same_build_as)),
                          Color::gray);
        for (const auto& g : b->groups) {
          auto [gs, gp] = arch_lists(b->images, &g.images);
          out += st.paint(fmt::format("      {:>5}× SASS {}  PTX {}{}\n", g.count, gs, gp,
                                      g.kernels.empty() ? "" : fmt::format("  ({} kernels)", g.kernels.size())),
                          Color::gray);
        }
      }
      for (const auto& n : b->notes) out += "    " + st.paint("note: " + shown(n), Color::yellow) + "\n";
    }
  }

  // Summary: per GPU, how many binaries get each verdict.
  int containers = 0;
  for (const auto& b : r.binaries) containers += b.containers;
  auto corrupt = std::count_if(r.binaries.begin(), r.binaries.end(), is_corrupt);
  out += fmt::format("\n{} {} binaries with CUDA code, {} containers; {} files ({}) read in {:.2f} s{}\n",
                     st.paint("summary", Color::bold),
                     std::count_if(r.binaries.begin(), r.binaries.end(), [](const BinaryScan& b) { return b.containers > 0; }),
                     containers, r.stats.files_examined, human_bytes(r.stats.bytes), r.seconds,
                     corrupt ? "; " + st.paint(fmt::format("{} corrupt", corrupt), Color::red) : "");
  for (const auto& g : r.targets.gpus) {
    std::map<Verdict, int> count;
    for (const auto& b : r.binaries)
      for (const auto& v : verdicts_of(r, &b))
        if (v.sm == g.sm && v.verdict != Verdict::no_cuda_code) ++count[v.verdict];
    std::vector<std::string> parts;
    for (const auto& [v, n] : count) parts.push_back(st.paint(fmt::format("{} {}", n, verdict_name(v)), verdict_color(v)));
    out += fmt::format("        {}: {}\n", shown(g.label()), parts.empty() ? "nothing to run" : join(parts, ", "));
  }
  bool any = std::any_of(findings.begin(), findings.end(), [](const Finding& f) { return f.severity != Severity::ok; });
  if (any) out += "\n" + render_findings_text(findings, opts) + summary_line(findings) + "\n";
  return out;
}

// The scanned binaries, each with its verdicts (the schema has always nested them there).
nlohmann::json binaries_json(const ScanReport& r) {
  nlohmann::json out = r.binaries;
  for (size_t i = 0; i < out.size(); ++i) out[i]["verdicts"] = verdicts_of(r, &r.binaries[i]);
  return out;
}

std::string render_scan_json(const ScanReport& r, const std::vector<Finding>& findings) {
  nlohmann::json gpus = nlohmann::json::array();
  for (const auto& g : r.targets.gpus) gpus.push_back({{"sm", g.sm}, {"name", g.name}});
  nlohmann::json extra = {
      {"gpus", gpus},
      {"gpu_source", r.targets.gpu_source},
      {"driver", {{"version", r.targets.driver.version}, {"cuda", r.targets.driver.cuda}, {"source", r.targets.driver_source}}},
      {"binaries", binaries_json(r)},
      {"stats", {{"files_examined", r.stats.files_examined}, {"bytes", r.stats.bytes}, {"seconds", r.seconds},
                 {"corrupt", std::count_if(r.binaries.begin(), r.binaries.end(), is_corrupt)},
                 {"walk_errors", r.stats.walk_errors}}},
      {"notes", r.notes}};
  return render_json("scan", findings, extra);
}

}  // namespace cd
