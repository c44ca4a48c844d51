#pragma once
// The dynamic-linking facts of one ELF file, read the way ld.so reads them: from
// the program headers (PT_DYNAMIC, PT_LOAD, PT_INTERP), not from section headers,
// so stripped files work. Only headers and the dynamic segment are touched.
#include <string>
#include <string_view>
#include <vector>

#include "util/root.hpp"

namespace cd {

struct ElfDyn {
  int elf_class = 0;  // 1 = ELFCLASS32, 2 = ELFCLASS64
  int machine = 0;    // e_machine (62 = x86-64, 183 = AArch64)
  int data = 0;       // 1 = little-endian, 2 = big-endian
  std::string soname;
  std::vector<std::string> needed;  // DT_NEEDED, in order
  bool has_rpath = false;
  bool has_runpath = false;
  std::string rpath;    // raw DT_RPATH ("$ORIGIN/../../nvidia/cudnn/lib:$ORIGIN")
  std::string runpath;  // raw DT_RUNPATH
  bool nodeflib = false;  // DT_FLAGS_1 & DF_1_NODEFLIB
  std::string interp;     // PT_INTERP (executables)

  // What glibc searches as this object's DT_RPATH: nothing when DT_RUNPATH is
  // also present ("If both RUNPATH and RPATH are given, the latter is ignored").
  bool effective_rpath() const { return has_rpath && !has_runpath; }
  // True when `other` could be loaded into the same process (class, machine, endianness).
  bool compatible_with(const ElfDyn& other) const {
    return elf_class == other.elf_class && machine == other.machine && data == other.data;
  }
};

// Reads a file on the host filesystem. Throws InputError with a one-line reason
// ("<path>: not an ELF file", "...: dynamic segment outside the file").
ElfDyn read_elf_dyn(const std::string& host_path);
// The in-root `path` under `root`, opened through the root's descriptor (no link followed out
// of it, also one swapped in after the path was resolved); errors name the host path.
ElfDyn read_elf_dyn(const Root& root, const std::string& path);
// The same for bytes in memory (tests, fuzzing).
ElfDyn read_elf_dyn_memory(std::string_view bytes, const std::string& name = "<memory>");

}  // namespace cd
