// `plan`: a header naming the machine the plan is for, then the numbered steps with their
// mark (✓ nothing to do, → run the commands, ✖ cannot be done here, · for information), the
// reasons and the commands; the releases passed over (three by default, all with -v) and the
// sources with -v. Prints the plan; decides nothing.
#include <fmt/format.h>

#include "kb/gpus.hpp"
#include "report/escape.hpp"
#include "report/plan_report.hpp"
#include "util/strings.hpp"

namespace cd {
namespace {

std::string gpu_text(const PlanRequest& rq) {
  if (rq.gpus.empty()) return "no GPU";
  std::vector<std::string> parts;
  for (size_t i = 0; i < rq.gpus.size(); ++i) {
    const GpuTarget& g = rq.gpus[i];
    uint64_t mib = i < rq.gpu_memory_mib.size() ? rq.gpu_memory_mib[i] : 0;
    std::string extra = mib ? fmt::format(", {:.1f} GiB", static_cast<double>(mib) / 1024.0) : "";
    parts.push_back(g.name.empty() ? sm_name(g.sm) + extra : fmt::format("{} ({}{})", shown(g.name), sm_name(g.sm), extra));
  }
  return join(parts, " + ");
}

std::string driver_text(const PlanRequest& rq) {
  if (!rq.has_driver) return "no driver";
  std::string v = rq.driver.empty() ? "driver ?" : "driver " + shown(rq.driver.text);
  return rq.driver_cuda.empty() ? v : fmt::format("{} (CUDA {})", v, rq.driver_cuda.major_minor());
}

std::string mark(const std::string& status, const Style& st) {
  if (status == "ok") return st.paint("✓", Color::green);
  if (status == "do") return st.paint("→", Color::yellow);
  if (status == "blocked") return st.paint("✖", Color::red);
  return st.paint("·", Color::gray);
}

}  // namespace

std::string render_plan_text(const Plan& p, const ReportOptions& opts) {
  const PlanRequest& rq = p.request;
  const Style& st = opts.style;
  std::string os = rq.os == "linux" && rq.distro.host_known ? fmt::format("linux ({})", rq.distro.label) : rq.os;
  std::string out = fmt::format("cuda-doctor plan · for {} · {} · {} · {} {}{}\n\n", rq.purpose, gpu_text(rq), driver_text(rq), os,
                                rq.host_arch, rq.python.empty() ? "" : " · Python " + rq.python);
  int n = 0;
  for (const auto& s : p.steps) {
    // The title names its subject ("driver 580…", "torch 2.11…"): the step id is for --json and -v.
    out += fmt::format("  {} {}  {}\n", mark(s.status, st), ++n, shown(s.title));
    for (const auto& d : s.details) out += fmt::format("       {}\n", shown(d));
    for (const auto& c : s.commands) out += fmt::format("       {} {}\n", c.starts_with("#") ? " " : st.paint("$", Color::bold), shown(c));
  }
  if (!p.skipped.empty() && p.torch.found) {
    size_t limit = opts.verbose ? p.skipped.size() : std::min<size_t>(3, p.skipped.size());
    out += "\n  newer releases passed over:\n";
    for (size_t i = 0; i < limit; ++i) out += fmt::format("    {}\n", shown(p.skipped[i]));
    if (limit < p.skipped.size()) out += fmt::format("    … {} more (-v)\n", p.skipped.size() - limit);
  }
  if (opts.verbose) {
    out += "\n  sources:\n";
    for (const auto& s : p.steps)
      for (const auto& src : s.sources)
        if (!src.empty()) out += fmt::format("    {}: {}\n", s.id, shown(src));
  }
  out += fmt::format("\n{} · nothing was changed: paste the commands{}\n",
                     p.satisfiable ? "plan complete" : st.paint("no build fits", Color::red),
                     opts.verbose ? "" : " · releases passed over and sources: cuda-doctor plan -v");
  return out;
}

std::string render_plan_json(const Plan& p) { return plan_json(p).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n"; }

}  // namespace cd
