#pragma once
// Real CUDA binaries built by the local nvcc at test time, once per build tree
// (cached under CD_BUILD_DIR/nvcc-fixtures, guarded by flock so parallel ctest runs
// share them). Shared by tests/binary and tests/scan.
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <random>
#include <string>

#include <gtest/gtest.h>

namespace fx {

inline const char* kNvcc = "/usr/local/cuda/bin/nvcc";

inline bool have_nvcc() { return access(kNvcc, X_OK) == 0; }

inline std::string dir() {
  std::string d = std::string(CD_BUILD_DIR) + "/nvcc-fixtures";
  mkdir(d.c_str(), 0755);
  return d;
}

// Two kernels and a host launcher; the kernel names are what --kernels must find.
// Written to a private file and renamed over k.cu: ctest runs these tests in parallel
// and each calls source() outside the build lock, so truncating k.cu in place could
// hand a half-written file to another test's nvcc.
inline std::string source() {
  std::string path = dir() + "/k.cu";
  std::string tmp = path + "." + std::to_string(getpid()) + ".tmp";
  std::ofstream(tmp) << "__global__ void kern_a(float* x) { x[threadIdx.x] += 1.0f; }\n"
                        "__global__ void kern_b(int* x) { x[threadIdx.x] *= 2; }\n"
                        "void launch(float* x) { kern_a<<<1, 1>>>(x); }\n"
                        "#ifdef WITH_MAIN\nint main() { launch(nullptr); return 0; }\n#endif\n";
  std::rename(tmp.c_str(), path.c_str());
  return path;
}

// big.cu: a kernel whose image carries 256 KiB of random (so incompressible) initialized device
// data: images many pages long, headers few (a library of ≥ 1 MiB with three or more GPUs).
inline std::string big_source() {
  std::string cu = dir() + "/big.cu";
  if (access(cu.c_str(), R_OK) == 0) return cu;
  std::string tmp = cu + "." + std::to_string(getpid()) + ".tmp";
  std::ofstream out(tmp);
  std::mt19937 random(7);
  out << "__device__ unsigned table[65536] = {";
  for (int i = 0; i < 65536; ++i) out << random() << "u,";
  out << "};\n__global__ void lookup(unsigned* o) { o[threadIdx.x] = table[threadIdx.x * 97]; }\n";
  out.close();
  std::rename(tmp.c_str(), cu.c_str());
  return cu;
}

// Runs `command` (with $OUT = the output path, in the fixture dir) unless the output
// exists; returns the output path, or "" after recording a test failure.
inline std::string build(const std::string& name, const std::string& command) {
  std::string out = dir() + "/" + name;
  if (access(out.c_str(), R_OK) == 0) return out;
  source();
  std::string tmp = out + ".tmp";
  std::string sh = "cd '" + dir() + "' && flock .lock sh -c 'test -e \"" + out + "\" || { OUT=\"" + tmp + "\"; " +
                   command + " && mv \"" + tmp + "\" \"" + out + "\"; }' >'" + out + ".log' 2>&1";
  if (std::system(sh.c_str()) != 0 || access(out.c_str(), R_OK) != 0) {
    ADD_FAILURE() << "fixture build failed: " << command << " (see " << out << ".log)";
    return "";
  }
  return out;
}

// nvcc -c k.cu with the given flags -> NAME.o
inline std::string object(const std::string& name, const std::string& flags) {
  return build(name + ".o", std::string(kNvcc) + " -c k.cu -o \"$OUT\" " + flags);
}

// nvcc -shared -Xcompiler -fPIC k.cu -> NAME.so
inline std::string shared(const std::string& name, const std::string& flags) {
  return build(name + ".so", std::string(kNvcc) + " -shared -Xcompiler -fPIC k.cu -o \"$OUT\" " + flags);
}

}  // namespace fx
