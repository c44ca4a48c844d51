// NVRTC's dlopen of its builtins library, against the real libnvrtc.so.13 of this machine's
// toolkit: a program dlopens libnvrtc, compiles a kernel (nvrtc needs no GPU for that) and
// prints the compile's result and the builtins file it mapped; LD_DEBUG=libs gives the name
// it asked for. The emulation (loader/nvrtc) must ask for the same name and get the same file.
#include <gtest/gtest.h>

#include <sstream>

#include "loader/elf_fixtures.hpp"
#include "loader/nvrtc.hpp"

namespace cd {
namespace {

using namespace cd::testing;

const std::string kNvrtc = "/usr/local/cuda/lib64/libnvrtc.so.13";

std::string canon(const std::string& p) {
  std::error_code ec;
  auto c = fs::canonical(p, ec);
  return ec ? p : c.string();
}

struct Real {
  int compile = -1;     // nvrtcCompileProgram's result (0 = NVRTC_SUCCESS)
  std::string asked;    // the name of LD_DEBUG's "find library=…" for the builtins
  std::string mapped;   // the builtins file in /proc/self/maps
};

class NvrtcBuiltins : public ::testing::Test {
 protected:
  TempDir t;
  std::string builtins;  // the toolkit's, next to libnvrtc
  void SetUp() override {
    if (!fs::exists(kNvrtc)) GTEST_SKIP() << kNvrtc << " not installed";
    builtins = canon(path_join(path_dirname(canon(kNvrtc)), nvrtc_builtins_name(Root(), kNvrtc)));
    write_file(t / "p.c",
               "#include <dlfcn.h>\n#include <stdio.h>\n#include <string.h>\n"
               "typedef int (*create_t)(void**, const char*, const char*, int, const char* const*, const char* const*);\n"
               "typedef int (*compile_t)(void*, int, const char* const*);\n"
               "int main(int c, char** v) { void* h = dlopen(v[1], RTLD_NOW); if (!h) return 2;\n"
               "  void* prog = 0; ((create_t)dlsym(h, \"nvrtcCreateProgram\"))(&prog,\n"
               "    \"extern \\\"C\\\" __global__ void k(float* x) { x[threadIdx.x] *= 2.f; }\", \"k.cu\", 0, 0, 0);\n"
               "  printf(\"compile %d\\n\", ((compile_t)dlsym(h, \"nvrtcCompileProgram\"))(prog, 0, 0));\n"
               "  FILE* f = fopen(\"/proc/self/maps\", \"r\"); char l[4096];\n"
               "  while (fgets(l, sizeof l, f)) if (strstr(l, \"libnvrtc-builtins\")) { printf(\"map %s\", strchr(l, '/')); break; }\n"
               "  return 0; }\n");
    ASSERT_EQ(sh("gcc -o " + quote(t / "prog") + " " + quote(t / "p.c") + " -ldl").rc, 0);
  }
  // `rpath`: the program's DT_RPATH (inherited by what it dlopens, libnvrtc has none of its own).
  std::string program(const std::string& rpath) {
    if (rpath.empty()) return t / "prog";
    std::string out = t / "prog-rpath";
    EXPECT_EQ(sh("gcc -o " + quote(out) + " " + quote(t / "p.c") + " -ldl -Wl,--disable-new-dtags,-rpath," + quote(rpath)).rc, 0);
    return out;
  }
  Real real(const std::string& prog, const std::string& nvrtc, const std::string& ldlp) {
    auto r = sh("env -i LD_DEBUG=libs " + (ldlp.empty() ? "" : "LD_LIBRARY_PATH=" + quote(ldlp) + " ") + quote(prog) + " " + quote(nvrtc));
    Real out;
    std::istringstream in(r.out);
    for (std::string line; std::getline(in, line);) {
      if (line.rfind("compile ", 0) == 0) out.compile = std::stoi(line.substr(8));
      if (line.rfind("map ", 0) == 0) out.mapped = line.substr(4);
      auto at = line.find("find library=libnvrtc-builtins");
      if (at != std::string::npos && out.asked.empty()) out.asked = line.substr(at + 13, line.find(" ", at + 13) - at - 13);
    }
    return out;
  }
  // The emulation: the same dlopen, then the first compile.
  std::pair<std::string, LoadTime> emulated(const std::string& prog, const std::string& nvrtc, const std::string& ldlp) {
    Root root;
    LoaderConfig cfg = default_loader_config(root);
    cfg.ld_library_path = split_search_path(ldlp);
    LoaderSystem sys(root, cfg);
    Process p(sys, prog);
    if (p.dlopen(nvrtc) < 0) return {"dlopen failed", LoadTime::startup};
    int b = load_nvrtc_builtins(p);
    if (b < 0) return {"not found", LoadTime::startup};
    return {canon(p.objects()[b].path), p.objects()[b].when};
  }
};

TEST_F(NvrtcBuiltins, TheNameItAsksFor) {
  Real r = real(t / "prog", kNvrtc, "");
  EXPECT_EQ(r.compile, 0);
  EXPECT_EQ(r.asked, "libnvrtc-builtins.so.13.0");
  EXPECT_EQ(nvrtc_builtins_name(Root(), kNvrtc), r.asked);
  EXPECT_EQ(nvrtc_builtins_name(Root(), t / "p.c"), "");  // not ELF
  EXPECT_EQ(r.mapped, builtins);
  auto [file, when] = emulated(t / "prog", kNvrtc, "");
  EXPECT_EQ(file, r.mapped);
  EXPECT_EQ(when, LoadTime::on_demand);
}

TEST_F(NvrtcBuiltins, LdLibraryPathHoldsAnotherCopy) {
  fs::create_directories(t / "other");
  fs::copy_file(builtins, t / "other/libnvrtc-builtins.so.13.0");
  Real r = real(t / "prog", kNvrtc, t / "other");
  EXPECT_EQ(r.compile, 0);
  EXPECT_EQ(r.mapped, canon(t / "other/libnvrtc-builtins.so.13.0"));
  EXPECT_EQ(emulated(t / "prog", kNvrtc, t / "other").first, r.mapped);
}

TEST_F(NvrtcBuiltins, ItsOwnDirectoryIsNotSearched) {
  // A wheel-shaped directory: libnvrtc (by a link: $ORIGIN would be this directory) with its
  // own builtins copy. libnvrtc has no RUNPATH, so the copy beside it is not what it gets.
  fs::create_directories(t / "wheel");
  fs::create_symlink(canon(kNvrtc), t / "wheel/libnvrtc.so.13");
  fs::copy_file(builtins, t / "wheel/libnvrtc-builtins.so.13.0");
  Real r = real(t / "prog", t / "wheel/libnvrtc.so.13", "");
  EXPECT_EQ(r.compile, 0);
  EXPECT_NE(r.mapped, canon(t / "wheel/libnvrtc-builtins.so.13.0"));
  EXPECT_EQ(emulated(t / "prog", t / "wheel/libnvrtc.so.13", "").first, r.mapped);
}

TEST_F(NvrtcBuiltins, TheRpathOfWhatLoadedItIsInherited) {
  // torch's shape: the object that loads libnvrtc has a DT_RPATH naming the wheel directory
  // (libtorch_cuda.so's $ORIGIN/../../nvidia/…/lib); libnvrtc's dlopen searches it first.
  fs::create_directories(t / "wheel");
  fs::copy_file(builtins, t / "wheel/libnvrtc-builtins.so.13.0");
  std::string prog = program(t / "wheel");
  Real r = real(prog, kNvrtc, "");
  EXPECT_EQ(r.compile, 0);
  EXPECT_EQ(r.mapped, canon(t / "wheel/libnvrtc-builtins.so.13.0"));
  EXPECT_EQ(emulated(prog, kNvrtc, "").first, r.mapped);
  // Ahead of LD_LIBRARY_PATH, as RPATH is.
  fs::create_directories(t / "other");
  fs::copy_file(builtins, t / "other/libnvrtc-builtins.so.13.0");
  Real r2 = real(prog, kNvrtc, t / "other");
  EXPECT_EQ(r2.mapped, canon(t / "wheel/libnvrtc-builtins.so.13.0"));
  EXPECT_EQ(emulated(prog, kNvrtc, t / "other").first, r2.mapped);
}

TEST_F(NvrtcBuiltins, ABrokenCopyFailsTheCompileWithNoRetry) {
  // A non-ELF file by that name on LD_LIBRARY_PATH stops the search, and libnvrtc tries no
  // other name or directory: the compile fails (NVRTC_ERROR_BUILTIN_OPERATION_FAILURE, 7).
  write_file(t / "bad/libnvrtc-builtins.so.13.0", "not an ELF file\n");
  Real r = real(t / "prog", kNvrtc, t / "bad");
  EXPECT_EQ(r.compile, 7);
  EXPECT_EQ(r.mapped, "");
  EXPECT_EQ(emulated(t / "prog", kNvrtc, t / "bad").first, "not found");
}

}  // namespace
}  // namespace cd
