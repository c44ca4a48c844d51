// scan's targets: from the command line (--gpu, --driver) or this machine, then written as
// the observations derive() reads — a GPU's compute capability, the driver's version and CUDA.
#include "derive/judge_targets.hpp"

#include <fmt/format.h>

#include "kb/drivers.hpp"
#include "kb/gpus.hpp"
#include "util/errors.hpp"
#include "util/version.hpp"

namespace cd {
namespace {

std::vector<GpuTarget> gpus_from_flags(const std::vector<std::string>& names, const Kb& kb) {
  std::vector<GpuTarget> out;
  for (const auto& n : names) {
    auto q = find_gpu(kb, n);
    if (!q) throw UsageError(fmt::format("--gpu {}: unknown GPU (try sm_89, 8.9, \"RTX 4090\" or H100)", n));
    out.push_back({q->sm, q->name});
  }
  return out;
}

DriverTarget driver_from_flag(const std::string& text, const Kb& kb) {
  auto v = Version::parse(text);
  if (!v || v->empty()) throw UsageError(fmt::format("--driver {}: expected a driver version like 550.54", text));
  if (v->parts.size() == 1 && v->major() >= 1000) return {v->major(), ""};
  if (v->major() < 100) return {v->cuda_int(), ""};
  DriverTarget d{0, text};
  if (auto c = cuda_for_driver(drivers_kb(kb), *v)) d.cuda = c->cuda.cuda_int();
  return d;
}

}  // namespace

JudgeTargets targets_from_flags(const std::vector<std::string>& gpus, const std::string& driver, const Kb& kb) {
  JudgeTargets t;
  if (!gpus.empty()) t.gpus = gpus_from_flags(gpus, kb), t.gpu_source = "--gpu";
  if (!driver.empty()) t.driver = driver_from_flag(driver, kb), t.driver_source = "--driver";
  return t;
}

bool needs_this_machine(const JudgeTargets& t) { return t.gpus.empty(); }

void add_this_machine(JudgeTargets& t, const Model& machine) {
  bool flags = !t.gpus.empty() || !t.driver_source.empty();
  if (t.gpus.empty()) t.gpus = machine.targets, t.gpu_source = "this machine";
  if (flags) return;
  t.driver = machine.driver_target;
  if (t.driver.cuda || !t.driver.version.empty()) t.driver_source = "this machine";
}

Facts facts_for_judging(Facts base, const JudgeTargets& t, std::vector<BinaryScan> binaries) {
  Facts facts = std::move(base);
  facts.driver = DriverFacts{};
  for (const auto& target : t.gpus) {
    GpuInfo info;
    info.name = target.name;
    info.cc_major = target.sm / 10;
    info.cc_minor = target.sm % 10;
    facts.driver.gpus.push_back(info);
  }
  facts.driver.cuda_driver_version = t.driver.cuda;
  facts.driver.nvml_driver_version = t.driver.version;
  facts.binaries = std::move(binaries);
  facts.env.clear();
  return facts;
}

}  // namespace cd
