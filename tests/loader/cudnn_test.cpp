// cuDNN 9's own dlopen of its sub-libraries, against the real libcudnn.so.9 of this
// machine's toolkit: a program dlopens the shim and calls cudnnGetVersion (which runs in
// libcudnn_graph), then prints the version it got and /proc/self/maps. The emulation
// (loader/cudnn) must pick the same libcudnn_graph file. This is how a system cuDNN on
// LD_LIBRARY_PATH answers for the wheel's shim: the version torch sees is the graph
// library's.
#include <gtest/gtest.h>

#include <map>
#include <set>
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
               "  while (fgets(l, sizeof l, f)) if (strstr(l, \"libcudnn_\")) printf(\"map %s\", strchr(l, '/'));\n"
               "  return 0; }\n");
    prog = t / "prog";
    ASSERT_EQ(sh("gcc -o " + quote(prog) + " " + quote(t / "p.c")).rc, 0);
  }
  // The real process: cudnnGetVersion's answer and the graph library it mapped.
  std::pair<std::string, std::string> real(const std::string& ldlp) {
    std::string version, map;
    for (const auto& m : real_maps(ldlp, &version))
      if (m.find("libcudnn_graph") != std::string::npos && map.empty()) map = m;
    return {version, map};
  }
  // Every libcudnn_* file mapped after cudnnGetVersion, in address order, once each.
  std::vector<std::string> real_maps(const std::string& ldlp, std::string* version = nullptr) {
    auto r = sh("env -i " + (ldlp.empty() ? "" : "LD_LIBRARY_PATH=" + quote(ldlp) + " ") + quote(prog) + " " + quote(t / "wheel/libcudnn.so.9"));
    std::vector<std::string> maps;
    std::istringstream in(r.out);
    for (std::string line; std::getline(in, line);) {
      if (line.rfind("version ", 0) == 0 && version) *version = line.substr(8);
      if (line.rfind("map ", 0) == 0 && (maps.empty() || maps.back() != line.substr(4))) maps.push_back(line.substr(4));
    }
    return maps;
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

// A program that calls cudnnGetVersion, then cudnnCreateTensorDescriptor (an ops call; none
// of them needs a GPU), printing the libcudnn_* files mapped after each.
std::string build_staged(const TempDir& t) {
  write_file(t / "s.c",
             "#include <dlfcn.h>\n#include <stdio.h>\n#include <string.h>\n"
             "static void maps(const char* when) { FILE* f = fopen(\"/proc/self/maps\", \"r\"); char l[4096];\n"
             "  while (fgets(l, sizeof l, f)) if (strstr(l, \"libcudnn_\")) printf(\"%s %s\", when, strchr(l, '/')); fclose(f); }\n"
             "int main(int c, char** v) { void* h = dlopen(v[1], RTLD_NOW); if (!h) return 2;\n"
             "  ((size_t (*)(void))dlsym(h, \"cudnnGetVersion\"))(); maps(\"version\");\n"
             "  void* d = 0; printf(\"tensor %d\\n\", ((int (*)(void**))dlsym(h, \"cudnnCreateTensorDescriptor\"))(&d)); maps(\"tensor\");\n"
             "  return 0; }\n");
  std::string prog = t / "staged";
  return sh("gcc -o " + quote(prog) + " " + quote(t / "s.c") + " -ldl").rc == 0 ? prog : "";
}

// stage ("version", "tensor") → the libcudnn_* files mapped then, once each.
std::map<std::string, std::set<std::string>> staged_maps(const std::string& prog, const std::string& shim, const std::string& ldlp) {
  auto r = sh("env -i " + (ldlp.empty() ? "" : "LD_LIBRARY_PATH=" + quote(ldlp) + " ") + quote(prog) + " " + quote(shim));
  std::map<std::string, std::set<std::string>> out;
  std::istringstream in(r.out);
  for (std::string line; std::getline(in, line);)
    if (auto sp = line.find(" /"); sp != std::string::npos) out[line.substr(0, sp)].insert(line.substr(sp + 1));
  return out;
}

TEST_F(CudnnShim, TheFirstCallLoadsTheGraphLibraryAndOpsOnlyWhenACallNeedsIt) {
  // The real 9.19 shim beside all its real sub-libraries: cudnnGetVersion maps libcudnn_graph
  // alone; cudnnCreateTensorDescriptor then maps libcudnn_ops. The emulation marks graph (and
  // what graph loads) "first_call", ops/cnn/adv "on_demand".
  for (const auto& e : fs::directory_iterator(path_dirname(kShim)))
    if (e.path().filename().string().rfind("libcudnn_", 0) == 0) fs::create_symlink(e.path(), t / ("wheel/" + e.path().filename().string()));
  std::string staged = build_staged(t);
  ASSERT_FALSE(staged.empty());
  auto maps = staged_maps(staged, t / "wheel/libcudnn.so.9", "");
  std::string ops = canon(path_join(path_dirname(kShim), "libcudnn_ops.so.9"));
  EXPECT_EQ(maps["version"], std::set<std::string>{canon(kGraph)});
  EXPECT_EQ(maps["tensor"], (std::set<std::string>{canon(kGraph), ops}));
  Root root;
  LoaderSystem sys(root, default_loader_config(root));
  Process p(sys, staged);
  ASSERT_GE(p.dlopen(t / "wheel/libcudnn.so.9"), 0);
  load_cudnn_sublibs(p, [&](int i) { return p.objects()[i].soname == "libcudnn.so.9" ? "9.19.0" : ""; });
  std::map<std::string, LoadTime> when;
  std::map<std::string, std::string> file;
  for (const auto& o : p.objects())
    if (o.soname.rfind("libcudnn", 0) == 0) when[o.soname] = o.when, file[o.soname] = canon(o.path);
  EXPECT_EQ(when["libcudnn.so.9"], LoadTime::startup);
  EXPECT_EQ(when["libcudnn_graph.so.9"], LoadTime::first_call);
  EXPECT_EQ(when["libcudnn_engines_precompiled.so.9"], LoadTime::first_call);
  EXPECT_EQ(when["libcudnn_heuristic.so.9"], LoadTime::first_call);
  for (const char* s : {"libcudnn_ops.so.9", "libcudnn_cnn.so.9", "libcudnn_adv.so.9"}) {
    ASSERT_TRUE(when.count(s)) << s;
    EXPECT_EQ(when[s], LoadTime::on_demand) << s;
  }
  EXPECT_EQ(file["libcudnn_graph.so.9"], canon(kGraph));
  EXPECT_EQ(file["libcudnn_ops.so.9"], ops);
}

TEST_F(CudnnShim, LdLibraryPathGivesOpsFromAnotherInstallationOnlyAtTheCallThatNeedsIt) {
  // A directory on LD_LIBRARY_PATH with only a libcudnn_ops.so.9: the first call
  // gets the shim's own graph library; the ops call maps the other ops library.
  for (const char* s : {"libcudnn_graph.so.9", "libcudnn_ops.so.9"})
    fs::create_symlink(path_join(path_dirname(kShim), s), t / (std::string("wheel/") + s));
  fs::create_directories(t / "opsdir");
  write_file(t / "o.c", "int cudnnCreateTensorDescriptor(void** d) { *d = 0; return 0; }\n");
  ASSERT_EQ(sh("gcc -shared -fPIC -o " + quote(t / "opsdir/libcudnn_ops.so.9") + " " + quote(t / "o.c") + " -Wl,-soname,libcudnn_ops.so.9").rc, 0);
  std::string staged = build_staged(t);
  ASSERT_FALSE(staged.empty());
  auto maps = staged_maps(staged, t / "wheel/libcudnn.so.9", t / "opsdir");
  EXPECT_EQ(maps["version"], std::set<std::string>{canon(kGraph)});
  EXPECT_TRUE(maps["tensor"].count(canon(t / "opsdir/libcudnn_ops.so.9"))) << "LD_LIBRARY_PATH before the shim's RUNPATH";
  Root root;
  LoaderConfig cfg = default_loader_config(root);
  cfg.ld_library_path = {t / "opsdir"};
  LoaderSystem sys(root, cfg);
  Process p(sys, staged);
  ASSERT_GE(p.dlopen(t / "wheel/libcudnn.so.9"), 0);
  int graph = load_cudnn_sublibs(p, [&](int i) { return p.objects()[i].soname == "libcudnn.so.9" ? "9.19.0" : ""; });
  ASSERT_GE(graph, 0);
  EXPECT_EQ(canon(p.objects()[graph].path), canon(kGraph));
  int ops = p.find("libcudnn_ops.so.9");
  ASSERT_GE(ops, 0);
  EXPECT_EQ(canon(p.objects()[ops].path), canon(t / "opsdir/libcudnn_ops.so.9"));
  EXPECT_EQ(p.objects()[ops].when, LoadTime::on_demand);
}

TEST_F(CudnnShim, ALateShimMakesItsFirstCallLate) {
  // A shim dlopened on demand (by a library loaded when a call needs it) cannot make its
  // first call earlier: its graph library inherits the later time.
  fs::create_symlink(kGraph, t / "wheel/libcudnn_graph.so.9");
  Root root;
  LoaderSystem sys(root, default_loader_config(root));
  Process p(sys, prog);
  int shim = p.dlopen(t / "wheel/libcudnn.so.9", -1, LoadTime::on_demand);
  ASSERT_GE(shim, 0);
  EXPECT_EQ(p.objects()[shim].when, LoadTime::on_demand);
  int graph = load_cudnn_sublibs(p, [&](int) { return std::string("9.19.0"); });
  ASSERT_GE(graph, 0);
  EXPECT_EQ(p.objects()[graph].when, LoadTime::on_demand);
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
