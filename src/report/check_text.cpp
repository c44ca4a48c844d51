// The `check` report: the four layers of the stack side by side, then findings.
#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "kb/gpus.hpp"
#include "report/escape.hpp"
#include "report/report.hpp"
#include "util/root.hpp"
#include "util/strings.hpp"
#include "util/version.hpp"

namespace cd {
namespace {

struct Out {
  const Style& st;
  std::string text;
  void heading(std::string_view h) { text += "\n" + st.paint(h, Color::bold) + "\n"; }
  // Every string from input goes through shown() (report/escape.hpp) before painting.
  void row(std::string_view key, std::string_view value, std::string_view source = {}, Color c = Color::none) {
    row_painted(key, st.paint(shown(value), c), source);
  }
  // `value` already escaped (and painted) by the caller.
  void row_painted(std::string_view key, std::string_view value, std::string_view source = {}) {
    text += fmt::format("  {:<22} {}", shown(key), value);
    if (!source.empty()) text += "  " + st.paint(fmt::format("({})", shown(source)), Color::gray);
    text += "\n";
  }
  void line(std::string_view s) { text += fmt::format("  {}\n", shown(s)); }
};

std::string mib_to_gib(uint64_t mib) { return fmt::format("{:.1f} GiB", static_cast<double>(mib) / 1024.0); }

void driver_layer(Out& o, const Model& m) {
  const Facts& f = m.facts;
  const DriverFacts& d = f.driver;
  o.heading("1. Driver and GPUs");
  if (!m.driver.found) {
    o.row("driver", "no NVIDIA driver found", {}, Color::red);
  } else {
    const std::string& drv = m.driver.version.text;
    o.row("driver", drv.empty() ? "unknown" : drv, m.driver.version_source);
    if (!d.module_version.empty() && d.module_version != drv) o.row("kernel module", d.module_version, d.module_version_source);
    for (const auto& lib : d.libraries)
      o.row(lib.kind, fmt::format("{}{}", lib.version, lib.stub ? " (stub)" : ""), lib.path);
    if (!m.driver.cuda.empty())
      o.row("max CUDA (driver)", m.driver.cuda.major_minor(),
            m.driver.cuda_source + "; this is what nvidia-smi calls \"CUDA Version\", not an installed toolkit");
    if (d.cu_init_status > 0) o.row("cuInit", d.cu_init_error, {}, Color::red);
    if (!d.nvml_error.empty()) o.row("NVML", d.nvml_error, {}, Color::yellow);
    if (!d.query_error.empty()) o.row("driver query", d.query_error, {}, Color::red);
  }
  for (const auto& mg : m.gpus) {
    const GpuInfo& g = *mg.info;
    o.row(fmt::format("GPU {}", mg.index), fmt::format("{}  {}  cc {}  {}", g.name, sm_name(mg.sm), cc_name(mg.sm), mib_to_gib(g.memory_total_mib)));
    std::vector<std::string> bits;
    if (!g.pci_bus_id.empty()) bits.push_back(g.pci_bus_id);
    if (g.cuda_index >= 0 && g.nvml_index >= 0 && g.cuda_index != g.nvml_index)
      bits.push_back(fmt::format("nvidia-smi GPU {}", g.nvml_index));
    if (g.pcie_gen_max) bits.push_back(fmt::format("PCIe gen{}/{} x{}/{}", g.pcie_gen_current, g.pcie_gen_max,
                                                   g.pcie_width_current, g.pcie_width_max));
    if (!g.persistence_mode.empty()) bits.push_back("persistence " + g.persistence_mode);
    if (!g.compute_mode.empty()) bits.push_back("compute " + g.compute_mode);
    if (!g.mig_mode.empty()) bits.push_back("MIG " + g.mig_mode);
    if (g.ecc_uncorrected_volatile >= 0) bits.push_back(fmt::format("ECC uncorrected {}", g.ecc_uncorrected_volatile));
    if (!bits.empty()) o.row("", join(bits, ", "));
    if (!g.uuid.empty() && o.text.size() > 0) o.row("", g.uuid);
  }
  if (d.gpus.empty() && !d.pci_gpus.empty())
    for (const auto& p : d.pci_gpus)
      o.row("PCI " + p.address, fmt::format("NVIDIA device {} driver: {}", p.device_id, p.driver.empty() ? "none" : p.driver));
  if (!f.platform.container.empty()) o.row("container", f.platform.container, f.platform.container_evidence);
  if (f.platform.wsl) o.row("WSL2", f.platform.wsl_lib_dir ? "/usr/lib/wsl/lib present" : "no /usr/lib/wsl/lib");
}

void toolkit_layer(Out& o, const Facts& f) {
  const ToolkitFacts& t = f.toolkit;
  o.heading("2. CUDA toolkits");
  if (t.toolkits.empty()) o.row("toolkits", "none found");
  for (const auto& tk : t.toolkits) {
    std::string sel = tk.selected_by.empty() ? "" : "selected by " + join(tk.selected_by, ", ");
    o.row(tk.version.empty() ? "?" : tk.version, tk.root + (sel.empty() ? "" : "  ← " + sel),
          fmt::format("{}{}", tk.version_source, tk.origin.empty() ? "" : ", " + tk.origin));
  }
  // Where each compiler came from matters: nvcc takes gcc/g++ from PATH, CMake takes $CUDAHOSTCXX or $CXX.
  for (const auto& hc : t.host_compilers)
    o.row("host " + hc.kind, hc.version,
          fmt::format("{}, {}", hc.path, hc.source == "PATH" ? hc.kind + " on PATH" : "$" + hc.source));
}

void arch_layer(Out& o, const Model& m) {
  const Facts& f = m.facts;
  o.heading("3. GPU architecture vs kernel images");
  if (m.gpus.empty()) o.line("no GPU visible: nothing to match kernel images against (cuda-doctor scan --gpu sm_XY asks for one)");
  for (const auto& g : m.gpus) {
    // package -> verdict -> number of binaries
    std::map<std::string, std::map<Verdict, int>> per_package;
    for (size_t i = 0; i < f.binaries.size(); ++i)
      for (const auto& v : m.verdicts[i])
        if (v.sm == g.sm && v.verdict != Verdict::no_cuda_code)
          per_package[f.binaries[i].package.empty() ? path_basename(f.binaries[i].path) : f.binaries[i].package][v.verdict]++;
    o.row(fmt::format("GPU {} {}", g.index, sm_name(g.sm)), per_package.empty() ? "no framework binaries with kernel images scanned" : "");
    for (const auto& [pkg, verdicts] : per_package) {
      std::vector<std::string> parts;
      for (const auto& [verdict, n] : verdicts) {
        Color c = verdict == Verdict::native ? Color::green : verdict == Verdict::jit ? Color::yellow : Color::red;
        parts.push_back(o.st.paint(fmt::format("{} ×{}", verdict_name(verdict), n), c));
      }
      o.row_painted("  " + pkg, join(parts, "  "));
    }
  }
  for (const auto& e : m.envs)
    if (!e.env->torch.version.empty() && !e.torch_arch_list.empty())
      o.row("torch " + e.env->torch.version, "built for " + join(e.torch_arch_list, " "), e.torch_arch_list_source);
}

// "nvidia-cudnn-cu13" -> "cudnn-cu13": the wheels' common prefix adds nothing.
std::string short_wheel(const std::string& name) { return name.rfind("nvidia-", 0) == 0 ? name.substr(7) : name; }

void python_env(Out& o, const EnvModel& em) {
  const PythonEnv& py = *em.env;
  std::string how = py.kind.empty() ? py.found_by : py.kind + "; " + py.found_by;
  if (py.is_default) how += "; default python3";
  o.row(py.prefix.empty() ? py.interpreter : py.prefix, "python " + py.version, how);
  if (!py.torch.version.empty())
    o.row("  torch", fmt::format("{}  {}", py.torch.version, py.torch.cuda.empty() ? "CPU-only build" : "CUDA " + py.torch.cuda),
          py.torch.source);
  std::vector<std::string> wheels;
  for (const auto& p : py.packages) {
    if (p.name == "torch") continue;
    if (p.name.rfind("nvidia-", 0) == 0) wheels.push_back(short_wheel(p.name) + " " + p.version);
    else o.row("  " + p.name, p.version);
  }
  for (size_t i = 0; i < wheels.size(); i += 5) {  // five a line keeps it readable
    std::vector<std::string> chunk(wheels.begin() + static_cast<long>(i),
                                   wheels.begin() + static_cast<long>(std::min(i + 5, wheels.size())));
    o.row(i == 0 ? "  nvidia wheels" : "", join(chunk, ", "));
  }
  bool first = true;
  for (const auto& lib : em.main_libraries) {
    std::string target = lib.found ? shown(fmt::format("{} {}", lib.version, lib.realpath)) : o.st.paint("not found", Color::red);
    o.row_painted(first ? "  loads" : "", shown(lib.soname) + " → " + target, lib.via);
    first = false;
  }
  if (py.deep.ran && py.deep.error.empty())
    o.row("  --deep", fmt::format("torch.cuda.is_available() = {}, {} device(s), cuDNN {}, NCCL {}",
                                  py.deep.cuda_available ? "True" : "False", py.deep.device_count, py.deep.cudnn_version,
                                  py.deep.nccl_version));
  else if (py.deep.ran)
    o.row("  --deep", py.deep.error, {}, Color::red);
  if (em.jax.state != JaxState::not_run) {
    const DeepJax& j = py.deep_jax;
    // The backend JAX ended on comes first; when its message is only JAX's guess at the cause
    // (derive/envs.cpp says which), it follows, marked as JAX's words.
    std::string got = em.jax.backend.empty() ? ""
                                             : shown(fmt::format("jax {}: backend {}, {} device(s){}", em.jax.version, em.jax.backend,
                                                                 j.devices.size(), j.devices.empty() ? "" : " (" + j.devices.front() + ")"));
    std::string said;
    if (!em.jax.message.empty())
      said = o.st.paint(shown(em.jax.message_is_jax_guess ? "JAX says: " + em.jax.message : em.jax.message),
                        em.jax.failed() ? Color::red : Color::none);
    o.row_painted("  --deep jax", got.empty() ? said : said.empty() ? got : got + "; " + said);
  }
}

void framework_layer(Out& o, const Model& m) {
  const Facts& f = m.facts;
  o.heading("4. Frameworks");
  if (f.pythons.empty()) o.line("no Python environment found");
  std::vector<std::string> plain;
  for (const auto& py : f.pythons) {
    if (py.packages.empty() && !py.deep.ran) {
      plain.push_back(py.prefix.empty() ? py.interpreter : py.prefix);
      continue;
    }
    python_env(o, m.env(py));
  }
  if (!plain.empty())
    o.row(fmt::format("{} without CUDA pkgs", plain.size()), join(plain, ", "));
}

// -v: where the run's time went, slowest probe first (a slow driver or a cold page
// cache shows here; CUDA_DOCTOR_TRACE has the full timeline).
void probe_times(Out& o, const Facts& f) {
  std::vector<std::pair<std::string, double>> times(f.probe_seconds.begin(), f.probe_seconds.end());
  if (times.empty()) return;
  std::sort(times.begin(), times.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  std::vector<std::string> parts;
  for (const auto& [probe, seconds] : times) parts.push_back(fmt::format("{} {:.3f} s", probe, seconds));
  o.row("probe times", join(parts, ", "), "wall time per probe; they run side by side");
}

}  // namespace

std::string render_check_text(const Model& m, const std::vector<Finding>& findings, const ReportOptions& opts) {
  const Facts& facts = m.facts;
  Out o{opts.style, {}};
  o.text += o.st.paint("cuda-doctor", Color::bold) +
            shown(fmt::format("  {} {} {}", facts.host.hostname, facts.host.os, facts.root != "/" ? "(root " + facts.root + ")" : "")) + "\n";
  driver_layer(o, m);
  toolkit_layer(o, facts);
  arch_layer(o, m);
  framework_layer(o, m);
  if (opts.verbose) {
    for (const auto& n : facts.notes) o.row("note " + n.probe, n.message);
    probe_times(o, facts);
  }
  o.heading("Findings");
  std::string body = render_findings_text(findings, opts);
  o.text += body.empty() ? "  " + o.st.paint("✔ no problems found", Color::green) + "\n" : body;
  o.text += summary_line(findings) + "\n";
  return o.text;
}

namespace {

// A Markdown table cell from input: escaped like all input, and no '|' or '`' of its own
// may end the cell or open a code span.
std::string md_cell(std::string_view s) {
  std::string out;
  for (char c : shown(s)) {
    if (c == '|' || c == '`' || c == '\\' || c == '<') out += '\\';
    out += c;
  }
  return out;
}

}  // namespace

std::string render_check_markdown(const Model& m, const std::vector<Finding>& findings) {
  const Facts& facts = m.facts;
  std::string out = fmt::format("## cuda-doctor check: {} ({})\n\n", md_cell(facts.host.hostname), md_cell(facts.host.os));
  out += "| layer | state |\n|---|---|\n";
  out += fmt::format("| driver | {} |\n", m.driver.version.empty() ? "none" : md_cell(m.driver.version.text));
  if (!m.driver.cuda.empty()) out += fmt::format("| driver max CUDA | {} |\n", m.driver.cuda.major_minor());
  for (const auto& g : m.gpus) out += fmt::format("| GPU {} | {} ({}) |\n", g.index, md_cell(g.info->name), sm_name(g.sm));
  for (const auto& t : facts.toolkit.toolkits)
    out += fmt::format("| toolkit {} | {} |\n", md_cell(t.version), md_cell(t.root));
  for (const auto& py : facts.pythons)
    if (!py.torch.version.empty()) out += fmt::format("| torch | {} ({}) |\n", md_cell(py.torch.version), md_cell(py.interpreter));
  out += "\n" + summary_line(findings) + "\n\n" + render_findings_markdown(findings);
  return out;
}

}  // namespace cd
