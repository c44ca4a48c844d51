#pragma once
// NVRTC's own dlopen of its builtins library, emulated on a Process. libnvrtc.so.N has no
// RPATH or RUNPATH; at the first nvrtcCompileProgram it dlopens one bare name that it holds
// as a string ("libnvrtc-builtins.so.13.0"; read from the file, as no soname or version
// file says the minor it wants), with no retry under another name or directory when that
// fails (the compile returns
// NVRTC_ERROR_BUILTIN_OPERATION_FAILURE). So the search is an ordinary dlopen from libnvrtc:
// the RPATHs of the chain of objects that loaded it (a DT_RPATH library that needs libnvrtc
// lends it its directories), LD_LIBRARY_PATH, ld.so.cache, the default dirs. Seen with LD_DEBUG=libs on the real CUDA
// 13.0 libnvrtc.so.13 (tests/loader/nvrtc_test.cpp compiles with it against the emulation).
#include <string>

#include "loader/loader.hpp"

namespace cd {

// The builtins name the libnvrtc at an in-root path asks for, read from its .rodata
// ("libnvrtc-builtins.so.13.0"); "" when it holds none or cannot be read.
std::string nvrtc_builtins_name(const Root& root, const std::string& path);

// The first compile: for the first libnvrtc.so.N mapped in `proc`, its builtins library
// (LoadTime::on_demand). Returns the builtins' object index, -1 when none or not found.
int load_nvrtc_builtins(Process& proc);

}  // namespace cd
