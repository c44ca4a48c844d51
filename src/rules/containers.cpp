// Container runtime findings on a host (NVIDIA Container Toolkit missing, runtimes not
// configured, snap docker) and inside a container (device nodes present but not openable:
// the cgroup device rules lost after the host's `systemctl daemon-reload`). Each fix names
// the docker run / compose / Kubernetes stanza and a one-line smoke test.
#include <fmt/format.h>

#include "derive/derive_parts.hpp"
#include "rules/rules.hpp"
#include "util/strings.hpp"

namespace cd {
namespace {

constexpr const char* kSmokeTest = "docker run --rm --gpus all ubuntu nvidia-smi   # smoke test: must list the GPUs";

Finding finding(const char* id, Severity sev, std::string subject, std::string title) {
  return new_finding(id, sev, std::move(subject), std::move(title), "platform");
}

bool host_has_gpu(const Model& m) {
  return m.facts.platform.container.empty() && !m.facts.platform.wsl && (m.facts.driver.module_loaded || !m.facts.driver.gpus.empty());
}

void runtime_evidence(const ContainerRuntimeFacts& c, Finding& x) {
  if (!c.docker.empty()) x.evidence.push_back({(c.docker_snap ? "docker (snap) " : "docker ") + c.docker, c.docker});
  if (!c.docker_config.empty())
    x.evidence.push_back({c.docker_runtimes.empty() ? "no runtimes configured" : "runtimes: " + join(c.docker_runtimes, ", ") +
                              (c.docker_default_runtime.empty() ? "" : " (default " + c.docker_default_runtime + ")"),
                          c.docker_config});
  if (!c.containerd_config.empty())
    x.evidence.push_back({c.containerd_nvidia ? "containerd names nvidia-container-runtime" : "containerd has no nvidia runtime", c.containerd_config});
  x.evidence.push_back({c.cdi_specs.empty() ? "no CDI spec for nvidia.com/gpu" : "CDI specs: " + join(c.cdi_specs, ", "), "/etc/cdi, /var/run/cdi"});
}

void devices_not_openable(const Model& m, Findings& out) {
  const Facts& f = m.facts;
  const auto& errs = f.driver.device_open_errors;
  if (f.platform.container.empty() || !m.platform.gpu_device_nodes || errs.empty()) return;
  bool denied = std::any_of(errs.begin(), errs.end(), [](const std::string& e) { return contains(e, "Operation not permitted"); });
  if (!denied) return;
  const ContainerRuntimeFacts& c = f.platform.container_runtime;
  Finding x = finding("container.no_gpu_runtime", Severity::error, f.platform.container + " container",
                      "The GPU device nodes are in the container but it may not open them (cgroup device rules)");
  for (const auto& e : errs) x.evidence.push_back({e, "open(2) in the driver child"});
  if (!f.driver.nvml_error.empty()) x.evidence.push_back({"nvmlInit: " + f.driver.nvml_error, "nvmlInit_v2"});
  if (c.cgroup_version) x.evidence.push_back({fmt::format("cgroup v{}", c.cgroup_version), c.cgroup_version == 2 ? "/sys/fs/cgroup/cgroup.controllers" : "/sys/fs/cgroup"});
  if (!c.cgroup_device_rules.empty())
    x.evidence.push_back({"device rules: " + join(c.cgroup_device_rules, "; "), "/sys/fs/cgroup/devices/devices.list"});
  x.explanation = "The runtime gave the container /dev/nvidia* and allowed them in its cgroup, but the rules are gone: with "
                  "the systemd cgroup driver, a `systemctl daemon-reload` on the host (a package upgrade runs one) rewrites "
                  "the container's device rules, and NVML then fails with \"Unknown Error\" until the container restarts.";
  x.fix = {"# now: restart the container (on the host): docker restart <container>",
           "# for good, on the host — let systemd know the device nodes (NVIDIA's documented workaround):",
           "sudo nvidia-ctk system create-dev-char-symlinks --create-all",
           "# or give containers GPUs through CDI (docker run --device nvidia.com/gpu=all …, after: sudo nvidia-ctk cdi generate --output=/etc/cdi/nvidia.yaml)",
           "# or, in /etc/docker/daemon.json: \"exec-opts\": [\"native.cgroupdriver=cgroupfs\"]  then: sudo systemctl restart docker"};
  out.push_back(std::move(x));
}

void toolkit_missing(const Model& m, const Kb& kb, Findings& out) {
  const ContainerRuntimeFacts& c = m.facts.platform.container_runtime;
  if (!host_has_gpu(m) || !c.toolkit_files.empty()) return;
  if (c.docker.empty() && !c.podman && c.containerd_config.empty()) return;
  std::string engine = !c.docker.empty() ? "docker" : c.podman ? "podman" : "containerd";
  Finding x = finding("container.toolkit_missing", Severity::warning, "NVIDIA Container Toolkit",
                      engine + " is installed but the NVIDIA Container Toolkit is not: containers cannot get the GPUs");
  Evidence& none = x.evidence.emplace_back();
  none.fact = "no nvidia-ctk, nvidia-container-runtime or nvidia-container-cli";
  none.source = "/usr/bin";
  runtime_evidence(c, x);
  x.explanation = "Containers see GPUs only through the NVIDIA Container Toolkit, which mounts the device nodes and the "
                  "host's driver libraries; without it `docker run --gpus all` fails with 'could not select device driver "
                  "\"\" with capabilities: [[gpu]]'.";
  x.fix = container_toolkit_commands(kb, m.distro);
  x.fix.push_back(engine == "podman" ? "sudo nvidia-ctk cdi generate --output=/etc/cdi/nvidia.yaml"
                                     : "sudo nvidia-ctk runtime configure --runtime=" + engine + " && sudo systemctl restart " + engine);
  x.fix.push_back(engine == "podman" ? "podman run --rm --device nvidia.com/gpu=all ubuntu nvidia-smi   # smoke test" : std::string(kSmokeTest));
  out.push_back(std::move(x));
}

void runtime_not_configured(const Model& m, Findings& out) {
  const ContainerRuntimeFacts& c = m.facts.platform.container_runtime;
  if (!host_has_gpu(m) || c.toolkit_files.empty()) return;
  bool docker_nvidia = std::find(c.docker_runtimes.begin(), c.docker_runtimes.end(), "nvidia") != c.docker_runtimes.end();
  // snap docker reads its own daemon.json, which nvidia-ctk does not write.
  if (c.docker_snap && !docker_nvidia) {
    Finding x = finding("container.runtime_not_configured", Severity::warning, "docker (snap)",
                        "docker is the snap package: the NVIDIA runtime configured in /etc/docker/daemon.json does not apply to it");
    runtime_evidence(c, x);
    x.explanation = "The snap's docker daemon reads /var/snap/docker/current/config/daemon.json and runs confined, so the "
                    "NVIDIA Container Toolkit installed from apt is not used by it: --gpus fails or sees no GPU.";
    x.fix = {"# use Docker's own packages (https://docs.docker.com/engine/install/) instead of the snap:",
             "sudo snap remove docker && sudo apt-get install -y docker-ce docker-ce-cli containerd.io",
             "sudo nvidia-ctk runtime configure --runtime=docker && sudo systemctl restart docker", kSmokeTest};
    out.push_back(std::move(x));
    return;
  }
  bool docker_unconfigured = !c.docker.empty() && !docker_nvidia && c.cdi_specs.empty();
  bool containerd_unconfigured = !c.containerd_config.empty() && !c.containerd_nvidia && c.cdi_specs.empty();
  if (!docker_unconfigured && !containerd_unconfigured) return;
  Finding x = finding("container.runtime_not_configured", Severity::info, "NVIDIA Container Toolkit",
                      docker_unconfigured ? "docker has no nvidia runtime: --gpus works, --runtime=nvidia and compose's runtime: nvidia do not"
                                          : "containerd has no nvidia runtime: Kubernetes pods cannot get GPUs without the GPU Operator");
  x.evidence.push_back({"toolkit: " + join(c.toolkit_files, ", ") + (c.toolkit_version.empty() ? "" : " (" + c.toolkit_version + ")"), "/usr/bin"});
  runtime_evidence(c, x);
  x.explanation = "The toolkit is installed; `docker run --gpus` uses its hook without configuration, but the named runtime "
                  "(docker --runtime=nvidia, compose `runtime: nvidia`, containerd's CRI for Kubernetes) and CDI need it "
                  "registered.";
  x.fix = {docker_unconfigured ? "sudo nvidia-ctk runtime configure --runtime=docker && sudo systemctl restart docker"
                               : "sudo nvidia-ctk runtime configure --runtime=containerd && sudo systemctl restart containerd",
           "sudo nvidia-ctk cdi generate --output=/etc/cdi/nvidia.yaml   # CDI: docker/podman --device nvidia.com/gpu=all",
           kSmokeTest};
  out.push_back(std::move(x));
}

}  // namespace

Findings container_rules(const Model& m, const Kb& kb) {
  Findings out;
  devices_not_openable(m, out);
  toolkit_missing(m, kb, out);
  runtime_not_configured(m, out);
  return out;
}

}  // namespace cd
