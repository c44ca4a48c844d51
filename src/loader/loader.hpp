#pragma once
// An emulation of glibc's ld.so (elf/dl-load.c): which file each DT_NEEDED or
// dlopen name resolves to, and why. Order for a bare name requested by object L:
//   already loaded (by name or DT_SONAME; the first copy of a soname wins process-wide)
//   → DT_RPATH of L, L's loader, … up to the executable — only when L has no DT_RUNPATH
//   → LD_LIBRARY_PATH → L's own DT_RUNPATH (not inherited) → ld.so.cache → default dirs
// (the last two skipped for DF_1_NODEFLIB). Every file access goes through a Root.
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "loader/elf_dyn.hpp"
#include "loader/ldcache.hpp"
#include "loader/read_file.hpp"
#include "util/root.hpp"

namespace cd {

struct LoaderConfig {
  std::vector<std::string> ld_library_path;  // already split, in order
  std::vector<std::string> default_dirs;     // glibc's compiled-in system search path
  std::string lib = "lib/x86_64-linux-gnu";  // what $LIB expands to
  std::string platform = "x86_64";           // what $PLATFORM expands to (AT_PLATFORM)
  bool secure = false;                       // setuid/setgid: LD_LIBRARY_PATH ignored
  // Subdirectories ld.so tries inside every search directory (RPATH, LD_LIBRARY_PATH,
  // RUNPATH, default dirs; not ld.so.cache) before the directory itself, best first:
  // "glibc-hwcaps/x86-64-v3" … (glibc ≥ 2.33, the levels this CPU supports) and, before
  // glibc 2.37, the legacy "tls/x86_64/x86_64" … ones. Empty = none (under --root).
  std::vector<std::string> subdirs;
};

// The subdirectories from a `LD_DEBUG=libs` trace of the real ld.so run with
// LD_LIBRARY_PATH=`probe_dir`: its "search path=<probe_dir>/glibc-hwcaps/x86-64-v4:…:<probe_dir>
// (LD_LIBRARY_PATH)" line, in order, without the directory itself. Empty when absent.
std::vector<std::string> subdirs_from_ld_debug(std::string_view trace, std::string_view probe_dir);

// $LIB, $PLATFORM and default dirs for the tree at `root`: Debian/Ubuntu multiarch
// when /usr/lib/<triplet> exists, else the lib64 layout (Fedora, RHEL, SUSE).
LoaderConfig default_loader_config(const Root& root, int e_machine = 62);
// Splits LD_LIBRARY_PATH the way ld.so does (':' and ';'); empty elements are dropped.
std::vector<std::string> split_search_path(std::string_view value);

// One search directory with the text it came from ("$ORIGIN/../lib").
struct SearchDir {
  std::string dir;
  std::string raw;
};

// Shared by every emulated process on one root: the parsed ld.so.cache and each
// ELF file's dynamic section are read once.
class LoaderSystem {
 public:
  LoaderSystem(Root root, LoaderConfig config);

  const Root& root() const { return root_; }
  const LoaderConfig& config() const { return config_; }
  // Parsed on first use; an unreadable or corrupt cache gives an empty one and cache_error().
  const LdCache& cache();
  const std::string& cache_error();
  // ELF facts of the file at an in-root path; nullptr with *error set when unreadable or corrupt.
  const ElfDyn* elf(const std::string& path, std::string* error = nullptr);
  // In-root path with every symlink resolved (cached).
  std::string realpath(const std::string& path);
  bool is_file(const std::string& path);
  // Expands $ORIGIN/$LIB/$PLATFORM in a ':'-separated list (DT_RPATH, DT_RUNPATH).
  std::vector<SearchDir> expand(const std::string& list, const std::string& origin) const;

 private:
  std::string without_prefix(std::string msg) const;

  Root root_;
  LoaderConfig config_;
  bool cache_loaded_ = false;
  LdCache cache_;
  std::string cache_error_;
  struct ElfEntry {
    std::unique_ptr<ElfDyn> dyn;
    std::string error;
  };
  std::map<std::string, ElfEntry> elves_;
  std::map<std::string, std::string> real_;
  std::map<std::string, bool> files_;
};

// How a name was resolved.
enum class Via { path, loaded, rpath, ld_library_path, runpath, ld_cache, default_dir, not_found, error };
const char* via_name(Via v);  // "RPATH", "LD_LIBRARY_PATH", "ld.so.cache", …

// When a process maps an object, in order: at start (the executable's DT_NEEDED closure,
// LD_PRELOAD, what `import` loads), at a library's first call (cuDNN's shim dlopening
// libcudnn_graph), or only when a call needs it (cuDNN's ops/cnn/adv, NVRTC's builtins at
// the first compile). A missing library fails the start, that first call, or that call.
enum class LoadTime { startup, first_call, on_demand };
const char* load_time_name(LoadTime t);  // "startup", "first_call", "on_demand"

struct LoadedObject {
  std::string path;      // as opened (search dir + name); $ORIGIN is its directory
  std::string realpath;
  std::string soname;
  std::vector<std::string> names;  // names it was requested under
  int loader = -1;                 // the object whose DT_NEEDED or dlopen loaded it
  const ElfDyn* elf = nullptr;
  // Loaded by a dlopen that then failed: ld.so unmapped it again. Kept (with its requests)
  // so a report can say what had been found; find() and later loads ignore it.
  bool unloaded = false;
  LoadTime when = LoadTime::startup;  // of the dlopen (or start) that mapped it
};

// The answer to one search, without loading anything.
struct Resolution {
  std::string path;  // "" when not found or failed
  Via via = Via::not_found;
  std::string detail;  // "RPATH of libtorch_cuda.so ($ORIGIN/../../nvidia/cudnn/lib)", or the error
  std::vector<std::string> tried;  // candidates passed over, with why ("…: wrong ELF class")
};

// One DT_NEEDED entry or dlopen call and what it got.
struct LoadRequest {
  int requester = -1;  // object index; -1 = dlopen by the program itself
  std::string name;
  int object = -1;  // -1 = failed
  Resolution how;
  // Part of a dlopen that failed further down its tree (its object, if any, is unloaded).
  bool undone = false;
  bool preload = false;  // an LD_PRELOAD entry
  LoadTime when = LoadTime::startup;
};

// The objects one process would load, in load order (breadth-first, like ld.so).
class Process {
 public:
  // `executable` (in-root path; "" for none) is object 0 when given; its own DT_NEEDED
  // are loaded too, as when the program starts.
  // `preload` (LD_PRELOAD, in order) is loaded right after the executable and before its
  // DT_NEEDED, searched as the executable's own dependencies (elf/rtld.c), so its sonames win.
  Process(LoaderSystem& sys, const std::string& executable, const std::vector<std::string>& preload = {});

  // dlopen(name) called from object `caller` (-1 = the executable) at time `when`. Returns
  // the object index or -1; its dependencies are loaded breadth-first. A caller that was
  // itself loaded later than `when` makes the call that late: it cannot run before it is mapped.
  int dlopen(const std::string& name, int caller = -1, LoadTime when = LoadTime::startup);
  // Where a bare or path name would resolve if `loader` asked now; loads nothing. Without
  // `ld_library_path`, as if LD_LIBRARY_PATH were unset: what a copy found there shadows.
  Resolution search(const std::string& name, int loader, bool ld_library_path = true) const;
  // The loaded object with this soname or request name, -1 when none.
  int find(std::string_view name) const;

  const std::vector<LoadedObject>& objects() const { return objects_; }
  LoaderSystem& system() const { return sys_; }
  const std::vector<LoadRequest>& requests() const { return requests_; }

 private:
  int load(const std::string& name, int requester);
  void load_dependencies(std::vector<int> first);
  void try_dirs(const std::vector<SearchDir>& dirs, const std::string& name, Via via, const std::string& what,
                Resolution& r) const;
  bool try_file(const std::string& path, Resolution& r) const;

  LoaderSystem& sys_;
  int main_ = -1;
  LoadTime when_ = LoadTime::startup;  // of the dlopen in progress
  std::vector<LoadedObject> objects_;
  std::vector<LoadRequest> requests_;
};

}  // namespace cd
