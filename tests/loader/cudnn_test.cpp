// cuDNN 9's own dlopen of its sub-libraries, against the real libcudnn.so.9 of this
// machine's toolkit: a program dlopens the shim and calls cudnnGetVersion (which runs in
// libcudnn_graph), then prints the version it got and /proc/self/maps. The emulation
// (loader/cudnn) must pick the same libcudnn_graph file. This is how a system cuDNN on
// LD_LIBRARY_PATH answers for the wheel's shim: the version torch sees is the graph
// library's.
#include <gtest/gtest.h>

#include <sstream>

#include "loader/cudnn.hpp"
#include "loader/elf_fixtures.hpp"

namespace cd {
namespace {

using namespace cd::testing;

const std::string kShim = "/usr/local/cuda/lib64/libcudnn.so.9";
const std::string kGraph = "/usr/local/cuda/lib64/libcudnn_graph.so.9";

std::string canon(const std::string& p) {
  std::error_code ec;
  auto c = fs::canonical(p, ec);
  return ec ? p : c.string();
}

TEST(CudnnNames, MostSpecificFirst) {
  EXPECT_EQ(cudnn_sublib_names("graph", "9", "9.19.0.56"),
            (std::vector<std::string>{"libcudnn_graph.so.9.19.0", "libcudnn_graph.so.9.19", "libcudnn_graph.so.9"}));
  EXPECT_EQ(cudnn_sublib_names("ops", "9", "9.14.0"),
            (std::vector<std::string>{"libcudnn_ops.so.9.14.0", "libcudnn_ops.so.9.14", "libcudnn_ops.so.9"}));
  EXPECT_EQ(cudnn_sublib_names("ops", "9", ""), std::vector<std::string>{"libcudnn_ops.so.9"});
  EXPECT_EQ(cudnn_sublib_names("ops", "9", "8.9.7"), std::vector<std::string>{"libcudnn_ops.so.9"});  // another major
}

class CudnnShim : public ::testing::Test {
 protected:
  TempDir t;
  std::string prog;
  void SetUp() override {
    if (!fs::exists(kShim) || !fs::exists(kGraph)) GTEST_SKIP() << kShim << " not installed";
    // A "wheel" directory holding the real shim and graph library (symlinks: $ORIGIN is the
    // directory a library was opened from), and a "system" directory with a graph library
    // that answers cudnnGetVersion with 9.14.0.
    fs::create_directories(t / "wheel");
    fs::create_directories(t / "sys");
    fs::create_symlink(kShim, t / "wheel/libcudnn.so.9");
    write_file(t / "g.c", "#include <stddef.h>\nsize_t cudnnGetVersion(void){return 91400;}\n");
    ASSERT_EQ(sh("gcc -shared -fPIC -o " + quote(t / "sys/libcudnn_graph.so.9") + " " + quote(t / "g.c") +
                 " -Wl,-soname,libcudnn_graph.so.9").rc,
              0);
    write_file(t / "p.c",
               "#include <dlfcn.h>\n#include <stdio.h>\n#include <string.h>\n"
               "int main(int c, char** v) { void* h = dlopen(v[1], RTLD_NOW); if (!h) return 2;\n"
               "  size_t (*gv)(void) = (size_t (*)(void))dlsym(h, \"cudnnGetVersion\"); printf(\"version %zu\\n\", gv());\n"
               "  FILE* f = fopen(\"/proc/self/maps\", \"r\"); char l[4096];\n"
               "  while (fgets(l, sizeof l, f)) { char* p = strstr(l, \"libcudnn_graph\"); if (p) { printf(\"map %s\", strchr(l, '/')); break; } }\n"
               "  return 0; }\n");
    prog = t / "prog";
    ASSERT_EQ(sh("gcc -o " + quote(prog) + " " + quote(t / "p.c")).rc, 0);
  }
  // The real process: cudnnGetVersion's answer and the graph library it mapped.
  std::pair<std::string, std::string> real(const std::string& ldlp) {
    auto r = sh("env -i " + (ldlp.empty() ? "" : "LD_LIBRARY_PATH=" + quote(ldlp) + " ") + quote(prog) + " " + quote(t / "wheel/libcudnn.so.9"));
    std::string version, map;
    std::istringstream in(r.out);
    for (std::string line; std::getline(in, line);) {
      if (line.rfind("version ", 0) == 0) version = line.substr(8);
      if (line.rfind("map ", 0) == 0) map = line.substr(4);
    }
    return {version, map};
  }
  // The emulation: the same dlopen, then the shim's first call.
  std::string emulated(const std::string& ldlp) {
    Root root;
    LoaderConfig cfg = default_loader_config(root);
    cfg.ld_library_path = split_search_path(ldlp);
    LoaderSystem sys(root, cfg);
    Process p(sys, prog);
    if (p.dlopen(t / "wheel/libcudnn.so.9") < 0) return "dlopen failed";
    int graph = load_cudnn_sublibs(p, [&](int i) { return p.objects()[i].soname == "libcudnn.so.9" ? "9.19.0" : ""; });
    return graph < 0 ? "not found" : canon(p.objects()[graph].path);
  }
};

TEST_F(CudnnShim, LdLibraryPathGivesTheShimAnotherGraphLibrary) {
  // Nothing next to the shim: its RUNPATH $ORIGIN finds no graph library, LD_LIBRARY_PATH's wins.
  auto [version, map] = real(t / "sys");
  EXPECT_EQ(version, "91400");
  EXPECT_EQ(map, canon(t / "sys/libcudnn_graph.so.9"));
  EXPECT_EQ(emulated(t / "sys"), map);
}

TEST_F(CudnnShim, LdLibraryPathBeatsTheShimsOwnDirectory) {
  fs::create_symlink(kGraph, t / "wheel/libcudnn_graph.so.9");
  auto [version, map] = real(t / "sys");
  EXPECT_EQ(version, "91400") << "LD_LIBRARY_PATH comes before the shim's RUNPATH";
  EXPECT_EQ(emulated(t / "sys"), map);
  auto [plain_version, plain_map] = real("");
  EXPECT_EQ(plain_version, "91900");
  EXPECT_EQ(plain_map, canon(kGraph));
  EXPECT_EQ(emulated(""), plain_map);
}

TEST_F(CudnnShim, AVersionedNameNextToTheShimWinsOverLdLibraryPath) {
  // The shim asks for libcudnn_graph.so.9.19.0 first: a file by that name anywhere on the
  // search path beats libcudnn_graph.so.9 on LD_LIBRARY_PATH.
  fs::create_symlink(kGraph, t / "wheel/libcudnn_graph.so.9.19.0");
  auto [version, map] = real(t / "sys");
  EXPECT_EQ(version, "91900");
  EXPECT_EQ(map, canon(kGraph));
  EXPECT_EQ(emulated(t / "sys"), map);
}

}  // namespace
}  // namespace cd
