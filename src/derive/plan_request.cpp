// plan's request: flags first, this machine (its model) for what they leave open. A --gpu
// question is about a machine you do not have yet: its driver is --driver's or none, and
// this machine's torch is not judged for it. A Windows driver version (WSL2, Windows) maps to
// its CUDA through Table 3's Windows column, not the Linux branch table.
#include "derive/plan_request.hpp"

#include <cctype>

#include <fmt/format.h>

#include "derive/derive_parts.hpp"
#include "derive/judge_targets.hpp"
#include "kb/drivers.hpp"
#include "util/errors.hpp"

namespace cd {
namespace {

std::string one_of(const std::string& flag, const std::string& value, const std::vector<std::string>& allowed) {
  for (const auto& a : allowed)
    if (value == a) return value;
  std::string list;
  for (const auto& a : allowed) list += (list.empty() ? "" : "|") + a;
  throw UsageError(fmt::format("{} {}: expected {}", flag, value, list));
}

// The newest CUDA whose Table-3 Windows driver is at most `v`; empty when none is published.
Version cuda_for_windows_driver(const DriversKb& dk, const Version& v) {
  Version best;
  for (const auto& r : dk.releases) {
    auto w = Version::parse(r.windows_min);
    if (w && !w->empty() && *w <= v && (best.empty() || r.cuda > best)) best = r.cuda;
  }
  return best;
}

void driver_from_flag(PlanRequest& rq, const std::string& text, const Kb& kb) {
  rq.driver_source = "--driver";
  if (text == "none") return void(rq.has_driver = false);
  DriverTarget d = targets_from_flags({}, text, kb).driver;
  rq.has_driver = true;
  if (!d.version.empty()) rq.driver = Version::parse(d.version).value_or(Version{});
  if (d.cuda) rq.driver_cuda = Version::from_cuda_int(d.cuda);
  if (!rq.driver.empty() && rq.os != "linux") rq.driver_cuda = cuda_for_windows_driver(drivers_kb(kb), rq.driver);
}

void machine_driver(PlanRequest& rq, const Model& m) {
  rq.has_driver = m.driver.found && (!m.driver.version.empty() || !m.driver.cuda.empty());
  rq.driver = m.driver.version;
  rq.driver_cuda = m.driver.cuda;
  rq.driver_source = rq.has_driver ? m.driver.version_source : "none found";
}

void machine_torch(PlanRequest& rq, const Model& m) {
  std::vector<const EnvModel*> order;
  for (const auto& e : m.envs)
    if (e.env->is_default) order.push_back(&e);
  for (const auto& e : m.envs)
    if (!e.env->is_default) order.push_back(&e);
  for (const EnvModel* e : order) {
    if (e->env->torch.version.empty()) continue;
    rq.installed.push_back({e->env->torch.version, e->torch_variant, e->torch_arch_list, e->torch_arch_list_source,
                            e->env->prefix, e->python});
  }
}

// What --for build reads of the machine: CPUs, memory, toolkits, the gcc nvcc would use, TORCH_CUDA_ARCH_LIST.
void machine_build(PlanRequest& rq, const Facts& f) {
  for (const auto& t : f.toolkit.toolkits) rq.toolkits.push_back({t.version, t.root, t.host_gcc_max});
  for (const auto& c : f.toolkit.host_compilers)
    if (c.kind == "gcc" && !c.version.empty()) {
      rq.host_gcc = c.version;
      break;
    }
  if (const std::string* v = f.getenv("TORCH_CUDA_ARCH_LIST")) rq.torch_cuda_arch_list = *v;
}

// --distro ID[-VERSION] as os-release would say it (ubuntu-24.04, rocky-9.4, opensuse-leap-15.6):
// the same row choice as a machine's /etc/os-release; an ID no row covers gets NVIDIA's guide.
DistroModel distro_from_flag(const std::string& text, const Kb& kb) {
  auto is = [&](const char* chars) { return !text.empty() && text.find_first_not_of(chars) == std::string::npos; };
  if (!is("abcdefghijklmnopqrstuvwxyz0123456789._-") || !std::isalpha(static_cast<unsigned char>(text[0])))
    throw UsageError(fmt::format("--distro {}: expected os-release's ID and VERSION_ID, as in ubuntu-24.04, debian-12, rhel-9", text));
  Facts f;
  f.host.os_id = text;
  if (auto dash = text.rfind('-'); dash != std::string::npos && dash + 1 < text.size() && std::isdigit(static_cast<unsigned char>(text[dash + 1]))) {
    f.host.os_id = text.substr(0, dash), f.host.os_version = text.substr(dash + 1);
  }
  return derive_distro(f, kb);
}

std::string default_python(const Model& m) {
  for (const auto& e : m.envs)
    if (e.env->is_default) return Version::parse(e.env->version).value_or(Version{}).major_minor();
  return {};
}

}  // namespace

bool plan_needs_machine(const PlanFlags& f) { return f.gpus.empty(); }

PlanRequest plan_request(const PlanFlags& f, const Model* machine, const Kb& kb) {
  PlanRequest rq;
  rq.purpose = one_of("--for", f.purpose, {"run", "build"});
  if (!f.installer.empty()) rq.installer = one_of("--installer", f.installer, {"pip", "uv", "conda", "pixi"}), rq.installer_given = true;
  rq.torch_pin = parse_torch_pin(f.framework);
  if (!f.python.empty()) {
    auto v = Version::parse(f.python);
    if (!v || v->parts.size() < 2 || v->major() != 3) throw UsageError(fmt::format("--python {}: expected 3.X", f.python));
    rq.python = v->major_minor(), rq.python_source = "--python";
  }
  if (machine) {
    const Facts& facts = machine->facts;
    machine_build(rq, facts);
    rq.os = facts.platform.wsl ? "wsl" : "linux";
    if (!facts.host.arch.empty()) rq.host_arch = facts.host.arch == "arm64" ? "aarch64" : facts.host.arch;
    rq.container = !facts.platform.container.empty();
    rq.distro = machine->distro;
  }
  if (!f.os.empty()) rq.os = one_of("--os", f.os, {"linux", "wsl", "windows"});
  if (!f.arch.empty()) rq.host_arch = one_of("--arch", f.arch, {"x86_64", "aarch64"});
  if (!f.distro.empty()) rq.distro = distro_from_flag(f.distro, kb);
  if (!f.gpus.empty()) {
    rq.gpus = targets_from_flags(f.gpus, "", kb).gpus, rq.gpu_source = "--gpu";
    rq.gpu_memory_mib.assign(rq.gpus.size(), 0);
    rq.driver_source = "none given";
  } else if (machine) {
    rq.gpus = machine->targets, rq.gpu_source = "this machine";
    for (const auto& t : rq.gpus) {
      uint64_t mib = 0;
      for (const auto& g : machine->gpus)
        if (g.sm == t.sm && g.info) mib = g.info->memory_total_mib;
      rq.gpu_memory_mib.push_back(mib);
    }
    if (f.driver.empty()) machine_driver(rq, *machine), machine_torch(rq, *machine);
    if (rq.python.empty()) rq.python = default_python(*machine), rq.python_source = rq.python.empty() ? "" : "the default environment";
  }
  if (!f.driver.empty()) driver_from_flag(rq, f.driver, kb);
  if (f.cpus < 0 || f.memory_gib < 0) throw UsageError("--cpus and --memory take positive numbers");
  if (f.cpus > 0) rq.cpus = f.cpus;
  if (f.memory_gib > 0) rq.memory_mib = static_cast<uint64_t>(f.memory_gib * 1024);
  return rq;
}

}  // namespace cd
