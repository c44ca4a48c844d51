// The driver probe's file-based half: kernel module, driver libraries, PCI devices,
// device nodes, process liveness. Works when NVML fails (that is when it matters).
#include <algorithm>
#include <set>

#include "loader/ldconf.hpp"
#include "probe/driver_probe.hpp"
#include "util/strings.hpp"
#include "util/version.hpp"

namespace cd {
namespace {

// Directories the loader searches without configuration, plus where driver packages and
// container runtimes put the user-space driver.
constexpr const char* kDefaultDirs[] = {
    "/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib/aarch64-linux-gnu", "/usr/lib/aarch64-linux-gnu",
    "/lib64", "/usr/lib64", "/lib", "/usr/lib",
    "/usr/lib/x86_64-linux-gnu/nvidia/current",  // Debian's nvidia-driver packages
    "/usr/local/nvidia/lib64", "/usr/local/nvidia/lib",  // NVIDIA container images
    "/usr/lib/wsl/lib",                                  // WSL2
};

void add_library(DriverFacts& d, const Root& root, const std::string& dir, const std::string& via,
                 const std::string& kind, const std::string& file, std::set<std::string>& seen) {
  std::string path = path_join(dir, file);
  std::string real = root.resolve(path).value_or(path);
  if (!seen.insert(real).second) return;
  DriverLibrary lib;
  lib.kind = kind;
  lib.path = path;
  lib.version = library_file_version(file, kind);
  lib.stub = contains(dir + "/", "/stubs/");
  lib.compat = path_basename(dir) == "compat";
  lib.found_via = via;
  if (auto target = root.readlink(path_join(dir, kind + ".so.1")))
    lib.linked = path_basename(*target) == file;
  d.libraries.push_back(lib);
}

}  // namespace

std::vector<LibDir> library_search_dirs(const Root& root, const std::map<std::string, std::string>& env) {
  std::vector<LibDir> all;
  if (auto it = env.find("LD_LIBRARY_PATH"); it != env.end())
    for (const auto& dir : split(it->second, ':'))
      if (!dir.empty()) all.push_back({path_normalize(dir), "LD_LIBRARY_PATH"});
  for (auto& d : read_ld_so_conf(root)) all.push_back({std::move(d.dir), std::move(d.file)});
  for (const char* dir : kDefaultDirs) all.push_back({dir, "default dir"});
  std::vector<LibDir> out;
  std::set<std::string> seen;
  for (auto& d : all)
    if (seen.insert(d.dir).second) out.push_back(std::move(d));
  return out;
}

std::string parse_nvrm_version(const std::string& text) {
  std::string first = text.substr(0, text.find('\n'));
  for (const auto& word : split(first, ' ')) {
    auto v = Version::parse(word);
    if (v && v->parts.size() >= 2 && v->major() >= 100 && word.find_first_not_of("0123456789.") == std::string::npos)
      return word;
  }
  return {};
}

std::string library_file_version(const std::string& file_name, const std::string& stem) {
  std::string prefix = stem + ".so.";
  if (file_name.rfind(prefix, 0) != 0) return {};
  std::string rest = file_name.substr(prefix.size());
  if (rest.empty() || rest.find_first_not_of("0123456789.") != std::string::npos) return {};
  auto v = Version::parse(rest);
  // Soname links (".so.1") and WSL's "libcuda.so.1.1" carry no driver version.
  if (!v || v->parts.size() < 2 || v->major() < 100) return {};
  return rest;
}

void probe_driver_module(DriverFacts& d, const Root& root, std::vector<std::string>* notes) {
  for (const char* file : {"/proc/driver/nvidia/version", "/sys/module/nvidia/version"}) {
    std::string why;
    auto text = root.read(file, 64 * 1024, &why);
    if (!text) {
      // Missing is normal (no driver); a FIFO or device there is not, and is never read.
      if (notes && why.starts_with("not a regular file")) notes->push_back(std::string(file) + ": " + why + ", not read");
      continue;
    }
    d.module_loaded = true;
    std::string v = std::string(file).rfind("/proc", 0) == 0 ? parse_nvrm_version(*text) : std::string(trim(*text));
    if (!v.empty() && d.module_version.empty()) {
      d.module_version = v;
      d.module_version_source = file;
    }
  }
}

void probe_driver_libraries(DriverFacts& d, const Root& root, const std::map<std::string, std::string>& env) {
  std::set<std::string> seen;
  for (const auto& [dir, via] : library_search_dirs(root, env)) {
    for (const char* kind : {"libcuda", "libnvidia-ml"}) {
      for (const auto& host : root.glob(dir, std::string(kind) + ".so*")) {
        std::string file = path_basename(host);
        std::string k(kind);
        bool stub_file = (file == k + ".so" || file == k + ".so.1") && contains(dir + "/", "/stubs/");
        // WSL's driver (from Windows) has no version in its file names: libcuda.so.1.1.
        bool wsl_file = dir == "/usr/lib/wsl/lib" && (file == k + ".so.1.1" || (k == "libnvidia-ml" && file == k + ".so.1"));
        if (stub_file || wsl_file || !library_file_version(file, kind).empty())
          add_library(d, root, dir, via, kind, file, seen);
      }
    }
  }
}

void probe_pci_gpus(DriverFacts& d, const Root& root) {
  const std::string base = "/sys/bus/pci/devices";
  auto devices = root.list(base);
  d.pci_devices_seen = static_cast<int>(devices.size());
  for (const auto& addr : devices) {
    std::string dev = path_join(base, addr);
    auto vendor = root.read(path_join(dev, "vendor"), 64);
    if (!vendor || to_lower(trim(*vendor)) != "0x10de") continue;
    std::string cls = to_lower(trim(root.read(path_join(dev, "class"), 64).value_or("")));
    if (cls.rfind("0x03", 0) != 0) continue;  // display / 3D controllers only (not NVSwitch, audio)
    PciGpu g;
    g.address = to_lower(addr);
    g.device_id = to_lower(trim(root.read(path_join(dev, "device"), 64).value_or("")));
    g.class_id = cls;
    if (auto link = root.readlink(path_join(dev, "driver"))) g.driver = path_basename(*link);
    d.pci_gpus.push_back(g);
  }
}

void probe_device_nodes(DriverFacts& d, const Root& root) {
  for (const auto& name : root.list("/dev"))
    if (name.rfind("nvidia", 0) == 0) d.device_nodes.push_back("/dev/" + name);
}

}  // namespace cd
