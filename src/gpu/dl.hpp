#pragma once
// dlopen'ed NVIDIA libraries: symbol lookup and the CUDA_DOCTOR_LIB* overrides
// shared by every loader in gpu/ (libcuda, NVML, NCCL, cuBLAS).
#include <dlfcn.h>

#include <cstdlib>
#include <initializer_list>
#include <string>
#include <vector>

namespace cd::gpu {

// Resolves the first of `names` the library exports (versioned names first) into `fn`.
template <class Fn>
bool resolve(void* handle, Fn& fn, std::initializer_list<const char*> names) {
  for (const char* name : names) {
    if (void* sym = dlsym(handle, name)) {
      fn = reinterpret_cast<Fn>(sym);
      return true;
    }
  }
  return false;
}

// The library to load: `env_var`'s value when set (tests, fakes), else `soname`.
inline std::string library_path(const char* env_var, const char* soname) {
  const char* env = std::getenv(env_var);
  return env && *env ? env : soname;
}

// A library opened from the first of `tries` that loads (paths or bare sonames).
struct Opened {
  void* handle = nullptr;
  std::string path;   // the file really mapped (dladdr of `probe_symbol`), else the try that loaded
  std::string error;  // dlerror() of the first failure, for the report when nothing loads
};

// `probe_symbol`: any symbol the library exports, to learn which file the loader chose.
inline Opened open_first(const std::vector<std::string>& tries, const char* probe_symbol) {
  Opened o;
  for (const std::string& t : tries) {
    if (void* h = dlopen(t.c_str(), RTLD_NOW | RTLD_LOCAL)) {
      Dl_info info{};
      void* sym = dlsym(h, probe_symbol);
      o.handle = h;
      o.path = sym && dladdr(sym, &info) && info.dli_fname ? info.dli_fname : t;
      return o;
    }
    if (const char* e = dlerror(); e && o.error.empty()) o.error = e;
  }
  return o;
}

// dirs/<soname> for every dir and soname, then each bare soname (the loader's search).
inline std::vector<std::string> library_tries(const std::vector<std::string>& dirs, std::initializer_list<const char*> sonames) {
  std::vector<std::string> tries;
  for (const std::string& d : dirs)
    for (const char* so : sonames) tries.push_back(d + "/" + so);
  for (const char* so : sonames) tries.push_back(so);
  return tries;
}

}  // namespace cd::gpu
