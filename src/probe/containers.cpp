// The container runtime around the GPUs. Inside a container: the NVIDIA driver files the
// runtime bind-mounted (/proc/self/mountinfo), the cgroup version and, for cgroup v1, the
// device rules (devices.list: what the container may open). On a host: the NVIDIA
// Container Toolkit's programs, docker (a snap or not) and its daemon.json runtimes,
// default runtime and cgroup driver, containerd's config, podman, and CDI specs naming
// nvidia.com/gpu. Files only, bounded reads; the driver child says which device nodes
// could not be opened (DriverFacts::device_open_errors).
#include <nlohmann/json.hpp>

#include "probe/probe.hpp"
#include "util/strings.hpp"

namespace cd {
namespace {

constexpr size_t kMaxMounts = 12;

// mountinfo escapes space, tab, newline and backslash as \040 \011 \012 \134.
std::string unescape_mount(const std::string& s) {
  auto octal = [](char ch) { return ch >= '0' && ch <= '7'; };
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 3 < s.size() && octal(s[i + 1]) && octal(s[i + 2]) && octal(s[i + 3])) {
      out += static_cast<char>((s[i + 1] - '0') * 64 + (s[i + 2] - '0') * 8 + (s[i + 3] - '0'));
      i += 3;
    } else {
      out += s[i];
    }
  }
  return out;
}

bool is_driver_mount(const std::string& mp) {
  std::string base = path_basename(mp);
  return base.rfind("libcuda", 0) == 0 || base.rfind("libnvidia", 0) == 0 || base.rfind("nvidia", 0) == 0 ||
         mp.rfind("/proc/driver/nvidia", 0) == 0 || contains(mp, "nvidia-persistenced");
}

void inside(ContainerRuntimeFacts& c, const Root& root) {
  if (auto mi = root.read("/proc/self/mountinfo", 4u << 20)) {
    for (const auto& line : split(*mi, '\n')) {
      auto w = split(line, ' ');
      if (w.size() < 5) continue;
      std::string mp = unescape_mount(w[4]);
      if (!is_driver_mount(mp)) continue;
      ++c.driver_mounts_total;
      if (c.driver_mounts.size() < kMaxMounts) c.driver_mounts.push_back(mp);
    }
  }
  if (root.is_file("/sys/fs/cgroup/cgroup.controllers")) c.cgroup_version = 2;
  else if (root.is_dir("/sys/fs/cgroup/devices") || root.is_dir("/sys/fs/cgroup/memory")) c.cgroup_version = 1;
  if (auto list = root.read("/sys/fs/cgroup/devices/devices.list", 64 * 1024))
    for (const auto& l : split(*list, '\n'))
      if (!trim(l).empty() && c.cgroup_device_rules.size() < 64) c.cgroup_device_rules.emplace_back(trim(l));
}

void docker_config(ContainerRuntimeFacts& c, const Root& root, const std::string& path) {
  std::string why;
  auto text = root.read(path, 1u << 20, &why);
  if (!text) return;
  c.docker_config = path;
  auto j = nlohmann::json::parse(*text, nullptr, false);
  if (!j.is_object()) {
    c.docker_config_error = "not a JSON object";
    return;
  }
  if (auto r = j.find("runtimes"); r != j.end() && r->is_object())
    for (auto it = r->begin(); it != r->end(); ++it) c.docker_runtimes.push_back(it.key());
  if (auto d = j.find("default-runtime"); d != j.end() && d->is_string()) c.docker_default_runtime = d->get<std::string>();
  if (auto e = j.find("exec-opts"); e != j.end() && e->is_array())
    for (const auto& o : *e)
      if (o.is_string() && o.get<std::string>().rfind("native.cgroupdriver=", 0) == 0)
        c.docker_cgroup_driver = o.get<std::string>().substr(20);
}

void host(ContainerRuntimeFacts& c, const Root& root) {
  for (const char* f : {"/usr/bin/nvidia-ctk", "/usr/bin/nvidia-container-runtime", "/usr/bin/nvidia-container-runtime-hook",
                        "/usr/bin/nvidia-container-cli"})
    if (root.is_file(f)) c.toolkit_files.push_back(f);
  if (auto status = root.read("/var/lib/dpkg/status", 64u << 20)) {
    auto at = status->find("\nPackage: nvidia-container-toolkit\n");
    if (at != std::string::npos) {
      auto end = status->find("\n\n", at + 1);
      std::string stanza = status->substr(at, end == std::string::npos ? std::string::npos : end - at);
      if (contains(stanza, "Status: install ok installed"))
        if (auto v = stanza.find("\nVersion: "); v != std::string::npos)
          c.toolkit_version = stanza.substr(v + 10, stanza.find('\n', v + 10) - v - 10);
    }
  }
  if (root.exists("/snap/bin/docker") || root.is_dir("/snap/docker/current")) {
    c.docker = "/snap/bin/docker";
    c.docker_snap = true;
    docker_config(c, root, "/var/snap/docker/current/config/daemon.json");
  }
  for (const char* d : {"/usr/bin/dockerd", "/usr/sbin/dockerd", "/usr/local/bin/dockerd"})
    if (c.docker.empty() && root.is_file(d)) c.docker = d;
  if (c.docker_config.empty()) docker_config(c, root, "/etc/docker/daemon.json");
  if (auto t = root.read("/etc/containerd/config.toml", 1u << 20)) {
    c.containerd_config = "/etc/containerd/config.toml";
    c.containerd_nvidia = contains(*t, "nvidia-container-runtime");
  }
  c.podman = root.is_file("/usr/bin/podman");
  for (const char* dir : {"/etc/cdi", "/var/run/cdi"})
    for (const auto& name : root.list(dir)) {
      std::string path = path_join(dir, name);
      auto t = root.read(path, 4u << 20);
      if (t && contains(*t, "nvidia.com/gpu")) c.cdi_specs.push_back(path);
    }
}

}  // namespace

void probe_containers(Facts& facts, const ProbeOptions& opts) {
  ContainerRuntimeFacts& c = facts.platform.container_runtime;
  inside(c, opts.root);
  host(c, opts.root);
}

}  // namespace cd
