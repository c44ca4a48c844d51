#include "binary/verdict.hpp"

#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "util/strings.hpp"

namespace cd {
namespace {

bool same_family_newer(int code, int device, const ArchRules& rules) {
  if (code == device) return true;
  if (auto it = rules.also_runs_on.find(code); it != rules.also_runs_on.end() && it->second.count(device)) return true;
  // Tegra devices have their own ABI: only their own SASS runs there, and theirs nowhere else.
  if (rules.tegra.count(device) || rules.tegra.count(code)) return false;
  return code / 10 == device / 10 && device % 10 >= code % 10;
}

std::string join_names(const std::set<std::string>& names) {
  return join(std::vector<std::string>(names.begin(), names.end()), " ");
}

// Plain-language requirement: "sm_90 SASS (or sm_90a) or compute_≤90 PTX".
std::string needed_for(int sm) {
  return fmt::format("needs SASS sm_{}{} or PTX compute_{} or older", sm / 10 * 10, sm % 10 ? fmt::format("…sm_{}", sm) : "",
                     sm);
}

}  // namespace

const char* verdict_name(Verdict v) {
  switch (v) {
    case Verdict::native: return "native";
    case Verdict::jit: return "jit";
    case Verdict::compression_unsupported: return "compression_unsupported";
    case Verdict::ptx_too_new: return "ptx_too_new";
    case Verdict::no_kernel_image: return "no_kernel_image";
    case Verdict::no_cuda_code: return "no_cuda_code";
  }
  return "no_cuda_code";
}

int verdict_rank(Verdict v) {
  switch (v) {
    case Verdict::no_cuda_code: return 0;
    case Verdict::native: return 1;
    case Verdict::jit: return 2;
    case Verdict::compression_unsupported: return 3;
    case Verdict::ptx_too_new: return 4;
    case Verdict::no_kernel_image: return 5;
  }
  return 0;
}

std::string GpuTarget::label() const {
  std::string sm_text = fmt::format("sm_{}", sm);
  return name.empty() ? sm_text : fmt::format("{} ({})", sm_text, name);
}

bool sass_runs_on(const KernelImage& img, int device, const ArchRules& rules) {
  if (img.kind != "sass") return false;
  if (img.suffix == "a") return img.arch == device;
  return same_family_newer(img.arch, device, rules);  // 'f' SASS follows the same-major rule
}

bool ptx_jits_for(const KernelImage& img, int device, const ArchRules& rules) {
  if (img.kind != "ptx") return false;
  if (img.suffix == "a") return img.arch == device;
  if (img.suffix == "f") return same_family_newer(img.arch, device, rules);
  return device >= img.arch;  // plain PTX JITs for any newer GPU, across majors
}

bool ptx_isa_supported(const KernelImage& img, const DriverTarget& driver, const ArchRules& rules) {
  if (driver.cuda == 0) return true;  // unknown driver: cannot say
  return img.ptx_major * 10 + img.ptx_minor <= max_ptx_isa(rules, driver.cuda);
}

bool compression_supported(const KernelImage& img, const DriverTarget& driver, const ArchRules& rules) {
  const CompressionFloor* floor = compression_floor(rules, img.compression);
  if (!floor) return true;
  if (auto v = Version::parse(driver.version); v && !v->empty() && !floor->min_driver.empty()) {
    // Compare only as many components as were given: "550.54" means the 550.54.x drivers.
    Version f = floor->min_driver;
    if (f.parts.size() > v->parts.size()) f.parts.resize(v->parts.size());
    return *v >= f;
  }
  if (driver.cuda && floor->min_cuda) return driver.cuda >= floor->min_cuda;
  return true;
}

Verdict judge_container(const std::vector<const KernelImage*>& images, const GpuTarget& gpu,
                        const DriverTarget& driver, const ArchRules& rules) {
  bool sass_blocked = false, ptx_too_new = false, ptx_blocked = false;
  for (const KernelImage* img : images)
    if (sass_runs_on(*img, gpu.sm, rules)) {
      if (compression_supported(*img, driver, rules)) return Verdict::native;
      sass_blocked = true;
    }
  for (const KernelImage* img : images)
    if (ptx_jits_for(*img, gpu.sm, rules)) {
      bool isa_ok = ptx_isa_supported(*img, driver, rules), packed_ok = compression_supported(*img, driver, rules);
      if (isa_ok && packed_ok) return Verdict::jit;
      ptx_too_new |= !isa_ok;
      ptx_blocked |= isa_ok && !packed_ok;
    }
  if (sass_blocked || ptx_blocked) return Verdict::compression_unsupported;
  if (ptx_too_new) return Verdict::ptx_too_new;
  return Verdict::no_kernel_image;
}

bin::Enough native_on_all(const std::vector<GpuTarget>& gpus, const DriverTarget& driver, const ArchRules& rules) {
  if (gpus.empty()) return {};
  return [gpus, driver, rules](const std::vector<bin::FatbinEntry>& entries) {
    return std::all_of(gpus.begin(), gpus.end(), [&](const GpuTarget& g) {
      return std::any_of(entries.begin(), entries.end(), [&](const bin::FatbinEntry& e) {
        if (e.kind != bin::EntryKind::sass) return false;
        KernelImage img;
        img.kind = "sass";
        img.arch = e.arch;
        img.suffix = e.suffix ? std::string(1, e.suffix) : "";
        img.compression = bin::compression_name(e.compression);
        return sass_runs_on(img, g.sm, rules) && compression_supported(img, driver, rules);
      });
    });
  };
}

GpuVerdict judge_binary(const BinaryScan& scan, const GpuTarget& gpu, const DriverTarget& driver,
                        const ArchRules& rules) {
  GpuVerdict out;
  out.gpu = gpu.label();
  out.sm = gpu.sm;
  struct Judged {
    const ContainerGroup* group;
    Verdict verdict;
  };
  std::vector<Judged> judged;
  // A kernel table the library dispatches itself (cuFFT .ldata) with SASS for this GPU counts as serving it.
  bool some_serve = std::any_of(scan.dispatch_images.begin(), scan.dispatch_images.end(),
                                [&](const KernelImage& img) { return sass_runs_on(img, gpu.sm, rules); });
  bool dispatch_serves = some_serve;
  for (const auto& g : scan.groups) {
    std::vector<const KernelImage*> imgs;
    for (int i : g.images)
      if (i >= 0 && static_cast<size_t>(i) < scan.images.size() &&
          (scan.images[i].kind == "sass" || scan.images[i].kind == "ptx")) {
        imgs.push_back(&scan.images[i]);
      }
    if (imgs.empty()) continue;  // NVVM IR only (JIT-LTO input): not loaded as a module
    Verdict v = judge_container(imgs, gpu, driver, rules);
    some_serve |= v == Verdict::native || v == Verdict::jit;
    judged.push_back({&g, v});
  }
  // Libraries dispatch per architecture at run time (cuBLASLt: sm_90a-only, sm_100+sm_120-only
  // containers): when some containers serve this GPU, the others are for other GPUs.
  Verdict worst = Verdict::no_cuda_code;
  int loadable = 0;
  std::set<std::string> kernels_failing;
  for (const auto& j : judged) {
    bool fails = verdict_rank(j.verdict) > verdict_rank(Verdict::jit);
    if (fails && some_serve) {
      out.containers_other_arch += j.group->count;
      continue;
    }
    loadable += j.group->count;
    if (verdict_rank(j.verdict) > verdict_rank(worst)) worst = j.verdict;
    if (j.verdict == Verdict::jit) out.containers_jit += j.group->count;
    if (fails) {
      out.containers_failing += j.group->count;
      kernels_failing.insert(j.group->kernels.begin(), j.group->kernels.end());
    }
  }
  if (loadable == 0 && dispatch_serves) worst = Verdict::native;
  out.containers_judged = loadable;
  out.verdict = worst;
  out.kernels_failing.assign(kernels_failing.begin(), kernels_failing.end());

  std::set<std::string> sass, ptx;
  for (const auto& img : scan.images) {
    if (img.kind == "sass") sass.insert(img.name());
    if (img.kind == "ptx") ptx.insert(fmt::format("{} (PTX {}.{})", img.name(), img.ptx_major, img.ptx_minor));
  }
  std::string has = fmt::format("has {}{}", sass.empty() ? "no SASS" : "SASS " + join_names(sass),
                                ptx.empty() ? ", no PTX" : "; PTX " + join(std::vector<std::string>(ptx.begin(), ptx.end()), ", "));
  std::string part = out.containers_failing < loadable ? fmt::format("{} of {} containers", out.containers_failing, loadable)
                                                       : "all containers";
  switch (worst) {
    case Verdict::native:
      out.detail = dispatch_serves && loadable == 0
                       ? fmt::format("SASS for this GPU in the library's own kernel table ({} containers in .ldata)",
                                     scan.dispatch_containers)
                   : out.containers_other_arch
                       ? fmt::format("SASS runs natively ({} containers built only for other GPUs)",
                                     out.containers_other_arch)
                       : "SASS runs natively";
      break;
    case Verdict::jit:
      out.detail = fmt::format("{} of {} containers run only after a PTX JIT compile (first launch slow; cache ~/.nv/ComputeCache)",
                               out.containers_jit, loadable);
      break;
    case Verdict::no_kernel_image:
      out.detail = fmt::format("{}: no kernel image for {} ({}); {}", part, out.gpu, needed_for(gpu.sm), has);
      break;
    case Verdict::ptx_too_new:
      out.detail = fmt::format("{}: only PTX newer than the driver can JIT (driver CUDA {}.{}: PTX ≤ {}.{}); {}", part,
                               driver.cuda / 1000, driver.cuda % 1000 / 10, max_ptx_isa(rules, driver.cuda) / 10,
                               max_ptx_isa(rules, driver.cuda) % 10, has);
      break;
    case Verdict::compression_unsupported:
      out.detail = fmt::format("{}: the matching images are compressed in a format driver {} cannot load", part,
                               driver.version.empty() ? fmt::format("CUDA {}.{}", driver.cuda / 1000, driver.cuda % 1000 / 10)
                                                      : driver.version);
      break;
    case Verdict::no_cuda_code:
      out.detail = "no loadable kernel images";
      break;
  }
  return out;
}

namespace {

KernelImage image_of_arch(const std::string& arch) {
  KernelImage img;
  std::string rest = arch;
  if (rest.starts_with("sm_")) img.kind = "sass", rest = rest.substr(3);
  else if (rest.starts_with("compute_")) img.kind = "ptx", rest = rest.substr(8);
  if (!rest.empty() && (rest.back() == 'a' || rest.back() == 'f')) img.suffix = rest.back(), rest.pop_back();
  img.arch = std::atoi(rest.c_str());
  return img;
}

}  // namespace

Verdict judge_arch_list(const std::vector<std::string>& archs, int sm, const ArchRules& rules) {
  std::vector<KernelImage> imgs;
  for (const auto& a : archs) imgs.push_back(image_of_arch(a));
  std::vector<const KernelImage*> ptrs;
  for (const auto& i : imgs) ptrs.push_back(&i);
  return judge_container(ptrs, GpuTarget{sm, ""}, DriverTarget{}, rules);
}

std::vector<std::vector<GpuVerdict>> judge_all(const std::vector<BinaryScan>& scans, const std::vector<GpuTarget>& gpus,
                                               const DriverTarget& driver, const ArchRules& rules) {
  std::vector<std::vector<GpuVerdict>> out;
  for (const auto& s : scans) {
    auto& row = out.emplace_back();
    for (const auto& gpu : gpus) row.push_back(judge_binary(s, gpu, driver, rules));
  }
  return out;
}

// Not NLOHMANN_DEFINE_TYPE_*: those define inline functions, invisible to the other files that call these.
void to_json(nlohmann::json& j, const GpuVerdict& v) {
  j = {{"gpu", v.gpu},
       {"sm", v.sm},
       {"verdict", v.verdict},
       {"detail", v.detail},
       {"containers_judged", v.containers_judged},
       {"containers_failing", v.containers_failing},
       {"containers_jit", v.containers_jit},
       {"containers_other_arch", v.containers_other_arch},
       {"kernels_failing", v.kernels_failing}};
}

void from_json(const nlohmann::json& j, GpuVerdict& v) {
  GpuVerdict d;
  v.gpu = j.value("gpu", d.gpu);
  v.sm = j.value("sm", d.sm);
  v.verdict = j.value("verdict", d.verdict);
  v.detail = j.value("detail", d.detail);
  v.containers_judged = j.value("containers_judged", d.containers_judged);
  v.containers_failing = j.value("containers_failing", d.containers_failing);
  v.containers_jit = j.value("containers_jit", d.containers_jit);
  v.containers_other_arch = j.value("containers_other_arch", d.containers_other_arch);
  v.kernels_failing = j.value("kernels_failing", d.kernels_failing);
}

}  // namespace cd
