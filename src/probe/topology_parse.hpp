#pragma once
// PCI config space as sysfs gives it (/sys/bus/pci/devices/X/config): the PCI Express
// capability's port type and the ACS extended capability, read from the bytes alone
// (PCI Express Base Specification: capability list at 0x34, PCIe capability id 0x10 with
// the device/port type in bits 7:4 of its register at +2; extended capabilities from
// 0x100, each header id[15:0] version[19:16] next[31:20]; ACS is id 0x000D with its
// Capability register at +4 and Control register at +6). Pure, for tests and fuzzing.
#include <string>
#include <string_view>

namespace cd {

struct ConfigSpace {
  std::string port;       // "root port", "switch upstream", "switch downstream", "pci bridge", "endpoint", ""
  int acs_cap = -1;       // -1 unknown (extended space not readable), -2 no ACS capability
  int acs_ctrl = -1;
  bool truncated = false; // fewer than 256 bytes: an unprivileged read (64 bytes), extended space not seen
};

ConfigSpace parse_config_space(std::string_view bytes);

// "0000:3b:00.0": domain:bus:device.function in hex.
bool is_pci_address(std::string_view s);

}  // namespace cd
