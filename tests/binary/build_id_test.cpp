// binary/build_id on real ELF files: nvcc-linked libraries given a build-id (and none), and
// CUDA's own libraries, against readelf -n as the oracle.
#include "binary/build_id.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <string>

#include <gtest/gtest.h>

#include "nvcc_fixtures.hpp"

namespace cd::bin {
namespace {

std::string id_of(const std::string& path) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  std::string id = gnu_build_id(fd);
  if (fd >= 0) close(fd);
  return id;
}

// readelf's "Build ID: <hex>" line, "" without one.
std::string readelf_id(const std::string& path) {
  std::string out;
  if (FILE* p = popen(("readelf -n '" + path + "' 2>/dev/null").c_str(), "r")) {
    char line[512];
    while (fgets(line, sizeof line, p)) {
      std::string l(line);
      if (auto at = l.find("Build ID: "); at != std::string::npos) out = l.substr(at + 10, l.find_first_of(" \n", at + 10) - at - 10);
    }
    pclose(p);
  }
  return out;
}

TEST(BuildId, NvccLinkedLibrariesCarryTheLinkersId) {
  if (!fx::have_nvcc()) GTEST_SKIP() << "no nvcc at " << fx::kNvcc;
  std::string with = fx::shared("libk_id", "-gencode arch=compute_80,code=sm_80 -Xlinker --build-id=0x00112233445566778899aabbccddeeff01234567");
  std::string none = fx::shared("libk_noid", "-gencode arch=compute_80,code=sm_80 -Xlinker --build-id=none");
  ASSERT_FALSE(with.empty());
  ASSERT_FALSE(none.empty());
  EXPECT_EQ(id_of(with), "00112233445566778899aabbccddeeff01234567");
  EXPECT_EQ(id_of(none), "");
  EXPECT_EQ(readelf_id(none), "") << "the oracle agrees there is none";
}

TEST(BuildId, CudaLibrariesAgreeWithReadelf) {
  int checked = 0;
  for (const char* lib : {"/usr/local/cuda/lib64/libcufft.so.12", "/usr/local/cuda/lib64/libcublasLt.so.13",
                          "/usr/local/cuda/lib64/libcudart.so.13"}) {
    if (access(lib, R_OK) != 0) continue;
    std::string want = readelf_id(lib);
    if (want.empty()) continue;
    EXPECT_EQ(id_of(lib), want) << lib;
    ++checked;
  }
  if (checked == 0) GTEST_SKIP() << "no CUDA library with a build-id, or no readelf";
}

TEST(BuildId, NotElfOrNoFileIsEmpty) {
  EXPECT_EQ(gnu_build_id(-1), "");
  EXPECT_EQ(id_of("/etc/hostname"), "");
  EXPECT_EQ(id_of("/usr/local/cuda/lib64/libcudart_static.a"), "") << "an archive has none of its own";
}

}  // namespace
}  // namespace cd::bin
