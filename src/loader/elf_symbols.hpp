#pragma once
// Versioned dynamic symbols of an ELF file: what it needs from each library (through
// its .gnu.version_r entries) and what it defines. Enough to tell, without loading
// anything, that "libcusparse.so.12 needs __nvJitLinkComplete_12_4 (version
// libnvJitLink.so.12) and this libnvJitLink.so.12 does not define it".
#include <map>
#include <set>
#include <string>
#include <vector>

namespace cd {

struct ElfSymbols {
  std::map<std::string, std::vector<std::string>> needs;  // library soname → undefined symbols versioned against it
  std::set<std::string> defines;                          // defined dynamic symbols
};

// Reads .dynsym, .gnu.version and .gnu.version_r of a host file. Throws InputError.
ElfSymbols read_elf_symbols(const std::string& host_path);

// Symbols `user` needs from a library with `soname` that `provider` does not define.
std::vector<std::string> missing_symbols(const ElfSymbols& user, const std::string& soname, const ElfSymbols& provider,
                                         size_t limit = 5);

}  // namespace cd
