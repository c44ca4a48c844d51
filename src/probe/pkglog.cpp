// Package-manager log readers (see pkglog.hpp for the formats). Each keeps only events of
// NVIDIA driver packages; the probe filters the text by "nvidia"/"cuda" first, so a large
// dpkg.log costs one substring scan.
#include "probe/pkglog.hpp"

#include <zlib.h>

#include <algorithm>
#include <cctype>

#include "util/strings.hpp"

namespace cd {
namespace {

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

// A cheap test before a line is split: can it name a driver package at all?
bool may_name_driver(std::string_view line) {
  return line.find("nvidia") != std::string_view::npos || line.find("libcuda") != std::string_view::npos ||
         line.find("cuda-drivers") != std::string_view::npos;
}

// "libnvidia-compute-550:amd64" -> "libnvidia-compute-550".
std::string drop_arch(std::string_view pkg) {
  auto colon = pkg.find(':');
  return std::string(colon == std::string_view::npos ? pkg : pkg.substr(0, colon));
}

std::vector<std::string_view> lines_of(std::string_view text) {
  std::vector<std::string_view> out;
  size_t at = 0;
  while (at < text.size()) {
    size_t nl = text.find('\n', at);
    if (nl == std::string_view::npos) nl = text.size();
    std::string_view line = text.substr(at, nl - at);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    out.push_back(line);
    at = nl + 1;
  }
  return out;
}

// "YYYY-MM-DD" followed by a separator and "HH:MM:SS": the canonical "YYYY-MM-DD HH:MM:SS", or "".
std::string timestamp(std::string_view date, std::string_view time) {
  auto digits_at = [](std::string_view s, std::initializer_list<size_t> pos) {
    return std::all_of(pos.begin(), pos.end(), [&](size_t i) { return i < s.size() && std::isdigit(static_cast<unsigned char>(s[i])); });
  };
  if (date.size() < 10 || !digits_at(date, {0, 1, 2, 3, 5, 6, 8, 9}) || date[4] != '-' || date[7] != '-') return {};
  if (time.size() < 8 || !digits_at(time, {0, 1, 3, 4, 6, 7}) || time[2] != ':' || time[5] != ':') return {};
  return std::string(date.substr(0, 10)) + " " + std::string(time.substr(0, 8));
}

// Who ran an apt transaction: "unattended-upgrade", or the command line and the user.
std::string apt_by(const std::string& commandline, const std::string& requested_by) {
  if (contains(commandline, "unattended-upgrade")) return "unattended-upgrade";
  std::string by = commandline.substr(0, 160);
  if (commandline.size() > 160) by += "…";
  std::string user(trim(requested_by.substr(0, requested_by.find(" ("))));
  if (!user.empty()) by += (by.empty() ? "" : " ") + std::string("(by ") + user + ")";
  return by;
}

// "pkg:amd64 (1.0, 2.0), other:amd64 (3.0, automatic)" -> (package, versions).
std::vector<std::pair<std::string, std::vector<std::string>>> apt_packages(std::string_view list) {
  std::vector<std::pair<std::string, std::vector<std::string>>> out;
  size_t at = 0;
  while (at < list.size()) {
    size_t open = list.find(" (", at);
    if (open == std::string_view::npos) break;
    size_t close = list.find(')', open);
    if (close == std::string_view::npos) break;
    std::string name = drop_arch(trim(list.substr(at, open - at)));
    std::vector<std::string> versions;
    for (const auto& v : split(list.substr(open + 2, close - open - 2), ','))
      if (std::string t(trim(v)); !t.empty() && t != "automatic") versions.push_back(t);
    out.push_back({name, versions});
    at = close + 1;
    while (at < list.size() && (list[at] == ',' || list[at] == ' ')) ++at;
  }
  return out;
}

// "name-[epoch:]version-release.arch" -> name and "[epoch:]version-release".
std::optional<std::pair<std::string, std::string>> split_nevra(std::string_view nevra) {
  std::string_view s = trim(nevra);
  for (std::string_view arch : {".x86_64", ".aarch64", ".noarch", ".i686", ".ppc64le", ".s390x"})
    if (s.size() > arch.size() && s.substr(s.size() - arch.size()) == arch) {
      s.remove_suffix(arch.size());
      break;
    }
  size_t rel = s.rfind('-');
  if (rel == std::string_view::npos || rel == 0) return std::nullopt;
  size_t ver = s.rfind('-', rel - 1);
  if (ver == std::string_view::npos || ver == 0) return std::nullopt;
  return std::make_pair(std::string(s.substr(0, ver)), std::string(s.substr(ver + 1)));
}

}  // namespace

bool is_driver_package(std::string_view name) {
  std::string n = to_lower(name);
  // NVIDIA's packages that are not the driver: the container toolkit, distribution CUDA toolkits, cuDNN.
  for (const char* other : {"nvidia-container", "libnvidia-container", "nvidia-docker", "nvidia-cuda-", "nvidia-cudnn",
                            "nvidia-profiler", "nvidia-visual-profiler", "nvidia-nsight", "python3-nvidia", "python-nvidia"})
    if (starts_with(n, other)) return false;
  return contains(n, "nvidia") || starts_with(n, "libcuda1") || starts_with(n, "cuda-drivers");
}

std::string upstream_version(std::string_view v) {
  if (auto colon = v.find(':'); colon != std::string_view::npos) v.remove_prefix(colon + 1);
  return std::string(v.substr(0, v.find('-')));
}

std::vector<PackageEvent> parse_apt_history(std::string_view text, const std::string& source) {
  std::vector<PackageEvent> out;
  std::string when, commandline, requested_by;
  std::vector<std::pair<std::string, std::string>> pending;  // (action, package list) of this transaction
  auto flush = [&] {
    for (const auto& [action, list] : pending)
      for (auto& [pkg, versions] : apt_packages(list)) {
        if (!is_driver_package(pkg)) continue;
        PackageEvent e;
        e.when = when;
        e.action = action;
        e.package = pkg;
        if (action == "upgrade" || action == "downgrade") {
          if (versions.size() >= 2) e.from_version = versions[0], e.to_version = versions[1];
          else if (!versions.empty()) e.to_version = versions[0];
        } else if (action == "install" || action == "reinstall") {
          if (!versions.empty()) e.to_version = versions[0];
        } else if (!versions.empty()) {
          e.from_version = versions[0];
        }
        e.by = apt_by(commandline, requested_by);
        e.source = source;
        out.push_back(std::move(e));
      }
    pending.clear();
  };
  for (std::string_view line : lines_of(text)) {
    auto colon = line.find(": ");
    if (colon == std::string_view::npos) continue;
    std::string_view key = line.substr(0, colon), value = trim(line.substr(colon + 2));
    if (key == "Start-Date") {
      flush();
      commandline.clear(), requested_by.clear();
      auto parts = split(value, ' ');
      when = parts.size() >= 2 ? timestamp(parts[0], parts[1]) : std::string();
    } else if (key == "Commandline") {
      commandline = value;
    } else if (key == "Requested-By") {
      requested_by = value;
    } else if (key == "Install" || key == "Upgrade" || key == "Downgrade" || key == "Remove" || key == "Purge" ||
               key == "Reinstall") {
      pending.push_back({to_lower(key), std::string(value)});
    } else if (key == "End-Date") {
      flush();
    }
  }
  flush();  // a log cut before End-Date still says what started
  return out;
}

std::vector<PackageEvent> parse_dpkg_log(std::string_view text, const std::string& source) {
  std::vector<PackageEvent> out;
  for (std::string_view line : lines_of(text)) {
    if (!may_name_driver(line)) continue;
    auto w = split(line, ' ');
    if (w.size() < 6) continue;
    const std::string& action = w[2];
    if (action != "install" && action != "upgrade" && action != "remove" && action != "purge") continue;
    std::string when = timestamp(w[0], w[1]);
    std::string pkg = drop_arch(w[3]);
    if (when.empty() || !is_driver_package(pkg)) continue;
    PackageEvent e;
    e.when = when;
    e.action = action;
    e.package = pkg;
    e.from_version = w[4] == "<none>" ? "" : w[4];
    e.to_version = w[5] == "<none>" ? "" : w[5];
    e.source = source;
    out.push_back(std::move(e));
  }
  return out;
}

std::vector<PackageEvent> parse_dnf_rpm_log(std::string_view text, const std::string& source) {
  std::vector<PackageEvent> out;
  for (std::string_view line : lines_of(text)) {
    // "2024-03-12T06:25:21+0000 SUBDEBUG Upgrade: nvidia-driver-cuda-libs-3:550.54.15-1.el9.x86_64"
    if (!may_name_driver(line)) continue;
    auto sp = line.find(' ');
    if (sp == std::string_view::npos || sp < 19 || line[10] != 'T') continue;
    std::string when = timestamp(line.substr(0, 10), line.substr(11, 8));
    std::string_view rest = trim(line.substr(sp + 1));
    if (when.empty() || !starts_with(rest, "SUBDEBUG ")) continue;
    rest = trim(rest.substr(9));
    auto colon = rest.find(": ");
    if (colon == std::string_view::npos) continue;
    std::string_view verb = rest.substr(0, colon);
    auto nv = split_nevra(rest.substr(colon + 2));
    if (!nv || !is_driver_package(nv->first)) continue;
    // The new package's line comes first ("Upgrade"), the replaced one's after ("Upgraded").
    if (verb == "Upgraded" || verb == "Downgraded") {
      for (auto it = out.rbegin(); it != out.rend(); ++it)
        if (it->package == nv->first && it->from_version.empty() && (it->action == "upgrade" || it->action == "downgrade")) {
          it->from_version = nv->second;
          break;
        }
      continue;
    }
    PackageEvent e;
    e.when = when;
    e.package = nv->first;
    e.source = source;
    e.by = "dnf";
    if (verb == "Upgrade" || verb == "Downgrade" || verb == "Installed" || verb == "Install" || verb == "Reinstall" ||
        verb == "Reinstalled") {
      e.action = verb == "Upgrade" ? "upgrade" : verb == "Downgrade" ? "downgrade" : starts_with(verb, "Reinstall") ? "reinstall" : "install";
      e.to_version = nv->second;
    } else if (verb == "Erase" || verb == "Erased") {
      e.action = "remove";
      e.from_version = nv->second;
    } else {
      continue;
    }
    out.push_back(std::move(e));
  }
  return out;
}

std::vector<PackageEvent> parse_unattended_upgrades_log(std::string_view text, const std::string& source) {
  std::vector<PackageEvent> out;
  constexpr std::string_view kMark = "Packages that will be upgraded: ";
  for (std::string_view line : lines_of(text)) {
    auto at = line.find(kMark);
    if (at == std::string_view::npos || line.size() < 19) continue;
    std::string when = timestamp(line.substr(0, 10), line.substr(11, 8));
    if (when.empty()) continue;
    for (const auto& pkg : split(line.substr(at + kMark.size()), ' ')) {
      if (pkg.empty() || !is_driver_package(pkg)) continue;
      PackageEvent e;
      e.when = when;
      e.action = "upgrade";
      e.package = pkg;
      e.by = "unattended-upgrade";
      e.source = source;
      out.push_back(std::move(e));
    }
  }
  return out;
}

std::optional<std::string> gunzip(std::string_view data, size_t max_out, std::string* why) {
  if (data.size() < 18 || static_cast<unsigned char>(data[0]) != 0x1f || static_cast<unsigned char>(data[1]) != 0x8b) {
    if (why) *why = "not gzip data";
    return std::nullopt;
  }
  z_stream z{};
  if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK) {
    if (why) *why = "zlib could not start";
    return std::nullopt;
  }
  std::string out;
  out.resize(std::min<size_t>(max_out, std::max<size_t>(data.size() * 4, 64 * 1024)));
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  z.avail_in = static_cast<uInt>(std::min<size_t>(data.size(), UINT32_MAX));
  size_t have = 0;
  int rc = Z_OK;
  while (have < max_out) {
    if (have == out.size()) out.resize(std::min(max_out, out.size() * 2));
    z.next_out = reinterpret_cast<Bytef*>(out.data() + have);
    z.avail_out = static_cast<uInt>(std::min<size_t>(out.size() - have, UINT32_MAX));
    rc = inflate(&z, Z_NO_FLUSH);
    have = out.size() - z.avail_out;
    if (rc == Z_STREAM_END) {
      // Concatenated members (gzip allows them): go on with the next one.
      if (z.avail_in > 0 && inflateReset(&z) == Z_OK) continue;
      break;
    }
    if (rc != Z_OK) break;
  }
  inflateEnd(&z);
  out.resize(have);
  if (rc != Z_STREAM_END && rc != Z_OK && have == 0) {
    if (why) *why = "corrupt gzip data";
    return std::nullopt;
  }
  // Cut (at max_out) or broken off: drop the partial last line.
  if (rc != Z_STREAM_END)
    if (auto nl = out.rfind('\n'); nl != std::string::npos) out.resize(nl + 1);
  return out;
}

}  // namespace cd
