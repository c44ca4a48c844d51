// Driver forensics: the version of the driver libraries the loader uses and the package
// change that installed it (who and when, from the package managers' logs); the driver
// packages installed now (to hold them); whether the running and the newest installed
// kernel have an NVIDIA module; nouveau's blacklisting; and, when the module is not loaded
// although the driver is installed, the reason the files show (module_blocker).
#include <algorithm>
#include <cctype>
#include <map>
#include <tuple>

#include "derive/derive_parts.hpp"

namespace cd {
namespace {

// The driver version of the libcuda / libnvidia-ml the loader picks: the files the soname
// links point at, else any versioned file.
std::string loader_library_version(const DriverFacts& d) {
  auto usable = [](const DriverLibrary& l) { return !l.stub && !l.compat && !l.version.empty(); };
  for (const auto& l : d.libraries)
    if (usable(l) && l.linked) return l.version;
  for (const auto& l : d.libraries)
    if (usable(l)) return l.version;
  return {};
}

std::string upstream(const std::string& v) {
  std::string s = v.substr(v.find(':') == std::string::npos ? 0 : v.find(':') + 1);
  return s.substr(0, s.find('-'));
}

// Libraries first: the package that carries libcuda / NVML names the change best.
int library_rank(const std::string& pkg) {
  for (const char* p : {"libnvidia-compute", "libcuda", "nvidia-driver-cuda-libs", "libnvidia-ml"})
    if (pkg.find(p) != std::string::npos) return 0;
  return 1;
}

void library_change(const Facts& f, PlatformModel& p) {
  const auto& events = f.platform.driver_install.package_events;
  // Every record that installed library_version tells of the same change; the best names
  // the library package, both versions and who did it (apt's history over dpkg.log), and is newest.
  auto key = [](const PackageEvent& e) {
    return std::make_tuple(library_rank(e.package), e.from_version.empty(), e.by.empty());
  };
  const PackageEvent* best = nullptr;
  for (const auto& e : events) {
    if (p.library_version.empty() || upstream(e.to_version) != p.library_version) continue;
    if (e.action == "remove" || e.action == "purge") continue;
    if (!best || key(e) < key(*best) || (key(e) == key(*best) && e.when >= best->when)) best = &e;
  }
  p.library_change = best;
  if (!best) return;
  p.library_change_by = best->by;
  // dpkg.log does not say who: a history.log or unattended-upgrades record of the same
  // package within the same ten minutes does.
  for (const auto& e : events)
    if (p.library_change_by.empty() && !e.by.empty() && e.package == best->package &&
        e.when.substr(0, 15) == best->when.substr(0, 15))
      p.library_change_by = e.by;
}

// Packages whose last logged action is not a removal, in name order.
void installed_packages(const Facts& f, PlatformModel& p) {
  std::map<std::string, const PackageEvent*> last;
  for (const auto& e : f.platform.driver_install.package_events)
    if (!e.to_version.empty() || e.action == "remove" || e.action == "purge") last[e.package] = &e;
  for (const auto& [name, e] : last) {
    if (e->action == "remove" || e->action == "purge") continue;
    p.driver_packages.push_back(name);
    if (e->by == "dnf") p.packages_from_dnf = true;
  }
}

ModuleFile module_for(const DriverInstallFacts& d, const std::string& kernel, const KernelModuleFile** file) {
  if (std::find(d.kernels.begin(), d.kernels.end(), kernel) == d.kernels.end()) return ModuleFile::unknown;
  for (const auto& m : d.module_files)
    if (m.kernel == kernel) {
      if (file) *file = &m;
      return ModuleFile::present;
    }
  return ModuleFile::missing;
}

bool has_real_libcuda(const DriverFacts& d) {
  return std::any_of(d.libraries.begin(), d.libraries.end(),
                     [](const DriverLibrary& l) { return l.kind == "libcuda" && !l.stub && !l.compat && !l.version.empty(); });
}

}  // namespace

bool kernel_less(const std::string& a, const std::string& b) {
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    bool da = std::isdigit(static_cast<unsigned char>(a[i])), db = std::isdigit(static_cast<unsigned char>(b[j]));
    if (da && db) {
      size_t ei = i, ej = j;
      while (ei < a.size() && std::isdigit(static_cast<unsigned char>(a[ei]))) ++ei;
      while (ej < b.size() && std::isdigit(static_cast<unsigned char>(b[ej]))) ++ej;
      std::string na = a.substr(i, ei - i), nb = b.substr(j, ej - j);
      na.erase(0, std::min(na.find_first_not_of('0'), na.size() - 1));
      nb.erase(0, std::min(nb.find_first_not_of('0'), nb.size() - 1));
      if (na.size() != nb.size()) return na.size() < nb.size();
      if (na != nb) return na < nb;
      i = ei, j = ej;
    } else {
      if (a[i] != b[j]) return a[i] < b[j];
      ++i, ++j;
    }
  }
  return a.size() - i < b.size() - j;
}

void derive_driver_install(const Facts& f, PlatformModel& p) {
  const DriverFacts& d = f.driver;
  const DriverInstallFacts& di = f.platform.driver_install;
  p.library_version = loader_library_version(d);
  library_change(f, p);
  installed_packages(f, p);
  p.driver_installed = has_real_libcuda(d) || !di.module_files.empty() || !di.dkms.empty();
  p.running_kernel = f.host.kernel;
  if (!p.running_kernel.empty()) p.running_kernel_module = module_for(di, p.running_kernel, &p.running_module);
  for (const auto& k : di.kernels)
    if (!p.running_kernel.empty() && kernel_less(p.running_kernel, k) && (p.newest_kernel.empty() || kernel_less(p.newest_kernel, k)))
      p.newest_kernel = k;
  if (!p.newest_kernel.empty()) p.newest_kernel_module = module_for(di, p.newest_kernel, nullptr);
  p.nouveau_blacklisted = !di.nouveau_blacklisted_in.empty();
  if (d.module_loaded || !p.driver_installed || f.platform.wsl) return;
  if (p.running_kernel_module == ModuleFile::missing) p.module_blocker = ModuleBlocker::not_built;
  else if (di.secure_boot == 1 && p.running_module && p.running_module->signature == "unsigned")
    p.module_blocker = ModuleBlocker::secure_boot;
  else if (di.nouveau_loaded) p.module_blocker = ModuleBlocker::nouveau;
}

}  // namespace cd
