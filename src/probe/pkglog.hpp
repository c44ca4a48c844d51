#pragma once
// Readers of the package managers' own logs, for the NVIDIA driver packages only: when a
// driver library changed, from which version to which, and who did it. Pure functions on
// text (the probe reads the files, rotated and gzip-compressed ones included), so tests and
// fuzz/check_inputs_fuzz feed them directly. Formats:
//   apt    /var/log/apt/history.log   "Start-Date:" … "Commandline:" … "Upgrade: pkg:arch (old, new), …" … "End-Date:"
//   dpkg   /var/log/dpkg.log          "2024-03-12 06:25:21 upgrade pkg:arch old new" (install/upgrade/remove/purge)
//   dnf    /var/log/dnf.rpm.log       "2024-03-12T06:25:21+0000 SUBDEBUG Upgrade: name-[epoch:]ver-rel.arch" then
//                                     "… SUBDEBUG Upgraded: name-old.arch" (Installed/Erase/Downgrade/Downgraded)
//   u-u    /var/log/unattended-upgrades/unattended-upgrades.log
//                                     "2024-03-12 06:25:14,567 INFO Packages that will be upgraded: a b c"
// Lines that do not parse are skipped: a truncated or foreign log gives fewer events, never an error.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "facts/platform.hpp"

namespace cd {

// Whether a package is part of the NVIDIA driver (its user-space libraries, kernel module,
// utilities): nvidia-*, libnvidia-*, libcuda1, cuda-drivers*, kmod-nvidia*, xserver-xorg-video-nvidia*;
// not the container toolkit (nvidia-container-*, libnvidia-container*), Debian's nvidia-cuda-* toolkit, cuDNN.
bool is_driver_package(std::string_view name);

std::vector<PackageEvent> parse_apt_history(std::string_view text, const std::string& source);
std::vector<PackageEvent> parse_dpkg_log(std::string_view text, const std::string& source);
std::vector<PackageEvent> parse_dnf_rpm_log(std::string_view text, const std::string& source);
std::vector<PackageEvent> parse_unattended_upgrades_log(std::string_view text, const std::string& source);

// The upstream driver version of a package version: "550.54.15-0ubuntu0.22.04.2" and
// "3:550.54.15-1.el9" -> "550.54.15".
std::string upstream_version(std::string_view package_version);

// Inflates gzip data (a rotated log.N.gz). At most `max_out` bytes come out: a longer stream
// (or a gzip bomb) is cut there and its head kept, the cut line dropped. nullopt with `why`
// for data that is not gzip or breaks off before any output.
std::optional<std::string> gunzip(std::string_view data, size_t max_out, std::string* why = nullptr);

}  // namespace cd
