// The default `check` report: one screen. The checklist (derive/checklist.cpp) with a mark
// per item — ✓ nothing wrong, ▲ a warning, ✖ an error, · nothing to judge — then each error
// and warning as its title and first fix command, then the counts and how to see more.
// `check -v` prints the full layers and every finding (check_text.cpp).
#include <algorithm>

#include <fmt/format.h>

#include "derive/checklist.hpp"
#include "kb/gpus.hpp"
#include "report/escape.hpp"
#include "report/report.hpp"
#include "util/strings.hpp"

namespace cd {
namespace {

using Kind = CheckItem::Kind;

struct Mark {
  const char* symbol;
  Color color;
};

Mark mark_of(const CheckItem& item) {
  if (item.state == Severity::error) return {"✖", Color::red};
  if (item.state == Severity::warning) return {"▲", Color::yellow};
  if (item.kind == Kind::no_gpu || item.kind == Kind::no_toolkit) return {"·", Color::gray};
  return {"✓", Color::green};
}

std::string gib(uint64_t mib) { return fmt::format("{:.1f} GiB", static_cast<double>(mib) / 1024.0); }

// What each verdict means, in the words of the kernels line.
const char* verdict_words(Verdict v) {
  switch (v) {
    case Verdict::native: return "native";
    case Verdict::jit: return "PTX JIT only";
    case Verdict::no_kernel_image: return "without a kernel image";
    case Verdict::ptx_too_new: return "PTX too new for the driver";
    case Verdict::compression_unsupported: return "compressed for a newer driver";
    case Verdict::no_cuda_code: return "without CUDA code";
  }
  return "";
}

std::string driver_text(const Model& m) {
  if (!m.driver.found) return "no NVIDIA driver found";
  std::string out = m.driver.version.empty() ? "version unknown" : shown(m.driver.version.text);
  if (!m.driver.cuda.empty())
    out += fmt::format(" · runs CUDA ≤ {} (nvidia-smi's \"CUDA Version\": the driver's limit, not a toolkit)",
                       m.driver.cuda.major_minor());
  return out;
}

std::string gpu_text(const MachineGpu& g) {
  return fmt::format("{} · {} · {}", shown(g.info->name), sm_name(g.sm), gib(g.info->memory_total_mib));
}

std::string toolkit_text(const Toolkit& t) {
  std::string out = fmt::format("{} · {}", t.version.empty() ? "version unknown" : shown(t.version), shown(t.root));
  out += t.selected_by.empty() ? " (not selected)" : " ← " + shown(join(t.selected_by, ", "));
  return out;
}

std::string env_heading(const PythonEnv& py) {
  std::string out = shown(py.prefix.empty() ? py.interpreter : py.prefix);
  if (!py.version.empty()) out += " · Python " + shown(py.version);
  if (py.is_default) out += " · default python3";
  return out;
}

std::string frameworks_text(const CheckItem& item, const PythonEnv& py) {
  std::vector<std::string> parts;
  for (const PythonPackage* p : item.frameworks) {
    // torch's own build string carries its CUDA variant ("2.11.0+cu130"); dist-info may not.
    bool torch = p->name == "torch" && !py.torch.version.empty();
    parts.push_back(shown(p->name + " " + (torch ? py.torch.version : p->version)));
  }
  if (item.other_packages > 0)
    parts.push_back(fmt::format("+{} CUDA package{}", item.other_packages, item.other_packages == 1 ? "" : "s"));
  return join(parts, " · ");
}

std::string kernels_text(const CheckItem::Kernels& k) {
  std::vector<std::string> parts;
  int total = 0;
  for (const auto& [verdict, n] : k.binaries) total += n;
  // Native first: the order a reader scans for "does it run".
  for (Verdict v : {Verdict::native, Verdict::jit, Verdict::no_kernel_image, Verdict::ptx_too_new,
                    Verdict::compression_unsupported})
    if (auto it = k.binaries.find(v); it != k.binaries.end()) parts.push_back(fmt::format("{} {}", it->second, verdict_words(v)));
  return fmt::format("kernels for {}: {} binar{}: {}", shown(k.target->label()), total, total == 1 ? "y" : "ies",
                     join(parts, ", "));
}

struct Screen {
  const Style& st;
  std::string text;
  void item(const CheckItem& it, std::string_view key, const std::string& value) {
    Mark mk = mark_of(it);
    text += fmt::format("  {} {:<9} {}\n", st.paint(mk.symbol, mk.color), key, value);
  }
  void more(const std::string& value) { text += fmt::format("  {:<11} {}\n", "", value); }
};

void render_item(Screen& s, const Model& m, const CheckItem& it) {
  switch (it.kind) {
    case Kind::driver: return s.item(it, "driver", driver_text(m));
    case Kind::gpu: return s.item(it, fmt::format("GPU {}", m.gpus[it.index].index), gpu_text(m.gpus[it.index]));
    case Kind::no_gpu: return s.item(it, "GPU", "none visible");
    case Kind::toolkit: return s.item(it, "toolkit", toolkit_text(m.facts.toolkit.toolkits[it.index]));
    case Kind::no_toolkit:
      return s.item(it, "toolkit", "none found (prebuilt framework wheels bring their own CUDA libraries)");
    case Kind::env:
      s.item(it, "python", env_heading(*m.envs[it.index].env));
      if (!it.frameworks.empty() || it.other_packages) s.more(frameworks_text(it, *m.envs[it.index].env));
      for (const auto& k : it.kernels) s.more(kernels_text(k));
      return;
  }
}

// The first command of a finding's fix (its comment when it has none).
std::string first_fix(const Finding& f) {
  for (const auto& line : f.fix)
    if (!line.starts_with("#")) return "$ " + shown(line);
  return f.fix.empty() ? "" : shown(f.fix.front());
}

void render_finding(Screen& s, const Finding& f) {
  Color c = f.severity == Severity::error ? Color::red : Color::yellow;
  s.text += fmt::format("  {} {}  {}\n", s.st.paint(f.severity == Severity::error ? "✖" : "▲", c),
                        s.st.paint(shown(f.title), Color::bold), s.st.paint(shown(f.id), Color::gray));
  if (std::string fix = first_fix(f); !fix.empty()) s.text += "      " + fix + "\n";
}

std::string header(const Facts& f) {
  std::vector<std::string> parts = {"cuda-doctor"};
  if (!f.host.hostname.empty()) parts.push_back(shown(f.host.hostname));
  if (!f.host.os.empty()) parts.push_back(shown(f.host.os));
  if (!f.platform.container.empty()) parts.push_back(shown(f.platform.container) + " container");
  if (f.platform.wsl) parts.push_back("WSL2");
  if (f.root != "/") parts.push_back("root " + shown(f.root));
  return join(parts, " · ");
}

}  // namespace

std::string render_check_summary(const Model& m, const Checklist& c, const ReportOptions& opts) {
  Screen s{opts.style, {}};
  s.text += s.st.paint(header(m.facts), Color::bold) + "\n\n";
  for (const auto& it : c.items) render_item(s, m, it);
  bool any_env = std::any_of(c.items.begin(), c.items.end(), [](const CheckItem& it) { return it.kind == Kind::env; });
  size_t plain = c.plain_envs.size();
  if (plain > 0)
    s.text += fmt::format("  {} {:<9} {}{} environment{} without CUDA packages\n", s.st.paint("·", Color::gray), "python",
                          plain, any_env ? " more" : " Python", plain == 1 ? "" : "s");
  s.text += "\n";
  for (const Finding* f : c.shown) render_finding(s, *f);
  if (c.not_shown > 0) s.text += fmt::format("  … {} more: cuda-doctor check -v\n", c.not_shown);
  if (c.shown.empty()) s.text += "  " + s.st.paint("✔ no problems found", Color::green) + "\n";
  s.text += "\n";
  std::string counts = fmt::format("{} error{}, {} warning{}, {} info", c.errors, c.errors == 1 ? "" : "s", c.warnings,
                                   c.warnings == 1 ? "" : "s", c.info);
  s.text += counts + " · details: cuda-doctor check -v · one finding: cuda-doctor check --explain ID\n";
  return s.text;
}

}  // namespace cd
