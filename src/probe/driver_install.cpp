// How the driver got onto this machine and whether its kernel module can load: the NVIDIA
// module modprobe finds per installed kernel (each kernel's modules.dep), what DKMS built
// (/var/lib/dkms/NAME/VERSION/KERNEL/ARCH/module), nouveau (loaded? blacklisted where?),
// Secure Boot (the SecureBoot EFI variable) and, only when Secure Boot is on and the module
// is not loaded, whether the module files carry a signature; and the driver packages'
// history from the package managers' logs, rotated and gzip-compressed ones included
// (probe/pkglog.cpp parses them). Every read is bounded and goes through the Root.
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include <algorithm>
#include <cstdlib>
#include <memory>

#include "probe/pkglog.hpp"
#include "probe/probe.hpp"
#include "util/regular_file.hpp"
#include "util/strings.hpp"

namespace cd {
namespace {

constexpr size_t kMaxModulesDep = 16u << 20;   // modules.dep of a distribution kernel: ~1 MB
constexpr size_t kMaxKernels = 16;
constexpr size_t kMaxLogBytes = 32u << 20;     // one log file, plain or inflated
constexpr size_t kMaxGzBytes = 8u << 20;       // one compressed rotation
constexpr size_t kMaxRotations = 24;
constexpr size_t kMaxEvents = 400;             // the newest ones are kept
constexpr char kSignatureMagic[] = "~Module signature appended~\n";

bool is_nvidia_module(std::string_view path) {
  std::string base = path_basename(path);
  std::string stem = base.substr(0, base.find(".ko"));
  return base.find(".ko") != std::string::npos &&
         (stem == "nvidia" || stem == "nvidia-current" || stem == "nvidia-open" || stem == "nvidia-current-open");
}

void kernel_modules(DriverInstallFacts& d, const Root& root) {
  for (const auto& k : root.list("/lib/modules")) {
    if (d.kernels.size() >= kMaxKernels) break;
    std::string dir = path_join("/lib/modules", k);
    auto dep = root.read(path_join(dir, "modules.dep"), kMaxModulesDep);
    if (!dep) continue;
    d.kernels.push_back(k);
    for (const auto& line : split(*dep, '\n')) {
      std::string mod = line.substr(0, line.find(':'));
      if (!is_nvidia_module(mod)) continue;
      d.module_files.push_back({k, mod.front() == '/' ? mod : path_join(dir, mod), ""});
    }
  }
}

void dkms(DriverInstallFacts& d, const Root& root) {
  for (const auto& name : root.list("/var/lib/dkms")) {
    if (name.rfind("nvidia", 0) != 0) continue;
    std::string base = path_join("/var/lib/dkms", name);
    for (const auto& version : root.list(base)) {
      if (version.rfind("kernel-", 0) == 0 || version == "source") continue;
      std::string vdir = path_join(base, version);
      if (root.is_symlink(vdir) || !root.is_dir(vdir)) continue;
      DkmsModule m{name, version, {}};
      for (const auto& k : root.list(vdir)) {
        if (k == "source" || k == "build") continue;
        for (const auto& arch : root.list(path_join(vdir, k)))
          if (root.is_dir(path_join(vdir, k + "/" + arch + "/module"))) {
            m.built_for.push_back(k);
            break;
          }
      }
      d.dkms.push_back(std::move(m));
    }
  }
}

void nouveau(DriverInstallFacts& d, const Root& root) {
  if (root.is_dir("/sys/module/nouveau")) {
    d.nouveau_loaded = true;
    d.nouveau_evidence = "/sys/module/nouveau exists";
  } else if (auto mods = root.read("/proc/modules", 1u << 20); mods && (mods->rfind("nouveau ", 0) == 0 || contains(*mods, "\nnouveau "))) {
    d.nouveau_loaded = true;
    d.nouveau_evidence = "/proc/modules lists nouveau";
  }
  for (const char* dir : {"/etc/modprobe.d", "/run/modprobe.d", "/usr/local/lib/modprobe.d", "/lib/modprobe.d", "/usr/lib/modprobe.d"}) {
    for (const auto& host : root.glob(dir, "*.conf")) {
      std::string path = path_join(dir, path_basename(host));
      auto text = root.read(path, 256 * 1024);
      if (!text) continue;
      for (const auto& raw : split(*text, '\n')) {
        std::string line = to_lower(trim(raw));
        auto w = split(line, ' ');
        if (w.size() >= 2 && w[1] == "nouveau" && (w[0] == "blacklist" || w[0] == "install")) {
          d.nouveau_blacklisted_in.push_back(path);
          break;
        }
      }
      if (d.nouveau_blacklisted_in.size() >= 8) break;
    }
  }
  if (auto cmdline = root.read("/proc/cmdline", 64 * 1024)) {
    for (const auto& w : split(std::string(trim(*cmdline)), ' ')) {
      bool listed = (w.rfind("modprobe.blacklist=", 0) == 0 || w.rfind("rd.driver.blacklist=", 0) == 0 ||
                     w.rfind("module_blacklist=", 0) == 0) && contains(w, "nouveau");
      if (listed || w == "nouveau.modeset=0") {
        d.nouveau_blacklisted_in.push_back("/proc/cmdline (" + w + ")");
        break;
      }
    }
  }
}

void secure_boot(DriverInstallFacts& d, const Root& root) {
  const std::string dir = "/sys/firmware/efi/efivars";
  for (const auto& host : root.glob(dir, "SecureBoot-*")) {
    std::string path = path_join(dir, path_basename(host));
    auto v = root.read(path, 64);  // 4 bytes of attributes, then the value
    if (!v || v->size() < 5) continue;
    d.secure_boot = (*v)[4] == 1 ? 1 : 0;
    d.secure_boot_source = path;
    break;
  }
  for (const char* key : {"/var/lib/dkms/mok.pub", "/var/lib/shim-signed/mok/MOK.der"})
    if (root.is_file(key)) d.mok_keys.push_back(key);
  if (d.secure_boot == 1) return;
  if (d.secure_boot < 0 && root.is_dir("/sys/firmware/efi") && root.is_dir(dir)) {
    d.secure_boot = 0;
    d.secure_boot_source = dir + " (no SecureBoot variable)";
  }
}

// The last bytes of a module file, inflated when it is zstd-compressed ("" when unknown).
std::string module_tail(const Root& root, const std::string& path, size_t n) {
  RegularFile f(root, path);
  if (!f.ok() || f.size() < n) return {};
  if (!path.ends_with(".zst")) {
    std::string tail(n, '\0');
    if (pread(f.fd(), tail.data(), n, static_cast<off_t>(f.size() - n)) != static_cast<ssize_t>(n)) return {};
    return tail;
  }
  if (f.size() > (512ull << 20)) return {};
  std::unique_ptr<ZSTD_DStream, size_t (*)(ZSTD_DStream*)> z(ZSTD_createDStream(), ZSTD_freeDStream);
  if (!z) return {};
  std::string in(ZSTD_DStreamInSize(), '\0'), out(ZSTD_DStreamOutSize(), '\0'), tail;
  off_t at = 0;
  for (;;) {
    ssize_t got = pread(f.fd(), in.data(), in.size(), at);
    if (got <= 0) break;
    at += got;
    ZSTD_inBuffer ib{in.data(), static_cast<size_t>(got), 0};
    while (ib.pos < ib.size) {
      ZSTD_outBuffer ob{out.data(), out.size(), 0};
      if (ZSTD_isError(ZSTD_decompressStream(z.get(), &ob, &ib))) return {};
      tail.append(out.data(), ob.pos);
      if (tail.size() > 4 * n) tail.erase(0, tail.size() - n);
    }
  }
  return tail.size() >= n ? tail.substr(tail.size() - n) : std::string();
}

void module_signatures(DriverInstallFacts& d, const Root& root) {
  const size_t n = sizeof kSignatureMagic - 1;
  for (auto& m : d.module_files) {
    if (m.path.ends_with(".ko") || m.path.ends_with(".ko.zst")) {
      std::string tail = module_tail(root, m.path, n);
      if (!tail.empty()) m.signature = tail == kSignatureMagic ? "signed" : "unsigned";
    }
  }
}

// A rotated log's age rank: "x.log" 0 (newest), "x.log.1" 1, "x.log.2.gz" 2; dateext
// ("x.log-20240312") sorts by its date below the current file.
struct LogFile {
  std::string path;
  long rank = 0;
  std::string date;
};

std::vector<LogFile> rotations(const Root& root, const std::string& dir, const std::string& base) {
  std::vector<LogFile> files;
  for (const auto& host : root.glob(dir, base + "*")) {
    std::string name = path_basename(host);
    std::string rest = name.substr(base.size());
    if (rest.ends_with(".gz")) rest.resize(rest.size() - 3);
    LogFile f{path_join(dir, name), 0, ""};
    if (rest.empty()) {
      f.rank = 0;
    } else if (rest[0] == '.' && rest.size() > 1 && rest.find_first_not_of("0123456789", 1) == std::string::npos) {
      f.rank = std::strtol(rest.c_str() + 1, nullptr, 10);
    } else if (rest[0] == '-' && rest.size() == 9 && rest.find_first_not_of("0123456789", 1) == std::string::npos) {
      f.rank = 1;
      f.date = rest.substr(1);
    } else {
      continue;
    }
    files.push_back(f);
  }
  // Oldest first: highest rank, and among dateext files the oldest date.
  std::sort(files.begin(), files.end(), [](const LogFile& a, const LogFile& b) {
    return a.rank != b.rank ? a.rank > b.rank : a.date < b.date;
  });
  if (files.size() > kMaxRotations) files.erase(files.begin(), files.end() - kMaxRotations);
  return files;
}

using Parser = std::vector<PackageEvent> (*)(std::string_view, const std::string&);

void package_logs(DriverInstallFacts& d, const Root& root, std::vector<ProbeNote>& notes) {
  struct Family {
    const char* dir;
    const char* base;
    Parser parse;
  };
  static constexpr Family families[] = {
      {"/var/log/apt", "history.log", parse_apt_history},
      {"/var/log", "dpkg.log", parse_dpkg_log},
      {"/var/log", "dnf.rpm.log", parse_dnf_rpm_log},
      {"/var/log/unattended-upgrades", "unattended-upgrades.log", parse_unattended_upgrades_log},
  };
  std::vector<PackageEvent> all;
  for (const auto& fam : families) {
    for (const auto& f : rotations(root, fam.dir, fam.base)) {
      std::string why;
      bool gz = f.path.ends_with(".gz");
      auto raw = root.read(f.path, gz ? kMaxGzBytes : kMaxLogBytes, &why);
      if (!raw) {
        if (!why.empty() && why != "No such file or directory") notes.push_back({"driver_install", f.path + ": " + why});
        continue;
      }
      std::optional<std::string> text = gz ? gunzip(*raw, kMaxLogBytes, &why) : std::move(raw);
      if (!text) {
        notes.push_back({"driver_install", f.path + ": " + why});
        continue;
      }
      d.package_logs.push_back(f.path);
      auto events = fam.parse(*text, f.path);
      all.insert(all.end(), std::make_move_iterator(events.begin()), std::make_move_iterator(events.end()));
    }
  }
  std::stable_sort(all.begin(), all.end(), [](const PackageEvent& a, const PackageEvent& b) { return a.when < b.when; });
  if (all.size() > kMaxEvents) all.erase(all.begin(), all.end() - kMaxEvents);
  d.package_events = std::move(all);
}

void boot_time(DriverInstallFacts& d, const Root& root) {
  auto stat = root.read("/proc/stat", 1u << 20);
  if (!stat) return;
  auto at = stat->find("\nbtime ");
  if (at != std::string::npos) d.booted_unix = std::strtod(stat->c_str() + at + 7, nullptr);
}

}  // namespace

void probe_driver_install(Facts& facts, const ProbeOptions& opts) {
  DriverInstallFacts& d = facts.platform.driver_install;
  const Root& root = opts.root;
  kernel_modules(d, root);
  dkms(d, root);
  nouveau(d, root);
  secure_boot(d, root);
  // Signatures matter only when Secure Boot is on and the module did not load; reading
  // them otherwise would inflate a ~100 MB module on every check.
  if (d.secure_boot == 1 && !facts.driver.module_loaded) module_signatures(d, root);
  package_logs(d, root, facts.notes);
  boot_time(d, root);
}

}  // namespace cd
