// ELF dynamic-section reading against readelf on real NVIDIA libraries and libraries
// built here, plus corrupt files.
#include <gtest/gtest.h>

#include "loader/elf_dyn.hpp"
#include "loader/elf_fixtures.hpp"
#include "util/errors.hpp"

namespace cd {
namespace {

using namespace cd::testing;

// readelf -d as the oracle: NEEDED list, SONAME, RPATH, RUNPATH.
ElfDyn readelf(const std::string& path) {
  ElfDyn d;
  auto r = sh("readelf -d " + quote(path));
  std::string line;
  for (char c : r.out + "\n") {
    if (c != '\n') { line += c; continue; }
    auto br = line.find('['), end = line.rfind(']');
    if (br != std::string::npos && end != std::string::npos) {
      std::string v = line.substr(br + 1, end - br - 1);
      if (line.find("(NEEDED)") != std::string::npos) d.needed.push_back(v);
      if (line.find("(SONAME)") != std::string::npos) d.soname = v;
      if (line.find("(RPATH)") != std::string::npos) d.rpath = v, d.has_rpath = true;
      if (line.find("(RUNPATH)") != std::string::npos) d.runpath = v, d.has_runpath = true;
    }
    line.clear();
  }
  return d;
}

void expect_like_readelf(const std::string& path) {
  ElfDyn ours = read_elf_dyn(path), ref = readelf(path);
  EXPECT_EQ(ours.needed, ref.needed) << path;
  EXPECT_EQ(ours.soname, ref.soname) << path;
  EXPECT_EQ(ours.rpath, ref.rpath) << path;
  EXPECT_EQ(ours.runpath, ref.runpath) << path;
  EXPECT_EQ(ours.has_runpath, ref.has_runpath) << path;
}

TEST(ElfDyn, RealNvidiaLibrariesMatchReadelf) {
  int seen = 0;
  for (const char* lib : {"libcudart.so.13", "libcublas.so.13", "libcublasLt.so.13", "libcudnn.so.9", "libnccl.so.2",
                          "libnvJitLink.so.13", "libcusparse.so.12"}) {
    std::string path = std::string("/usr/local/cuda/lib64/") + lib;
    if (!fs::exists(path)) continue;
    ++seen;
    expect_like_readelf(path);
  }
  if (!seen) GTEST_SKIP() << "no CUDA toolkit";
  ElfDyn cublas = read_elf_dyn("/usr/local/cuda/lib64/libcublas.so.13");
  EXPECT_EQ(cublas.soname, "libcublas.so.13");
  EXPECT_EQ(cublas.elf_class, 2);
  EXPECT_EQ(cublas.machine, 62);
}

TEST(ElfDyn, BuiltLibrariesRpathVsRunpath) {
  TempDir t;
  ASSERT_EQ(build_elf(t / "libdep.so", LibSpec().with_soname("libdep.so.3")), "");
  ASSERT_EQ(build_elf(t / "librp.so", LibSpec().with_soname("librp.so.1").with_needed(std::vector<std::string>{t / "libdep.so"}).with_rpath("$ORIGIN/../a:/b")), "");
  ASSERT_EQ(build_elf(t / "librun.so", LibSpec().with_soname("librun.so.1").with_runpath("$ORIGIN").with_extra("-Wl,-z,nodefaultlib")), "");
  expect_like_readelf(t / "librp.so");
  expect_like_readelf(t / "librun.so");
  ElfDyn rp = read_elf_dyn(t / "librp.so");
  EXPECT_TRUE(rp.effective_rpath());
  EXPECT_EQ(rp.needed.front(), "libdep.so.3");
  ElfDyn run = read_elf_dyn(t / "librun.so");
  EXPECT_FALSE(run.effective_rpath());
  EXPECT_TRUE(run.nodeflib);
  ElfDyn exe = read_elf_dyn("/bin/sh");
  EXPECT_FALSE(exe.interp.empty());
}

std::string error_of(const std::string& bytes) {
  try {
    read_elf_dyn_memory(bytes, "x.so");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(ElfDyn, CorruptFilesGiveOneLineErrors) {
  EXPECT_NE(error_of("").find("not an ELF file"), std::string::npos);
  EXPECT_NE(error_of("garbage garbage garbage").find("not an ELF file"), std::string::npos);
  std::ifstream in("/usr/local/cuda/lib64/libcudart.so.13", std::ios::binary);
  if (!in) GTEST_SKIP();
  std::string full((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  // Truncations at many points: each gives a clean error or a (partial) result, never a crash.
  for (size_t cut : {size_t{16}, size_t{64}, size_t{100}, size_t{4096}, full.size() / 2, full.size() - 1}) {
    std::string e = error_of(full.substr(0, cut));
    EXPECT_EQ(e.find('\n'), std::string::npos);
    if (cut < 64) {
      EXPECT_FALSE(e.empty()) << cut;
    }
  }
  // Corrupt the dynamic segment's offset to point past the end.
  ElfDyn ok = read_elf_dyn_memory(full);
  EXPECT_EQ(ok.soname, "libcudart.so.13");
  EXPECT_THROW(read_elf_dyn("/nonexistent/libx.so"), InputError);
}

}  // namespace
}  // namespace cd
