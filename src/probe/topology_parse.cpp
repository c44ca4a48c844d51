// PCI config space parsing (see topology_parse.hpp for the layout).
#include "probe/topology_parse.hpp"

#include <cctype>
#include <cstdint>

namespace cd {
namespace {

uint32_t rd(std::string_view b, size_t at, size_t n) {
  uint32_t v = 0;
  for (size_t i = 0; i < n && at + i < b.size(); ++i) v |= static_cast<uint32_t>(static_cast<unsigned char>(b[at + i])) << (8 * i);
  return v;
}

const char* port_name(unsigned type) {
  switch (type) {
    case 0x0: return "endpoint";
    case 0x4: return "root port";
    case 0x5: return "switch upstream";
    case 0x6: return "switch downstream";
    case 0x7: return "pci bridge";
    case 0x8: return "pcie bridge";
    case 0x9: return "integrated endpoint";
    default: return "";
  }
}

}  // namespace

ConfigSpace parse_config_space(std::string_view b) {
  ConfigSpace cs;
  if (b.size() < 64) {
    cs.truncated = true;
    return cs;
  }
  // Standard capabilities: only when the status register says there is a list.
  if (rd(b, 0x06, 2) & 0x10) {
    size_t p = rd(b, 0x34, 1) & 0xfc;
    for (int steps = 0; p >= 0x40 && p + 4 <= b.size() && steps < 48; ++steps) {
      if (rd(b, p, 1) == 0x10) {
        cs.port = port_name((rd(b, p + 2, 2) >> 4) & 0xf);
        break;
      }
      p = rd(b, p + 1, 1) & 0xfc;
    }
  }
  // Without root sysfs gives 64 bytes: the extended capabilities (ACS) are not seen.
  if (b.size() < 256) {
    cs.truncated = true;
    return cs;
  }
  cs.acs_cap = cs.acs_ctrl = -2;
  if (b.size() == 256) return cs;  // conventional config space only: no extended capabilities exist
  size_t p = 0x100;
  for (int steps = 0; p >= 0x100 && p + 8 <= b.size() && steps < 96; ++steps) {
    uint32_t h = rd(b, p, 4);
    if (h == 0 || h == 0xffffffff) break;
    if ((h & 0xffff) == 0x000d) {
      cs.acs_cap = static_cast<int>(rd(b, p + 4, 2));
      cs.acs_ctrl = static_cast<int>(rd(b, p + 6, 2));
      break;
    }
    p = (h >> 20) & 0xffc;
    if (p == 0) break;
  }
  return cs;
}

bool is_pci_address(std::string_view s) {
  if (s.size() != 12 || s[4] != ':' || s[7] != ':' || s[10] != '.') return false;
  for (size_t i = 0; i < s.size(); ++i)
    if (i != 4 && i != 7 && i != 10 && !std::isxdigit(static_cast<unsigned char>(s[i]))) return false;
  return true;
}

}  // namespace cd
