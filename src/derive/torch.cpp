// Torch wheel variants and arch lists: which variant of a release to install for a driver
// (and a GPU), and what the installed build was compiled for.
#include <fmt/format.h>

#include "derive/derive_parts.hpp"
#include "kb/arch.hpp"
#include "kb/pytorch.hpp"

namespace cd {
namespace {

bool runs_natively(const Kb& kb, const std::string& torch_version, const std::string& variant, int sm) {
  auto wheel = torch_wheel(kb, torch_version, variant);
  return wheel && judge_arch_list(wheel->arch_list, sm, arch_rules(kb)) == Verdict::native;
}

}  // namespace

TorchPick torch_variant_for(const Kb& kb, const std::string& torch_version, const Version& driver_cuda, int sm) {
  auto rel = torch_release(kb, torch_version);
  if (!rel) return {};
  TorchPick best, same_major;
  Version best_v, same_v;
  for (const auto& v : rel->variants) {
    auto cv = cuda_from_tag(v);
    if (!cv || (sm && !runs_natively(kb, torch_version, v, sm))) continue;
    if (driver_cuda.empty() || *cv <= driver_cuda) {
      if (best.variant.empty() || *cv > best_v) best = {v, false}, best_v = *cv;
    } else if (cv->major() == driver_cuda.major() && (same_major.variant.empty() || *cv < same_v)) {
      same_major = {v, true}, same_v = *cv;
    }
  }
  return best.variant.empty() ? same_major : best;
}

ArchList torch_arch_list(const PythonEnv& env, const Kb& kb) {
  const TorchBuild& torch = env.torch;
  if (env.deep.ran && !env.deep.arch_list.empty()) return {env.deep.arch_list, "deep: torch._C._cuda_getArchFlags()"};
  if (torch.version.empty() || torch.cuda.empty()) return {};
  for (const auto& p : env.packages)
    if (p.name == "torch" && p.installer == "conda") return {};
  std::string variant = torch_variant(kb, torch.version, torch.cuda);
  auto wheel = torch_wheel(kb, torch.version, variant);
  if (!wheel) return {};
  return {wheel->arch_list,
          fmt::format("recorded list for torch {} {} wheels (kb: {})", wheel->torch, variant, wheel->arch_source)};
}

}  // namespace cd
