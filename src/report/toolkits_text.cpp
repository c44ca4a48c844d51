// `toolkits`: every toolkit the layer-2 probe found, one block each — version, root, what
// selects it, origin, where the version came from, components and size on disk, the host
// compilers and architectures its nvcc takes, and whether this driver runs what it builds —
// then the toolkit.* findings. Prints the views; decides nothing.
#include <fmt/format.h>

#include "report/escape.hpp"
#include "report/toolkits_report.hpp"
#include "util/strings.hpp"

namespace cd {
namespace {

std::string size_text(uint64_t bytes) {
  if (bytes == 0) return "";
  if (bytes >= (1ull << 30)) return fmt::format("{:.1f} GiB", static_cast<double>(bytes) / (1ull << 30));
  return fmt::format("{:.0f} MiB", static_cast<double>(bytes) / (1ull << 20));
}

std::string compilers_text(const ToolkitView& v) {
  std::vector<std::string> parts;
  if (v.gcc_max) parts.push_back(fmt::format("gcc ≤ {}", v.gcc_max));
  if (v.clang_max) parts.push_back(fmt::format("clang ≤ {}", v.clang_max));
  return parts.empty() ? "host compilers unknown" : join(parts, ", ");
}

std::string arch_text(const ToolkitView& v) {
  if (!v.sm_min) return "architectures unknown";
  return fmt::format("sm_{}–sm_{}", v.sm_min, v.sm_max);
}

std::string driver_text(const Model& m, const ToolkitView& v) {
  std::string driver = m.driver.version.empty() ? "the driver" : "driver " + m.driver.version.text;
  switch (v.driver) {
    case DriverFit::runs:
      return fmt::format("{} (CUDA ≤ {}) runs what it builds", driver, v.driver_cuda.major_minor());
    case DriverFit::minor_compat:
      return fmt::format("{} (CUDA ≤ {}) runs what it builds through minor-version compatibility only (SASS, no newer PTX)",
                         driver, v.driver_cuda.major_minor());
    case DriverFit::too_old:
      return fmt::format("{} (CUDA ≤ {}) cannot run what it builds{}", driver, v.driver_cuda.major_minor(),
                         v.driver_needed.empty() ? "" : " (needs ≥ " + v.driver_needed.text + ")");
    case DriverFit::unknown: break;
  }
  return v.driver_needed.empty() ? "no driver to judge against"
                                 : fmt::format("no driver to judge against (needs ≥ {})", v.driver_needed.text);
}

void block(const Model& m, const ToolkitView& v, const ReportOptions& opts, std::string& out) {
  const Toolkit& tk = *v.tk;
  const Style& st = opts.style;
  std::string version = tk.version.empty() ? "?" : tk.version;
  std::string sel = tk.selected_by.empty() ? "selected by nothing" : "← " + join(tk.selected_by, ", ");
  out += fmt::format("  {}  {}  {}\n", st.paint(fmt::format("{:<9}", shown(version)), Color::bold), shown(tk.root),
                     st.paint(sel, tk.selected_by.empty() ? Color::gray : Color::green));
  std::string origin = shown(tk.origin);
  if (!tk.version_source.empty()) origin += " · version from " + shown(tk.version_source);
  if (tk.size_bytes) origin += " · " + size_text(tk.size_bytes);
  out += fmt::format("             {}\n", origin);
  std::string comps = tk.components.empty() ? (tk.nvcc.empty() ? "no nvcc" : "nvcc") : join(tk.components, " ");
  if (v.usable || v.gcc_max || v.sm_min)
    out += fmt::format("             {} · {} · {}\n", comps, compilers_text(v), arch_text(v));
  else
    out += fmt::format("             {}\n", comps);
  out += fmt::format("             {}\n", driver_text(m, v));
}

}  // namespace

std::string render_toolkits_text(const Model& m, const std::vector<ToolkitView>& views,
                                 const std::vector<Finding>& findings, const ReportOptions& opts) {
  std::string out;
  if (views.empty()) {
    out += "no CUDA toolkit found (/usr/local/cuda*, /opt, CUDA_HOME, PATH, CUDA_DOCTOR_TOOLKITS, conda, pip)\n";
  } else {
    out += fmt::format("{} CUDA toolkit{}\n\n", views.size(), views.size() == 1 ? "" : "s");
    for (const auto& v : views) block(m, v, opts, out);
  }
  std::vector<Finding> shown_findings;
  for (const auto& f : findings)
    if (opts.verbose > 0 || f.severity >= Severity::warning) shown_findings.push_back(f);
  if (!shown_findings.empty()) out += "\n" + render_findings_text(shown_findings, opts);
  out += "\nswitch this shell: eval \"$(cuda-doctor use VERSION)\" · fish: cuda-doctor use VERSION | source\n";
  return out;
}

std::string render_toolkits_json(const Model& m, const std::vector<ToolkitView>& views, const std::vector<Finding>& findings) {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& v : views) {
    nlohmann::json j = *v.tk;
    j["gcc_max"] = v.gcc_max;
    j["clang_max"] = v.clang_max;
    j["compiler_limit_source"] = v.compiler_limit_source;
    j["sm_min"] = v.sm_min;
    j["sm_max"] = v.sm_max;
    j["arch_source"] = v.arch_source;
    j["driver"] = driver_fit_name(v.driver);
    j["driver_cuda"] = v.driver_cuda.empty() ? "" : v.driver_cuda.major_minor();
    j["driver_needed"] = v.driver_needed.text;
    list.push_back(std::move(j));
  }
  nlohmann::json extra = {{"toolkits", list},
                          {"driver", m.driver.version.text},
                          {"driver_cuda", m.driver.cuda.empty() ? "" : m.driver.cuda.major_minor()},
                          {"host_compilers", m.facts.toolkit.host_compilers}};
  return render_json("toolkits", findings, extra);
}

}  // namespace cd
