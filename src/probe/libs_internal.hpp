#pragma once
// Shared between the parts of the libs probe (libs.cpp, libs_copies.cpp, libs_resolve.cpp).
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "facts/facts.hpp"
#include "loader/elf_symbols.hpp"
#include "loader/loader.hpp"
#include "probe/libs_catalog.hpp"

namespace cd {

// Where a directory belongs: a python env's site-packages, a toolkit, a conda env.
struct LibPlace {
  std::string prefix;      // directory prefix (in-root)
  std::string kind;        // "wheel", "bundled", "toolkit", "conda"
  std::string label;       // "/opt/torch/.venv", "/usr/local/cuda-13.0"
  std::string dist_info_dir;  // where *.dist-info directories live ("" = none)
};

struct DistOwner {
  std::string package;  // "nvidia-cudnn-cu13"
  std::string version;  // "9.19.0.56"
  std::string dist_info;  // "nvidia_cudnn_cu13-9.19.0.56.dist-info"
};

struct LibsProbe {
  LoaderSystem& sys;
  const Facts& facts;
  std::vector<LibPlace> places;
  std::map<std::string, std::map<std::string, DistOwner>> owners;  // dist_info_dir → file basename → owner
  std::map<std::string, std::map<std::string, std::string>> toolkit_versions;  // toolkit root → key → version
  std::vector<ProbeNote> notes;
  std::map<std::string, std::string> versions;  // in-root realpath → version of each copy found

  const LibPlace* place_of(const std::string& path) const;
  const DistOwner* owner_of(const LibPlace& place, const std::string& basename);
  const std::string* toolkit_version(const std::string& root, const std::string& key);
  // Dynamic symbols of a file (in-root real path), read once; nullptr when unreadable.
  const ElfSymbols* symbols_of(const std::string& realpath);
  std::map<std::string, std::optional<ElfSymbols>> symbols;
};

// The hwcaps subdirectories this machine's ld.so tries in each search directory (asked once
// from the real ld.so with LD_DEBUG=libs); empty under --root.
std::vector<std::string> host_search_subdirs(const Root& root);
// Emulates `import torch` from site-packages `sp` of `env` into `proc` (global deps, torch's own
// preloading when its __init__.py does it, torch._C, cuDNN's sub-libraries at the first
// convolution). False when `sp` has no CUDA torch.
bool import_torch(LibsProbe& p, const PythonEnv& env, const std::string& sp, Process& proc);
// Every copy of a tracked CUDA library reachable from the usual directories.
std::vector<LibraryCopy> find_library_copies(LibsProbe& p);
// What each framework (and a program without RPATH) resolves the tracked sonames to.
std::vector<LibraryResolution> resolve_consumers(LibsProbe& p, const std::vector<LibraryCopy>& copies);

}  // namespace cd
