// arch.* findings (layer 3): kernel images in scanned binaries vs the GPUs and the
// driver (the model's verdicts, derive/), torch's compiled arch list when no scan data
// exists, and TORCH_CUDA_ARCH_LIST.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "binary/verdict.hpp"
#include "derive/derive_parts.hpp"
#include "kb/arch.hpp"
#include "kb/drivers.hpp"
#include "kb/gpus.hpp"
#include "kb/pytorch.hpp"
#include "rules/rules.hpp"
#include "util/root.hpp"
#include "util/strings.hpp"
#include "util/version.hpp"

namespace cd {
namespace {

constexpr const char* kScanSource = "fatbin scan of the file (.nv_fatbin entry headers)";
constexpr const char* kWhy209 =
    "The driver loads a module only if it has SASS for the GPU (same major, equal or lower minor; 'a' targets only "
    "the exact GPU) or PTX it can JIT-compile; otherwise each kernel in it fails with error 209 \"no kernel image is "
    "available for execution on the device\".";

std::string gpu_evidence(const GpuTarget& g) {
  return fmt::format("GPU {} has compute capability {}", g.name.empty() ? sm_name(g.sm) : g.name, cc_name(g.sm));
}

std::string base_version(const std::string& v) { return v.substr(0, v.find('+')); }

// Exact commands that give a binary kernels for the GPU.
// This distribution's commands for driver branch `branch` (derive/distro.cpp).
void append_driver_install(const Model& m, const Kb& kb, int branch, std::vector<std::string>& fix) {
  for (auto& c : driver_install_commands(kb, m.distro, m.facts.host.arch, branch, driver_package(kb, branch, gpu_sms(m.gpus))))
    fix.push_back(std::move(c));
}

std::vector<std::string> rebuild_fix(const Model& m, const Kb& kb, const BinaryScan& b, const GpuTarget& g) {
  const Facts& facts = m.facts;
  std::vector<std::string> fix;
  const EnvModel* em = m.env_for_path(b.path);
  const PythonEnv* env = em ? em->env : nullptr;
  std::string cc = cc_name(g.sm);
  if (env && b.package == "torch" && !env->torch.version.empty()) {
    std::string variant = torch_variant_for(kb, env->torch.version, m.driver.cuda, g.sm).variant;
    if (!variant.empty()) {
      fix.push_back(fmt::format("# torch {} has a {} wheel built for {}", base_version(env->torch.version), variant, sm_name(g.sm)));
      fix.push_back(fmt::format("{} -m pip install --force-reinstall torch=={} --index-url {}", python_cmd(env),
                                base_version(env->torch.version), torch_index_url(kb, variant)));
      return fix;
    }
    fix.push_back(fmt::format("# no {} wheel of torch {} is known to carry {}: upgrade torch", "official",
                              base_version(env->torch.version), sm_name(g.sm)));
    fix.push_back(fmt::format("{} -m pip install --upgrade torch --index-url {}", python_cmd(env), torch_index_url(kb, torch_defaults(kb).upgrade)));
    return fix;
  }
  if (const SmToolkit* tk = toolkit_for_sm(arch_rules(kb), g.sm); tk && !tk->first_cuda.empty())
    fix.push_back(fmt::format("# building for {} needs CUDA toolkit >= {}{}", sm_name(g.sm), tk->first_cuda.text,
                              tk->last_cuda.empty() ? "" : fmt::format(" and <= {}", tk->last_cuda.text)));
  if (env && !b.package.empty() && !b.package.starts_with("nvidia/")) {
    fix.push_back(fmt::format("# rebuild {} from source for this GPU (PyTorch extensions read TORCH_CUDA_ARCH_LIST)", b.package));
    fix.push_back(fmt::format("TORCH_CUDA_ARCH_LIST=\"{}\" {} -m pip install --force-reinstall --no-build-isolation "
                              "--no-binary {} {}",
                              cc, python_cmd(env), b.package, replace_all(b.package, "_", "-")));
  } else if (b.package.starts_with("nvidia/")) {
    // The wheel that owns the file (libs probe, from its RECORD); nvidia/cu13 holds several.
    std::string wheel;
    for (const auto& c : facts.libs.copies)
      if ((c.path == b.path || c.realpath == b.path) && !c.package.empty()) wheel = c.package;
    if (wheel.empty()) {
      fix.push_back(fmt::format("# find the wheel that ships {}:", path_basename(b.path)));
      fix.push_back(fmt::format("grep -l '{}' {}/../../*.dist-info/RECORD", path_basename(b.path), path_dirname(b.path)));
    } else {
      fix.push_back(fmt::format("{} -m pip install --upgrade --force-reinstall {}", python_cmd(env), wheel));
    }
  } else {
    fix.push_back(fmt::format("# rebuild {} with SASS for the GPU and PTX as a fallback:", path_basename(b.path)));
    fix.push_back(fmt::format("nvcc -gencode arch=compute_{0},code=sm_{0} -gencode arch=compute_{0},code=compute_{0} …", g.sm));
    fix.push_back(fmt::format("# CMake: cmake -DCMAKE_CUDA_ARCHITECTURES={} …", g.sm));
  }
  return fix;
}

// NVIDIA's own libraries (toolkit, nvidia-* wheels, system cuDNN/NCCL) whose every
// container targets a single architecture: small helper modules the library uses
// only on that GPU, so "no image" there is not a failure of the library.
bool nvidia_made(const BinaryScan& b) {
  std::string base = path_basename(b.path);
  return b.package.starts_with("CUDA toolkit") || b.package.starts_with("nvidia/") || base.starts_with("libcu") ||
         base.starts_with("libnccl") || base.starts_with("libnv");
}

bool nvidia_helper_only(const BinaryScan& b) {
  if (!nvidia_made(b) || b.groups.empty()) return false;
  for (const auto& g : b.groups) {
    std::set<int> archs;
    for (int i : g.images)
      if (i >= 0 && static_cast<size_t>(i) < b.images.size()) archs.insert(b.images[i].arch);
    if (archs.size() > 1) return false;
  }
  return true;
}

// A file under an installed package's tests/ or test/ directory (numba ships PTX test inputs
// there); only inside site-packages, where the directory names are the package's own.
bool test_data(const BinaryScan& b) {
  size_t sp = b.path.find("/site-packages/");
  if (sp == std::string::npos) sp = b.path.find("/dist-packages/");
  if (sp == std::string::npos) return false;
  std::string_view inside = std::string_view(b.path).substr(sp + 1);
  return contains(inside, "/tests/") || contains(inside, "/test/");
}

struct Group {
  std::vector<const BinaryScan*> binaries;
  std::vector<GpuVerdict> verdicts;
  bool all_fail = false;  // some binary with every container failing
};

void binary_findings(const Model& m, const Kb& kb, Findings& out) {
  const std::vector<GpuTarget>& gpus = m.targets;
  const DriverTarget& drv = m.driver_target;
  // (verdict, sm, package or path) -> binaries
  std::map<std::tuple<Verdict, int, std::string>, Group> groups;
  for (size_t bi = 0; bi < m.facts.binaries.size(); ++bi)
    for (const GpuVerdict& v : m.verdicts[bi]) {
      const BinaryScan& b = m.facts.binaries[bi];
      if (v.verdict == Verdict::native || v.verdict == Verdict::no_cuda_code) continue;
      Group& grp = groups[{v.verdict, v.sm, b.package.empty() ? b.path : b.package}];
      grp.binaries.push_back(&b);
      grp.all_fail |= v.containers_failing > 0 && v.containers_failing == v.containers_judged && !nvidia_helper_only(b);
      grp.verdicts.push_back(v);
    }
  for (auto& [key, grp] : groups) {
    const auto& [verdict, sm, subject] = key;
    const int wanted_sm = sm;  // lambdas may not capture structured bindings before C++20 in clang 14
    const GpuTarget& g = *std::find_if(gpus.begin(), gpus.end(), [&](const GpuTarget& t) { return t.sm == wanted_sm; });
    const BinaryScan& first = *grp.binaries.front();
    std::string what = grp.binaries.size() == 1 ? path_basename(first.path)
                                                : fmt::format("{} binaries", grp.binaries.size());
    Finding f = new_finding("arch.no_kernel_image", grp.all_fail ? Severity::error : Severity::info, subject, "");
    if (verdict == Verdict::no_kernel_image) {
      f.title = grp.all_fail ? fmt::format("{}: no kernel image for {} in {}", subject, g.label(), what)
                             : fmt::format("{}: {} {} only single-architecture helper modules, none for {}", subject,
                                           what, grp.binaries.size() == 1 ? "has" : "have", g.label());
      f.explanation = grp.all_fail ? kWhy209
                                   : std::string("NVIDIA libraries carry small modules built for one architecture and "
                                                 "use them only there; if a call into this library still fails with "
                                                 "error 209: ") + kWhy209;
    } else if (verdict == Verdict::jit) {
      // Every container JIT-compiled: a slow start worth a warning; a few of many: info.
      bool all_jit = std::all_of(grp.verdicts.begin(), grp.verdicts.end(),
                                 [](const GpuVerdict& v) { return v.containers_jit == v.containers_judged; });
      // Severity policy (docs/findings.md): NVIDIA's own libraries keep a PTX-only helper module
      // next to the SASS that serves the GPU (cuFile), and PTX under a package's tests/ is test data
      // that only its test suite loads: info. A user-facing binary with no SASS for the GPU: warning.
      bool user_facing = std::any_of(grp.binaries.begin(), grp.binaries.end(),
                                     [](const BinaryScan* b) { return !nvidia_made(*b) && !test_data(*b); });
      f = new_finding("arch.jit_only", all_jit && user_facing ? Severity::warning : Severity::info, subject,
                      fmt::format("{}: only PTX serves {} in {} (JIT at first launch)", subject, g.label(), what));
      f.explanation = "No SASS matches this GPU, so the driver JIT-compiles the PTX when a module is first loaded: "
                      "slow start (seconds to minutes), cached in ~/.nv/ComputeCache (CUDA_CACHE_PATH, CUDA_CACHE_MAXSIZE).";
    } else if (verdict == Verdict::ptx_too_new) {
      f = new_finding("arch.ptx_unsupported", Severity::error, subject,
                      fmt::format("{}: PTX in {} is newer than driver CUDA {} can compile", subject, what,
                                  Version::from_cuda_int(drv.cuda).major_minor()));
      f.explanation = "The only image for this GPU is PTX of an ISA the driver does not know: loading fails with "
                      "error 222 (CUDA_ERROR_UNSUPPORTED_PTX_VERSION, \"the provided PTX was compiled with an "
                      "unsupported toolchain\").";
    } else if (verdict == Verdict::compression_unsupported) {
      f = new_finding(
          "arch.compression_unsupported", Severity::error, subject,
          fmt::format("{}: {} holds zstd-compressed kernels driver {} cannot load", subject, what, drv.version));
      f.explanation = "zstd-compressed fatbin images (nvcc -compress-mode=size/balance, CUDA 12.4+) need driver "
                      "550.54.14 or newer; older drivers fail to load the module.";
    }
    f.evidence.push_back({gpu_evidence(g), "driver (NVML / cuDeviceGetAttribute) or --gpu"});
    for (size_t i = 0; i < grp.binaries.size() && i < 6; ++i) {
      const GpuVerdict& v = grp.verdicts[i];
      f.evidence.push_back({fmt::format("{}: {}", grp.binaries[i]->path, v.detail), kScanSource});
      if (!v.kernels_failing.empty())
        f.evidence.push_back({fmt::format("kernels that would fail: {}{}",
                                          join(std::vector<std::string>(v.kernels_failing.begin(),
                                                                        v.kernels_failing.begin() +
                                                                            std::min<size_t>(5, v.kernels_failing.size())),
                                               ", "),
                                          v.kernels_failing.size() > 5 ? fmt::format(" … ({} in all)", v.kernels_failing.size()) : ""),
                              "--kernels: cubin symbol tables / PTX .entry"});
    }
    if (grp.binaries.size() > 6) f.evidence.push_back({fmt::format("… and {} more binaries", grp.binaries.size() - 6), kScanSource});
    if (verdict == Verdict::ptx_too_new) {
      const DriversKb& dk = drivers_kb(kb);
      int need = 0;
      for (const auto& img : first.images)
        if (img.kind == "ptx") need = std::max(need, cuda_for_ptx_isa(arch_rules(kb), img.ptx_major * 10 + img.ptx_minor));
      if (int branch = need ? branch_for_cuda(dk, Version::from_cuda_int(need)) : 0) {
        f.fix.push_back(fmt::format("# install NVIDIA driver branch {} or newer (CUDA {}):", branch, Version::from_cuda_int(need).major_minor()));
        append_driver_install(m, kb, branch, f.fix);
      } else
        f.fix.push_back("# upgrade the NVIDIA driver to one whose CUDA version is at least the toolkit that built it");
      f.fix.push_back("# or use a build with SASS for this GPU / built by an older toolkit:");
    } else if (verdict == Verdict::compression_unsupported) {
      const CompressionFloor* floor = nullptr;  // the newest floor among the binary's compressed images
      for (const auto& img : first.images)
        if (const CompressionFloor* c = compression_floor(arch_rules(kb), img.compression); c && (!floor || c->min_driver > floor->min_driver))
          floor = c;
      if (floor && !floor->min_driver.empty()) {
        f.fix.push_back(fmt::format("# upgrade the NVIDIA driver to {} or newer ({}-compressed kernel images):", floor->min_driver.text, floor->kind));
        append_driver_install(m, kb, floor->min_driver.major(), f.fix);
      }
      f.fix.push_back("# or rebuild without zstd: nvcc … -compress-mode=speed (LZ4) or -compress-mode=none");
    } else if (verdict == Verdict::jit) {
      f.fix.push_back("# keep JIT results between runs (default cache is 256 MiB):");
      f.fix.push_back("export CUDA_CACHE_MAXSIZE=4294967296");
      f.fix.push_back("# or get SASS for the GPU:");
    }
    auto fix = rebuild_fix(m, kb, first, g);
    if (verdict != Verdict::compression_unsupported) f.fix.insert(f.fix.end(), fix.begin(), fix.end());
    out.push_back(std::move(f));
  }
}

bool has_scan_of(const Model& m, const EnvModel& env, const std::string& package) {
  return std::any_of(m.facts.binaries.begin(), m.facts.binaries.end(), [&](const BinaryScan& b) {
    return b.package == package && m.env_for_path(b.path) == &env && b.containers > 0;
  });
}

// torch's compiled arch list vs the GPUs, when its binaries were not scanned.
void framework_findings(const Model& m, const Kb& kb, Findings& out) {
  const ArchRules& rules = arch_rules(kb);
  for (const EnvModel& em : m.envs) {
    const PythonEnv& env = *em.env;
    const TorchBuild& t = env.torch;
    if (t.version.empty() || em.torch_arch_list.empty() || has_scan_of(m, em, "torch")) continue;
    for (const auto& g : m.targets) {
      if (judge_arch_list(em.torch_arch_list, g.sm, rules) != Verdict::no_kernel_image) continue;
      std::string subject = fmt::format("torch {} in {}", t.version, env.prefix);
      Finding f = new_finding("arch.unsupported_by_framework", Severity::error, subject,
                              fmt::format("torch {} was not built for {}", t.version, g.label()));
      f.evidence.push_back({gpu_evidence(g), "driver (NVML / cuDeviceGetAttribute)"});
      f.evidence.push_back({fmt::format("torch arch list: {}", join(em.torch_arch_list, " ")), em.torch_arch_list_source});
      f.explanation = fmt::format("torch warns \"{} is not compatible with the current PyTorch installation\" and its "
                                  "kernels fail with error 209 \"no kernel image is available\".",
                                  sm_name(g.sm));
      std::string variant = torch_variant_for(kb, t.version, m.driver.cuda, g.sm).variant;
      if (!variant.empty())
        f.fix.push_back(fmt::format("{} -m pip install --force-reinstall torch=={} --index-url {}", python_cmd(&env),
                                    base_version(t.version), torch_index_url(kb, variant)));
      else
        f.fix.push_back(fmt::format("{} -m pip install --upgrade torch --index-url {}", python_cmd(&env),
                                    torch_index_url(kb, torch_defaults(kb).upgrade)));
      out.push_back(std::move(f));
    }
  }
}

// "8.0;8.6+PTX 9.0a" -> {"sm_80", "sm_86", "compute_86", "sm_90a"}; named archs are skipped.
std::vector<std::string> parse_arch_list(const std::string& text) {
  std::vector<std::string> out;
  std::string norm = text;
  for (char& c : norm)
    if (c == ';' || c == ',') c = ' ';
  for (const auto& item : split(norm, ' ')) {
    bool ptx = item.ends_with("+PTX");
    std::string cc = ptx ? item.substr(0, item.size() - 4) : item;
    std::string suffix;
    if (!cc.empty() && (cc.back() == 'a' || cc.back() == 'f')) suffix = cc.back(), cc.pop_back();
    auto v = Version::parse(cc);
    if (!v || v->parts.size() != 2) continue;
    std::string num = std::to_string(v->major() * 10 + v->minor());
    out.push_back("sm_" + num + suffix);
    if (ptx) out.push_back("compute_" + num + suffix);
  }
  return out;
}

void arch_list_findings(const Model& m, const Kb& kb, Findings& out) {
  const std::vector<GpuTarget>& gpus = m.targets;
  const std::string* list = m.facts.getenv("TORCH_CUDA_ARCH_LIST");
  if (!list || gpus.empty()) return;
  std::vector<std::string> archs = parse_arch_list(*list);
  if (archs.empty()) return;
  std::vector<std::string> missing, wanted;
  for (const auto& g : gpus) {
    wanted.push_back(cc_name(g.sm));
    if (judge_arch_list(archs, g.sm, arch_rules(kb)) == Verdict::no_kernel_image) missing.push_back(g.label());
  }
  if (missing.empty()) return;
  Finding f = new_finding("arch.arch_list_mismatch", Severity::warning, "TORCH_CUDA_ARCH_LIST",
                          fmt::format("TORCH_CUDA_ARCH_LIST=\"{}\" does not cover {}", *list, join(missing, ", ")));
  f.evidence.push_back({fmt::format("TORCH_CUDA_ARCH_LIST={}", *list), "environment"});
  for (const auto& g : gpus) f.evidence.push_back({gpu_evidence(g), "driver (NVML / cuDeviceGetAttribute)"});
  f.explanation = "PyTorch extensions (torch.utils.cpp_extension, flash-attn, xformers, apex… built from source) compile "
                  "only for these architectures, so what gets built now fails on this machine with error 209.";
  f.fix.push_back(fmt::format("export TORCH_CUDA_ARCH_LIST=\"{}\"", join(wanted, ";")));
  f.fix.push_back("# then rebuild the extensions built with the old value (pip install --force-reinstall --no-build-isolation …)");
  out.push_back(std::move(f));
}

}  // namespace

Findings arch_rules(const Model& m, const Kb& kb) {
  Findings out;
  if (m.targets.empty()) return out;  // nothing to judge against (driver.* findings say why)
  binary_findings(m, kb, out);
  framework_findings(m, kb, out);
  arch_list_findings(m, kb, out);
  return out;
}

}  // namespace cd
