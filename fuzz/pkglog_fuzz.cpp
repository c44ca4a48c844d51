// libFuzzer target for the platform probes' parsers: the package-manager log readers
// (probe/pkglog.cpp: apt's history.log, dpkg.log, dnf.rpm.log and unattended-upgrades.log
// text, and gzip data as a rotated log.N.gz holds it, inflated with a small cap so a bomb
// stops there) and PCI config space (probe/topology_parse.cpp). The first byte picks the reader. Every input must parse to some events or none; a crash,
// hang or exception is a bug.
#include <cstddef>
#include <cstdint>
#include <string>

#include "probe/pkglog.hpp"
#include "probe/topology_parse.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string text(reinterpret_cast<const char*>(data) + 1, size - 1);
  switch (data[0] % 6) {
    case 0: (void)cd::parse_apt_history(text, "fuzz"); break;
    case 1: (void)cd::parse_dpkg_log(text, "fuzz"); break;
    case 2: (void)cd::parse_dnf_rpm_log(text, "fuzz"); break;
    case 3: (void)cd::parse_unattended_upgrades_log(text, "fuzz"); break;
    case 4:
      if (auto out = cd::gunzip(text, 1u << 16)) (void)cd::parse_dpkg_log(*out, "fuzz");
      break;
    case 5: (void)cd::parse_config_space(text); break;
  }
  return 0;
}
