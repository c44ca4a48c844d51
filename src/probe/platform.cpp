// The platform around the driver: container (docker / podman / Kubernetes), WSL, and
// loader search-path entries that swap the driver library for another (toolkit stubs,
// cuda-compat). Records evidence only; rules/platform.cpp and rules/driver.cpp decide.
#include "probe/driver_probe.hpp"
#include "probe/probe.hpp"
#include "util/strings.hpp"

namespace cd {
namespace {

void detect_container(PlatformFacts& p, const ProbeOptions& opts) {
  const Root& root = opts.root;
  auto set = [&](const char* kind, std::string evidence) {
    if (p.container.empty()) {
      p.container = kind;
      p.container_evidence = std::move(evidence);
    }
  };
  // Kubernetes first: its pods are also docker/containerd containers.
  if (opts.getenv("KUBERNETES_SERVICE_HOST")) set("kubernetes", "KUBERNETES_SERVICE_HOST is set");
  std::string cgroup = root.read("/proc/1/cgroup", 64 * 1024).value_or("");
  if (contains(cgroup, "kubepods")) set("kubernetes", "/proc/1/cgroup mentions kubepods");
  if (root.exists("/run/.containerenv")) set("podman", "/run/.containerenv exists");
  if (root.exists("/.dockerenv")) set("docker", "/.dockerenv exists");
  if (contains(cgroup, "libpod")) set("podman", "/proc/1/cgroup mentions libpod");
  if (contains(cgroup, "docker")) set("docker", "/proc/1/cgroup mentions docker");
  if (auto c = opts.getenv("container"); c && !c->empty()) set(c->c_str(), "container=" + *c + " (environment)");
}

void detect_wsl(PlatformFacts& p, const Root& root) {
  std::string version = root.read("/proc/version", 4096).value_or("");
  p.wsl_lib_dir = root.is_dir("/usr/lib/wsl/lib");
  p.dev_dxg = root.exists("/dev/dxg");
  std::string lower = to_lower(version);
  if (contains(lower, "microsoft")) {
    p.wsl = true;
    // WSL2 kernels say "microsoft-standard-WSL2"; WSL1 has no Linux kernel: "Microsoft" with a capital M.
    p.wsl_version = contains(lower, "wsl2") || contains(version, "microsoft-standard") ? 2 : 1;
    p.wsl_evidence = "/proc/version: " + std::string(trim(version.substr(0, version.find(" ("))));
  } else if (p.wsl_lib_dir || p.dev_dxg) {
    p.wsl = true;
    p.wsl_version = 2;
    p.wsl_evidence = p.dev_dxg ? "/dev/dxg exists" : "/usr/lib/wsl/lib exists";
  }
}

// Search-path directories holding a toolkit stub libcuda or a cuda-compat libcuda.
void detect_swapped_driver_dirs(PlatformFacts& p, const ProbeOptions& opts) {
  for (const auto& [dir, via] : library_search_dirs(opts.root, opts.env)) {
    if (via == "default dir") continue;
    std::vector<std::string> files;
    for (const auto& f : opts.root.glob(dir, "libcuda.so*")) files.push_back(path_basename(f));
    if (files.empty()) continue;
    if (contains(dir + "/", "/stubs/")) {
      p.stub_dirs.push_back({dir, via, files});
      p.stub_dirs_on_search_path.push_back(dir);
    } else if (path_basename(dir) == "compat") {
      p.compat_dirs.push_back({dir, via, files});
    }
  }
}

}  // namespace

void probe_platform(Facts& facts, const ProbeOptions& opts) {
  PlatformFacts& p = facts.platform;
  detect_container(p, opts);
  detect_wsl(p, opts.root);
  detect_swapped_driver_dirs(p, opts);
}

}  // namespace cd
