#pragma once
// Shared CUDA libraries: every copy on the machine and which one the loader picks
// for whom (computed by loader/, an ld.so emulation; probe/libs*.cpp).
#include <string>
#include <string_view>
#include <vector>

#include "facts/json.hpp"

namespace cd {

// One file (deduplicated by real path) of a CUDA library.
struct LibraryCopy {
  std::string name;      // family: "cudnn", "nccl", "cudart", "cublas", "cublasLt", …
  std::string soname;    // "libcudnn.so.9", "libcudnn_ops.so.9" (DT_SONAME, else the file name)
  std::string path;      // the name the loader opens: "/usr/lib/x86_64-linux-gnu/libcudnn.so.9"
  std::string realpath;  // the file: "/usr/lib/x86_64-linux-gnu/libcudnn.so.9.14.0"
  std::string version;   // "9.14.0" / "9.19.0.56"; "" when unknown
  std::string version_source;  // "file name", "nvidia_cudnn_cu13-9.19.0.56.dist-info", "<toolkit>/version.json"
  std::string origin;    // "system", "toolkit:/usr/local/cuda-13.0", "wheel:nvidia-cudnn-cu13 (/opt/torch/.venv)",
                         // "torch/lib (bundled)", "conda:/opt/conda/envs/x", "LD_LIBRARY_PATH"
  std::string package;   // the pip/conda package that owns it ("nvidia-cudnn-cu13"), "" when unknown
  std::vector<std::string> also_at;  // other directories' names for the same file (usrmerge, symlinked dirs)
  bool in_ld_cache = false;          // listed in /etc/ld.so.cache (what `ldconfig -p` and collect_env see)
  bool on_ld_library_path = false;   // its directory is on LD_LIBRARY_PATH
};
CD_JSON(LibraryCopy, name, soname, path, realpath, version, version_source, origin, package, also_at, in_ld_cache,
        on_ld_library_path)

// Which copy a consumer (a framework in one environment, or "programs without
// RPATH") gets for a soname, and why — the first request in its process wins.
struct LibraryResolution {
  std::string consumer;      // "torch 2.11.0+cu130 (/opt/torch/.venv)", "a program without RPATH"
  std::string env;           // python env prefix, "" for the system view
  std::string requested_by;  // the object whose DT_NEEDED / dlopen asked: ".../torch/lib/libtorch_cuda.so"
  std::string name;          // family ("cudnn")
  std::string soname;
  std::string path;          // "" = not found
  std::string realpath;
  std::string via;           // "RPATH", "RUNPATH", "LD_LIBRARY_PATH", "ld.so.cache", "default path",
                             // "preload by torch/__init__.py", "not found", "error"
  std::string detail;        // "RPATH of libtorch_cuda.so ($ORIGIN/../../nvidia/cudnn/lib)" or the loader error
  std::string provided_by;   // the framework's Requires-Dist entry that ships this library, if any
  std::vector<std::string> tried;  // candidates passed over before it
  // Symbols requested_by needs (versioned against this soname) that the resolved file does
  // not define; filled when the two come from different directories. Non-empty = the
  // import fails with "undefined symbol: …".
  std::vector<std::string> missing_symbols;
  // Found through LD_LIBRARY_PATH: the file the same request gets with LD_LIBRARY_PATH unset
  // (the copy this one shadows, e.g. the wheel's that the requester's RUNPATH names) and how.
  std::string shadowed;
  std::string shadowed_via;
};
CD_JSON(LibraryResolution, consumer, env, requested_by, name, soname, path, realpath, via, detail, provided_by, tried,
        missing_symbols, shadowed, shadowed_via)

// A family's own library, not one of its sub-libraries or companions: "libcudnn.so.9",
// "libcudart-1a2b3c4d.so.12" (torch's hash-renamed copy), not "libcudnn_ops.so.9" or
// "libnvrtc-builtins.so.13.0". `name` is a soname or file name.
bool main_library_name(std::string_view family, std::string_view name);

struct LibsFacts {
  std::vector<LibraryCopy> copies;
  std::vector<LibraryResolution> resolutions;
  std::string ld_cache_format;                 // "new", "old", "old+new"; "" when unreadable
  std::vector<std::string> ld_so_conf_dirs;    // ldconfig's directories, in order
  std::vector<std::string> default_dirs;       // the loader's compiled-in search path (emulated)
  std::vector<std::string> ld_library_path;    // LD_LIBRARY_PATH, split
  double seconds = 0;                          // time the probe took
};
CD_JSON(LibsFacts, copies, resolutions, ld_cache_format, ld_so_conf_dirs, default_dirs, ld_library_path, seconds)

// `cuda-doctor libs`: one process, emulated (FILE…, --python) or live (--pid). Not part of
// Facts (check does not record it); the libs subcommand's own observations.
struct LoadedLibrary {
  std::string name;          // the name asked for ("libcudnn.so.9", a path for dlopen by path)
  std::string requested_by;  // the asking object's path; "LD_PRELOAD", "dlopen", "executable"
  int depth = 0;             // 0 = the file itself / a preload; n = n DT_NEEDED / dlopen steps below
  std::string path;          // as opened; "" = failed
  std::string realpath;
  std::string soname;
  std::string via;           // via_name(): "RPATH", "LD_LIBRARY_PATH", "already loaded", "not found", …
  std::string detail;
  std::vector<std::string> tried;
  bool unloaded = false;     // loaded by a dlopen that failed further down: unmapped again
  std::string family;        // CUDA library family ("cudnn"), "" for anything else
  std::string version;       // of the file: wheel RECORD, file name; "" when unknown
  bool stub = false;         // the file lies in a stubs/ directory (a toolkit's link-time stub)
  // Found through LD_LIBRARY_PATH: the file the same request gets with LD_LIBRARY_PATH unset
  // (what this copy shadows: a wheel's copy its RUNPATH names, the driver's libcuda), how, its version.
  std::string shadowed;
  std::string shadowed_via;
  std::string shadowed_version;
  // When the process maps it (loader's LoadTime): "startup" (the program's start, `import`),
  // "first_call" (at the first call of the library that dlopens it), "on_demand" (only a call
  // that needs it); "" for --pid, whose maps say what is mapped, not when.
  std::string loads;
};
CD_JSON(LoadedLibrary, name, requested_by, depth, path, realpath, soname, via, detail, tried, unloaded, family, version,
        stub, shadowed, shadowed_via, shadowed_version, loads)

struct ProcessLibs {
  std::string subject;  // "/usr/bin/app", "pid 4242 (python3)", "python /opt/torch/.venv/bin/python3"
  std::string kind;     // "file", "pid", "python"
  std::vector<LoadedLibrary> loads;   // every request in load order (file, python)
  std::vector<LoadedLibrary> mapped;  // --pid: files mapped in /proc/PID/maps, in address order, once each (path only)
  std::vector<std::string> ld_library_path;
  std::vector<std::string> preload;   // LD_PRELOAD / --preload, in order
  std::string error;                  // why the process could not be read ("" = fine)
};
CD_JSON(ProcessLibs, subject, kind, loads, mapped, ld_library_path, preload, error)

}  // namespace cd
