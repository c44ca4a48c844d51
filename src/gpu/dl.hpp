#pragma once
// dlopen'ed NVIDIA libraries: symbol lookup and the CUDA_DOCTOR_LIB* overrides
// shared by every loader in gpu/ (libcuda, NVML, NCCL, cuBLAS).
#include <dlfcn.h>

#include <cstdlib>
#include <initializer_list>
#include <string>

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

}  // namespace cd::gpu
