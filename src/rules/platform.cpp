// Platform findings: containers without GPU access or with an image that needs a newer
// driver (NVIDIA_REQUIRE_CUDA), and WSL set-ups that cannot reach the Windows driver.
#include <fmt/format.h>

#include "derive/derive_parts.hpp"
#include "kb/drivers.hpp"
#include "rules/rules.hpp"
#include "util/strings.hpp"
#include "util/version.hpp"

namespace cd {
namespace {

// container.* and wsl.* findings belong to the platform layer, not to their id's prefix.
Finding finding(const char* id, Severity sev, std::string subject, std::string title) {
  return new_finding(id, sev, std::move(subject), std::move(title), "platform");
}

void no_gpu_runtime(const Model& m, Findings& out) {
  const Facts& f = m.facts;
  const PlatformFacts& p = f.platform;
  // Not a container without the host's GPUs (a host without any: driver.missing says it).
  if (!m.platform.container_without_gpus) return;
  Finding x = finding("container.no_gpu_runtime", Severity::error, p.container + " container",
                      "This container was started without GPU access (no /dev/nvidia* devices)");
  x.evidence.push_back({p.container + " container", p.container_evidence});
  x.evidence.push_back({"device nodes: " + (f.driver.device_nodes.empty() ? std::string("none") : join(f.driver.device_nodes, " ")), "/dev"});
  if (const std::string* v = f.getenv("NVIDIA_VISIBLE_DEVICES"))
    x.evidence.push_back({"NVIDIA_VISIBLE_DEVICES=" + *v, "environment"});
  x.explanation = "Containers see GPUs only when the runtime passes the device nodes and driver libraries in "
                  "(NVIDIA Container Toolkit); without that, CUDA reports no device or no driver.";
  if (p.container == "kubernetes") {
    x.fix = {"# request GPUs in the pod spec (needs the NVIDIA device plugin or GPU Operator on the cluster):",
             "#   resources: { limits: { nvidia.com/gpu: 1 } }",
             "kubectl describe node | grep -i nvidia.com/gpu   # does any node offer GPUs?"};
  } else if (p.container == "podman") {
    x.fix = {"sudo nvidia-ctk cdi generate --output=/etc/cdi/nvidia.yaml   # on the host, once",
             "podman run --device nvidia.com/gpu=all IMAGE …"};
  } else {
    x.fix = {"docker run --gpus all IMAGE …",
             "# on the host, once: sudo apt install nvidia-container-toolkit && sudo nvidia-ctk runtime configure --runtime=docker && sudo systemctl restart docker"};
  }
  out.push_back(std::move(x));
}

// One OR-alternative of NVIDIA_REQUIRE_CUDA: "cuda>=12.6" or "brand=tesla,driver>=535,driver<536".
struct Clause {
  std::string text;
  bool satisfied = true;
  bool has_cuda = false;
  Version cuda;  // the cuda>= bound, when present
};

bool compare(const Version& have, const std::string& op, const Version& want) {
  if (op == ">=") return have >= want;
  if (op == ">") return have > want;
  if (op == "<=") return have <= want;
  if (op == "<") return have < want;
  if (op == "=" || op == "==") return have == want;
  return true;
}

// Brands the runtime checks; unknown ones (and no GPU facts) count as satisfied.
bool brand_matches(const std::string& brand, const Facts& f, const DriversKb& dk) {
  auto matches = [&](const GpuInfo& g) -> std::optional<bool> {
    std::string n = to_lower(g.name);
    if (brand == "tesla" || brand == "nvidia") return is_datacenter_gpu(dk, g.name);
    if (brand == "geforce" || brand == "geforcertx") return contains(n, "geforce");
    if (brand == "titan" || brand == "titanrtx") return contains(n, "titan");
    if (brand == "quadro" || brand == "quadrortx" || brand == "nvidiartx") return contains(n, "quadro") || contains(n, "rtx a");
    return std::nullopt;
  };
  if (f.driver.gpus.empty()) return true;
  for (const auto& g : f.driver.gpus) {
    auto m = matches(g);
    if (!m || *m) return true;
  }
  return false;
}

Clause eval_clause(const std::string& text, const Facts& f, const DriverModel& s, const DriversKb& dk) {
  Clause c;
  c.text = text;
  for (const auto& term : split(text, ',')) {
    auto op_at = term.find_first_of("<>=");
    if (op_at == std::string::npos) continue;
    std::string key = to_lower(trim(term.substr(0, op_at)));
    size_t op_end = term.find_first_not_of("<>=", op_at);
    std::string op = term.substr(op_at, op_end - op_at);
    std::string value(trim(term.substr(op_end == std::string::npos ? term.size() : op_end)));
    if (key == "cuda") {
      c.has_cuda = true;
      c.cuda = Version::parse(value).value_or(Version{});
      if (!s.cuda.empty()) c.satisfied &= compare(s.cuda, op, c.cuda);
    } else if (key == "driver") {
      if (!s.version.empty()) c.satisfied &= compare(s.version, op, Version::parse(value).value_or(Version{}));
    } else if (key == "brand") {
      c.satisfied &= brand_matches(to_lower(value), f, dk);
    }
  }
  return c;
}

void driver_below_image(const Model& m, const Kb& kb, Findings& out) {
  const Facts& f = m.facts;
  const std::string* req = f.getenv("NVIDIA_REQUIRE_CUDA");
  if (!req || trim(*req).empty()) return;
  const DriversKb& dk = drivers_kb(kb);
  const DriverModel& s = m.driver;
  if (s.cuda.empty()) return;  // no driver facts: other findings say why
  // Space-separated alternatives are ORed, comma-separated terms ANDed (nvidia-container-toolkit).
  std::vector<Clause> clauses;
  for (const auto& part : split(*req, ' '))
    if (!trim(part).empty()) clauses.push_back(eval_clause(std::string(trim(part)), f, s, dk));
  if (clauses.empty() || std::any_of(clauses.begin(), clauses.end(), [](const Clause& c) { return c.satisfied; })) return;
  Version need;
  for (const auto& c : clauses)
    if (c.has_cuda && c.cuda > need) need = c.cuda;
  Finding x = finding("container.driver_below_image", Severity::error, "container image",
                      fmt::format("The image requires CUDA {} but the host driver supports CUDA {}",
                                  need.empty() ? "?" : need.major_minor(), s.cuda.major_minor()));
  x.evidence.push_back({"NVIDIA_REQUIRE_CUDA=\"" + *req + "\"", "environment (set by the image)"});
  x.evidence.push_back({fmt::format("driver {} supports CUDA <= {}", s.version.empty() ? "?" : s.version.text, s.cuda.major_minor()),
                        s.cuda_source});
  x.explanation = "The image was built for a newer CUDA than the host's driver supports, and none of its driver/brand "
                  "alternatives (forward compatibility) matches this host, so CUDA in it fails with error 35 or 803/804.";
  int branch = need.empty() ? 0 : branch_for_cuda(dk, need);
  if (!branch) branch = dk.default_branch;
  x.fix = {fmt::format("# on the host: upgrade the driver (CUDA {} needs R{} or newer)", need.major_minor(), branch)};
  for (auto& c : driver_install_commands(kb, m.distro, f.host.arch, branch, driver_package(kb, branch, gpu_sms(m.gpus))))
    x.fix.push_back(std::move(c));
  x.fix.push_back(fmt::format("# or use an image built for CUDA <= {} (e.g. a nvidia/cuda:{}.x tag)", s.cuda.major_minor(), s.cuda.major_minor()));
  out.push_back(std::move(x));
}

void wsl_problems(const Facts& f, Findings& out) {
  const PlatformFacts& p = f.platform;
  if (!p.wsl) return;
  auto make = [&](std::string title) {
    Finding x = finding("wsl.driver_problem", Severity::error, "WSL", std::move(title));
    if (!p.wsl_evidence.empty()) x.evidence.push_back({"WSL " + std::to_string(p.wsl_version), p.wsl_evidence});
    return x;
  };
  if (p.wsl_version == 1) {
    Finding x = make("CUDA needs WSL 2; this distribution runs under WSL 1");
    x.explanation = "WSL 1 has no Linux kernel and no GPU paravirtualisation, so CUDA cannot work in it.";
    x.fix = {"# in Windows PowerShell:", "wsl --set-version <distro> 2", "wsl --update"};
    out.push_back(std::move(x));
    return;
  }
  if (!p.wsl_lib_dir) {
    Finding x = make("/usr/lib/wsl/lib is missing: the Windows NVIDIA driver is not exposed to WSL");
    x.evidence.push_back({"no /usr/lib/wsl/lib", "/usr/lib/wsl/lib"});
    x.explanation = "In WSL 2 the CUDA driver comes from the Windows NVIDIA driver, mounted at /usr/lib/wsl/lib; without "
                    "it there is no libcuda.";
    x.fix = {"# in Windows: install the current NVIDIA driver for your GPU (it includes WSL support), then in PowerShell:",
             "wsl --update", "wsl --shutdown"};
    out.push_back(std::move(x));
  }
  std::vector<const DriverLibrary*> linux_libs;
  for (const auto& l : f.driver.libraries)
    if (l.kind == "libcuda" && !l.stub && !l.compat && !l.version.empty() && l.path.rfind("/usr/lib/wsl/", 0) != 0)
      linux_libs.push_back(&l);
  if (!linux_libs.empty()) {
    Finding x = make("A Linux NVIDIA driver is installed inside WSL");
    for (const auto* l : linux_libs) x.evidence.push_back({l->kind + " " + l->version, l->path});
    x.explanation = "Inside WSL 2 the GPU driver must come from Windows (/usr/lib/wsl/lib); a Linux driver package's "
                    "libcuda shadows it and CUDA fails to initialise.";
    x.fix = {"sudo apt remove --purge '^nvidia-driver-.*' '^libnvidia-compute-.*' '^libnvidia-gl-.*'",
             "sudo ldconfig", "# in PowerShell: wsl --shutdown   (then reopen the distribution)"};
    out.push_back(std::move(x));
  }
}

}  // namespace

Findings platform_rules(const Model& m, const Kb& kb) {
  Findings out;
  no_gpu_runtime(m, out);
  driver_below_image(m, kb, out);
  wsl_problems(m.facts, out);
  return out;
}

}  // namespace cd
