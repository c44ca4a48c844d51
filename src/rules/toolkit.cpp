// Layer 2 rules: which toolkit each selector picks, host compiler vs nvcc, nvcc vs torch.
#include <fmt/format.h>

#include "kb/toolkits.hpp"
#include "derive/derive_parts.hpp"
#include "rules/rules.hpp"
#include "util/strings.hpp"
#include "util/version.hpp"

namespace cd {

namespace {

const Toolkit* selected(const ToolkitFacts& t, const std::string& by) {
  for (const auto& tk : t.toolkits)
    if (std::find(tk.selected_by.begin(), tk.selected_by.end(), by) != tk.selected_by.end()) return &tk;
  return nullptr;
}

const Toolkit* by_root(const ToolkitFacts& t, const std::string& root) {
  for (const auto& tk : t.toolkits)
    if (tk.root == root) return &tk;
  return nullptr;
}

std::string describe(const Toolkit& tk) {
  return fmt::format("{} (CUDA {})", tk.root, tk.version.empty() ? "?" : tk.version);
}

// What a build uses: torch.utils.cpp_extension looks at CUDA_HOME, CUDA_PATH, then nvcc on PATH, then /usr/local/cuda.
const Toolkit* build_toolkit(const ToolkitFacts& t) {
  for (const char* by : {"CUDA_HOME", "CUDA_PATH", "PATH", "/usr/local/cuda"})
    if (const Toolkit* tk = selected(t, by); tk && !tk->nvcc.empty()) return tk;
  return nullptr;
}

// The nvcc a user's command line runs: PATH's, else the build one.
const Toolkit* active_nvcc(const ToolkitFacts& t) {
  const Toolkit* tk = selected(t, "PATH");
  return tk ? tk : build_toolkit(t);
}

std::vector<const PythonEnv*> cuda_torch_envs(const Facts& f) {
  std::vector<const PythonEnv*> out;
  for (const auto& py : f.pythons)
    if (!py.torch.version.empty() && !py.torch.cuda.empty()) out.push_back(&py);
  return out;
}

// The installed toolkit whose major matches torch's CUDA (newest first), if any.
const Toolkit* toolkit_for_cuda(const ToolkitFacts& t, const Version& cuda) {
  const Toolkit* best = nullptr;
  for (const auto& tk : t.toolkits) {
    auto v = Version::parse(tk.version);
    if (!v || tk.nvcc.empty() || v->major() != cuda.major()) continue;
    if (!best || *v > *Version::parse(best->version)) best = &tk;
  }
  return best;
}


// Fix lines that point every selector at `target`.
std::vector<std::string> point_all_at(const Facts& f, const Toolkit& target, const std::vector<const Toolkit*>& others) {
  std::vector<std::string> fix = {fmt::format("export CUDA_HOME={}", target.root),
                                  fmt::format("export PATH={}/bin:$PATH", target.root)};
  const ToolkitFacts& t = f.toolkit;
  if (const std::string* ld = f.getenv("LD_LIBRARY_PATH")) {
    std::vector<std::string> keep;
    for (const auto& dir : split(*ld, ':')) {
      bool other = false;
      for (const Toolkit* o : others)
        other = other || dir == o->root || dir.rfind(o->root + "/", 0) == 0;
      bool link_elsewhere = t.usr_local_cuda != target.root && (dir == "/usr/local/cuda" || dir.rfind("/usr/local/cuda/", 0) == 0);
      if (!other && !link_elsewhere) keep.push_back(dir);
    }
    if (keep.empty()) fix.push_back("unset LD_LIBRARY_PATH");
    else if (join(keep, ":") != *ld) fix.push_back(fmt::format("export LD_LIBRARY_PATH={}", join(keep, ":")));
  }
  if (!t.usr_local_cuda.empty() && t.usr_local_cuda != target.root && target.root.rfind("/usr/local/", 0) == 0) {
    if (!t.alternatives_cuda.empty()) fix.push_back(fmt::format("sudo update-alternatives --set cuda {}", target.root));
    else fix.push_back(fmt::format("sudo ln -sfn {} /usr/local/cuda", target.root));
  }
  fix.push_back("# put the exports in ~/.bashrc (or the job script) so every shell agrees");
  return fix;
}

void paths_disagree(const Facts& f, Findings& out) {
  const ToolkitFacts& t = f.toolkit;
  struct Pick {
    std::string selector;
    const Toolkit* tk;
    std::string source;
  };
  std::vector<Pick> picks;
  if (const Toolkit* tk = selected(t, "PATH")) picks.push_back({"nvcc on PATH", tk, "PATH → " + t.path_nvcc});
  if (!t.cuda_home_var.empty())
    if (const Toolkit* tk = by_root(t, t.cuda_home)) picks.push_back({t.cuda_home_var, tk, "$" + t.cuda_home_var});
  if (const Toolkit* tk = selected(t, "/usr/local/cuda")) picks.push_back({"/usr/local/cuda", tk, "readlink -f /usr/local/cuda"});
  for (const auto& root : t.ld_library_path_toolkits)
    if (const Toolkit* tk = by_root(t, root)) picks.push_back({"LD_LIBRARY_PATH", tk, "$LD_LIBRARY_PATH"});

  std::vector<const Toolkit*> distinct;
  for (const auto& p : picks)
    if (std::find(distinct.begin(), distinct.end(), p.tk) == distinct.end()) distinct.push_back(p.tk);
  if (distinct.size() < 2) return;

  // Point everything at the toolkit matching the framework's CUDA, else at PATH's nvcc.
  const Toolkit* target = picks.front().tk;
  for (const PythonEnv* py : cuda_torch_envs(f))
    if (auto cuda = Version::parse(py->torch.cuda))
      for (const Toolkit* tk : distinct)
        if (auto v = Version::parse(tk->version); v && v->major() == cuda->major()) target = tk;
  std::vector<const Toolkit*> others;
  for (const Toolkit* tk : distinct)
    if (tk != target) others.push_back(tk);

  Finding fi = new_finding(
      "toolkit.paths_disagree", Severity::warning, "CUDA toolkit selection",
      fmt::format("{} different CUDA toolkits are selected by PATH, CUDA_HOME, LD_LIBRARY_PATH and /usr/local/cuda",
                  distinct.size()));
  for (const auto& p : picks) fi.evidence.push_back({fmt::format("{} selects {}", p.selector, describe(*p.tk)), p.source});
  fi.explanation =
      "A build compiles with one toolkit's nvcc and headers but links or loads another's libraries, which gives "
      "version-mismatch errors or undefined symbols; point every selector at the same toolkit.";
  fi.fix = point_all_at(f, *target, others);
  out.push_back(std::move(fi));
}

void multiple(const Facts& f, Findings& out) {
  const auto& tks = f.toolkit.toolkits;
  if (tks.size() < 2) return;
  Finding fi = new_finding("toolkit.multiple", Severity::info, "CUDA toolkits",
                           fmt::format("{} CUDA toolkits are installed", tks.size()));
  for (const auto& tk : tks)
    fi.evidence.push_back({fmt::format("{}{}", describe(tk),
                                       tk.selected_by.empty() ? ", selected by nothing"
                                                              : ", selected by " + join(tk.selected_by, ", ")),
                           tk.version_source.empty() ? tk.root : tk.version_source});
  fi.explanation = "Several toolkits are fine as long as PATH, CUDA_HOME and LD_LIBRARY_PATH agree on the one in use.";
  out.push_back(std::move(fi));
}

// The compiler nvcc runs: CUDAHOSTCXX / NVCC_CCBIN when set, else gcc on PATH.
const HostCompiler* effective_compiler(const ToolkitFacts& t) {
  for (const char* src : {"CUDAHOSTCXX", "NVCC_CCBIN"})
    for (const auto& hc : t.host_compilers)
      if (hc.source == src) return &hc;
  for (const auto& hc : t.host_compilers)
    if (hc.source == "PATH" && hc.kind == "gcc") return &hc;
  return nullptr;
}

void host_compiler(const Model& m, const Kb& kb, Findings& out) {
  const Facts& f = m.facts;
  const Toolkit* tk = active_nvcc(f.toolkit);
  const HostCompiler* hc = effective_compiler(f.toolkit);
  if (!tk || !hc) return;
  auto cuda = Version::parse(tk->version);
  auto have = Version::parse(hc->version);
  if (!cuda || !have) return;
  int max = hc->kind == "clang" ? tk->host_clang_max : tk->host_gcc_max;
  std::string limit_source = tk->host_config;
  if (max == 0)
    if (auto row = toolkit_support(kb, *cuda)) {
      max = hc->kind == "clang" ? row->max_clang : row->max_gcc;
      limit_source = "kb: " + row->source;
    }
  if (max == 0 || have->major() <= max) return;
  Finding fi = new_finding("toolkit.host_compiler_unsupported", Severity::warning,
                           fmt::format("{} {} with nvcc {}", hc->kind, hc->version, tk->version),
                           fmt::format("{} {} is newer than CUDA {} supports ({} ≤ {})", hc->kind, hc->version,
                                       cuda->major_minor(), hc->kind, max));
  fi.evidence = {{fmt::format("host compiler {} {} ({})", hc->path, hc->version, hc->source),
                  !hc->version_from.empty() ? hc->version_from
                  : hc->kind == "clang"     ? hc->path + " -dumpversion"
                                            : hc->path + " -dumpfullversion"},
                 {fmt::format("nvcc {} accepts {} up to {}", tk->version, hc->kind, max), limit_source}};
  fi.explanation = fmt::format(
      "nvcc stops with \"unsupported {} version!\" from crt/host_config.h; running CUDA programs is unaffected, "
      "only compiling CUDA code (extensions, JIT builds) fails.",
      hc->kind == "clang" ? "clang" : "GNU");
  // nvcc 11.x does not read NVCC_CCBIN (checked with Debian's nvcc 11.8.89: it still runs gcc 12
  // and fails); it reads NVCC_PREPEND_FLAGS, so `-ccbin` goes there.
  auto ccbin = [&](const std::string& cxx) {
    return cuda->major() < 12 ? fmt::format("export NVCC_PREPEND_FLAGS='-ccbin {}'", cxx)
                              : fmt::format("export NVCC_CCBIN={}", cxx);
  };
  HostCompilerInstall hci = host_compiler_install(kb, m.distro, hc->kind, max);
  fi.fix = {hci.install};
  if (!hci.cxx.empty()) fi.fix.insert(fi.fix.end(), {ccbin(hci.cxx), "export CUDAHOSTCXX=" + hci.cxx});
  fi.fix.push_back("# or install a newer CUDA toolkit that accepts this compiler");
  out.push_back(std::move(fi));
}

void version_mismatch(const Model& m, const Kb& kb, Findings& out) {
  const Facts& f = m.facts;
  const Toolkit* tk = build_toolkit(f.toolkit);
  if (!tk) return;
  auto have = Version::parse(tk->version);
  if (!have) return;
  for (const PythonEnv* py : cuda_torch_envs(f)) {
    auto want = Version::parse(py->torch.cuda);
    if (!want || (want->major() == have->major() && want->minor() == have->minor())) continue;
    bool major = want->major() != have->major();
    Finding fi = new_finding("toolkit.version_mismatch", major ? Severity::warning : Severity::info,
                             fmt::format("torch {} in {}", py->torch.version, py->prefix),
                             fmt::format("nvcc {} differs from the CUDA torch was built with ({})", have->major_minor(),
                                         want->major_minor()));
    fi.evidence = {{fmt::format("build toolkit {} ({})", describe(*tk), join(tk->selected_by, ", ")),
                    tk->version_source.empty() ? tk->root : tk->version_source},
                   {fmt::format("torch.version.cuda = {}", py->torch.cuda), py->torch.source}};
    fi.explanation =
        major ? "This matters only for building CUDA extensions: torch.utils.cpp_extension refuses with \"The detected "
                "CUDA version mismatches the version that was used to compile PyTorch\"; running torch uses its own "
                "CUDA libraries and is unaffected."
              : "Only the minor version differs: extension builds print a warning and usually work; running torch is "
                "unaffected.";
    if (const Toolkit* match = toolkit_for_cuda(f.toolkit, *want); match && match != tk) {
      fi.fix = {fmt::format("export CUDA_HOME={}", match->root), fmt::format("export PATH={}/bin:$PATH", match->root)};
    } else {
      fi.fix = {"# only needed before building CUDA extensions:", toolkit_install_command(kb, m.distro, *want),
                fmt::format("export CUDA_HOME=/usr/local/cuda-{}", want->major_minor()),
                fmt::format("export PATH=/usr/local/cuda-{}/bin:$PATH", want->major_minor())};
    }
    out.push_back(std::move(fi));
  }
}

// A build needs nvcc when CUDA_HOME is set, TORCH_CUDA_ARCH_LIST asks for one, or a JIT-building package is installed.
void nvcc_missing(const Model& m, const Kb& kb, Findings& out) {
  const Facts& f = m.facts;
  const ToolkitFacts& t = f.toolkit;
  std::vector<Evidence> need;
  bool home_broken = false;
  if (!t.cuda_home_var.empty()) {
    const Toolkit* tk = by_root(t, t.cuda_home);
    if (!tk || tk->nvcc.empty()) {
      home_broken = true;
      need.push_back({fmt::format("{}={} has no bin/nvcc", t.cuda_home_var, t.cuda_home), "$" + t.cuda_home_var});
    }
  }
  bool any_nvcc = std::any_of(t.toolkits.begin(), t.toolkits.end(), [](const Toolkit& tk) { return !tk.nvcc.empty(); });
  if (!any_nvcc && !home_broken) {
    if (const std::string* arch = f.getenv("TORCH_CUDA_ARCH_LIST"))
      need.push_back({"TORCH_CUDA_ARCH_LIST=" + *arch + " (set for building extensions)", "environment"});
    for (const PythonEnv* py : cuda_torch_envs(f))
      for (const auto& p : py->packages)
        if (p.name == "deepspeed")
          need.push_back({fmt::format("deepspeed {} in {} builds its CUDA ops with nvcc at first use", p.version, py->prefix),
                          p.location});
    if (need.empty()) return;
    need.insert(need.begin(), {"no nvcc found (PATH, CUDA_HOME, /usr/local/cuda*, /opt, conda, pip)", "toolkit probe"});
  }
  if (need.empty()) return;
  std::string cuda = "12.8";
  for (const PythonEnv* py : cuda_torch_envs(f)) cuda = py->torch.cuda;
  auto v = Version::parse(cuda).value_or(*Version::parse("12.8"));
  Finding fi = new_finding("toolkit.nvcc_missing", Severity::warning, home_broken ? t.cuda_home_var : "nvcc",
                           home_broken ? fmt::format("{} points at {}, which has no nvcc", t.cuda_home_var, t.cuda_home)
                                       : "a CUDA build is expected but no nvcc is installed");
  fi.evidence = need;
  fi.explanation =
      "Building CUDA extensions (pip install of flash-attn/apex from source, DeepSpeed ops, torch cpp_extension) needs "
      "nvcc from a toolkit matching the framework's CUDA; running prebuilt wheels does not.";
  const Toolkit* match = toolkit_for_cuda(t, v);
  if (match) {
    fi.fix = {fmt::format("export CUDA_HOME={}", match->root), fmt::format("export PATH={}/bin:$PATH", match->root)};
  } else {
    fi.fix = {toolkit_install_command(kb, m.distro, v),
              fmt::format("export CUDA_HOME=/usr/local/cuda-{}", v.major_minor()),
              fmt::format("export PATH=$CUDA_HOME/bin:$PATH")};
  }
  out.push_back(std::move(fi));
}

// An active conda env with a toolkit of its own, while PATH's nvcc is another toolkit: the env's
// programs link its libraries (RPATH $ORIGIN/../lib) and `conda activate` resets CUDA_HOME.
void conda_shadows(const Facts& f, Findings& out) {
  const std::string* prefix = f.getenv("CONDA_PREFIX");
  const Toolkit* active = selected(f.toolkit, "PATH");
  if (!prefix || !active) return;
  for (const auto& tk : f.toolkit.toolkits) {
    if (tk.origin != "conda:" + *prefix || &tk == active) continue;
    Finding fi = new_finding("toolkit.conda_shadows", Severity::warning, "conda env " + *prefix,
                             fmt::format("the active conda env carries its own CUDA {}; it shadows the toolkit at {}",
                                         tk.version.empty() ? "toolkit" : tk.version, active->root));
    fi.evidence = {{fmt::format("CONDA_PREFIX={} holds {}", *prefix, describe(tk)),
                    tk.version_source.empty() ? tk.root : tk.version_source},
                   {fmt::format("nvcc on PATH is {}", describe(*active)), "PATH"}};
    fi.explanation =
        "Programs and extensions built inside the env link the env's CUDA libraries (RPATH $ORIGIN/../lib), and the "
        "next `conda activate` sets the env's variables again, so the switch holds only until then.";
    fi.fix = {"conda deactivate   # then switch again", "# or use the env's own toolkit: cuda-doctor use " + tk.root};
    out.push_back(std::move(fi));
  }
}

}  // namespace

Findings use_rules(const Model& m, const Kb& kb) {
  const Facts& facts = m.facts;
  Findings out;
  for (auto& f : driver_rules(m, kb))
    if ((f.id == "driver.too_old" || f.id == "driver.minor_compat") && f.subject.rfind("CUDA toolkit", 0) == 0)
      out.push_back(std::move(f));
  host_compiler(m, kb, out);
  version_mismatch(m, kb, out);
  conda_shadows(facts, out);
  return out;
}

Findings toolkit_rules(const Model& m, const Kb& kb) {
  const Facts& facts = m.facts;
  Findings out;
  paths_disagree(facts, out);
  nvcc_missing(m, kb, out);
  host_compiler(m, kb, out);
  version_mismatch(m, kb, out);
  multiple(facts, out);
  return out;
}

}  // namespace cd
