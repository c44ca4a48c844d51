// The ld.so emulation against the real loader: for binaries built here with chosen
// DT_RPATH / DT_RUNPATH / $ORIGIN / LD_LIBRARY_PATH setups, every name must resolve to
// the same file `ld.so --list` reports (or to "not found" in both).
#include <gtest/gtest.h>

#include <set>

#include "loader/elf_fixtures.hpp"
#include "loader/loader.hpp"

namespace cd {
namespace {

using namespace cd::testing;

std::string canon(const std::string& p) {
  std::error_code ec;
  auto c = fs::canonical(p, ec);
  return ec ? p : c.string();
}

struct Emulated {
  std::map<std::string, std::string> resolved;  // name → canonical path / "not found"
  std::map<std::string, Via> via;
  std::string error;
};

Emulated emulate(const std::string& bin, const std::string& ldlp) {
  Root root;
  LoaderConfig cfg = default_loader_config(root);
  cfg.ld_library_path = split_search_path(ldlp);
  LoaderSystem sys(root, cfg);
  Process p(sys, bin);
  Emulated e;
  for (const auto& req : p.requests()) {
    if (req.requester < 0 || e.resolved.count(req.name)) continue;
    if (req.how.via == Via::error && e.error.empty()) e.error = req.how.detail;
    e.resolved[req.name] = req.object >= 0 ? canon(p.objects()[req.object].path) : "not found";
    e.via[req.name] = req.how.via;
  }
  return e;
}

// Every name the real loader lists resolves to the same file in the emulation.
void expect_same_as_ld_so(const std::string& bin, const std::string& ldlp) {
  std::string real_error;
  auto real = ld_so_list(bin, ldlp, &real_error);
  Emulated emu = emulate(bin, ldlp);
  ASSERT_FALSE(real.empty() && real_error.empty()) << "ld.so --list printed nothing for " << bin;
  for (const auto& [name, path] : real) {
    ASSERT_TRUE(emu.resolved.count(name)) << name << " not requested in the emulation";
    EXPECT_EQ(emu.resolved[name], path == "not found" ? path : canon(path)) << "for " << name << " (LD_LIBRARY_PATH=" << ldlp << ")";
  }
  for (const auto& [name, path] : emu.resolved)
    if (path == "not found" && real_error.empty()) {
      EXPECT_EQ(real[name], "not found") << name;
    }
}

class LoaderOracle : public ::testing::Test {
 protected:
  TempDir t;
  std::string a1, a2;  // two different libA.so copies
  void SetUp() override {
    a1 = t / "a1/libA.so";
    a2 = t / "a2/libA.so";
    ASSERT_EQ(build_elf(a1, LibSpec().with_soname("libA.so").with_value(1)), "");
    ASSERT_EQ(build_elf(a2, LibSpec().with_soname("libA.so").with_value(2)), "");
  }
};

TEST_F(LoaderOracle, RpathBeatsLdLibraryPath) {
  std::string bin = t / "bin/rpath";
  ASSERT_EQ(build_elf(bin, LibSpec().with_needed(std::vector<std::string>{a1}).with_rpath("$ORIGIN/../a1"), true), "");
  expect_same_as_ld_so(bin, t / "a2");
  EXPECT_EQ(emulate(bin, t / "a2").via["libA.so"], Via::rpath);
}

TEST_F(LoaderOracle, LdLibraryPathBeatsRunpath) {
  std::string bin = t / "bin/runpath";
  ASSERT_EQ(build_elf(bin, LibSpec().with_needed(std::vector<std::string>{a1}).with_runpath("$ORIGIN/../a1"), true), "");
  expect_same_as_ld_so(bin, t / "a2");
  EXPECT_EQ(emulate(bin, t / "a2").resolved["libA.so"], canon(a2));
  expect_same_as_ld_so(bin, "");
  EXPECT_EQ(emulate(bin, "").via["libA.so"], Via::runpath);
}

TEST_F(LoaderOracle, RpathIsInheritedRunpathIsNot) {
  // bin → libB (deps/) → libC (deps/ only): found through bin's RPATH, not through RUNPATH.
  std::string c = t / "deps/libC.so", b = t / "deps/libB.so";
  ASSERT_EQ(build_elf(c, LibSpec().with_soname("libC.so").with_value(3)), "");
  ASSERT_EQ(build_elf(b, LibSpec().with_soname("libB.so").with_needed(std::vector<std::string>{c})), "");
  std::string with_rpath = t / "bin/inherit_rpath", with_runpath = t / "bin/inherit_runpath";
  ASSERT_EQ(build_elf(with_rpath, LibSpec().with_needed(std::vector<std::string>{b}).with_rpath("$ORIGIN/../deps"), true), "");
  ASSERT_EQ(build_elf(with_runpath, LibSpec().with_needed(std::vector<std::string>{b}).with_runpath("$ORIGIN/../deps"), true), "");
  expect_same_as_ld_so(with_rpath, "");
  expect_same_as_ld_so(with_runpath, "");
  EXPECT_EQ(emulate(with_rpath, "").via["libC.so"], Via::rpath);
  EXPECT_EQ(emulate(with_runpath, "").resolved["libC.so"], "not found");
}

TEST_F(LoaderOracle, RunpathOnTheLoaderDisablesTheRpathWalk) {
  // libB has RUNPATH (pointing nowhere useful): libC is not searched in bin's RPATH.
  std::string c = t / "deps2/libC.so", b = t / "deps2/libB.so";
  ASSERT_EQ(build_elf(c, LibSpec().with_soname("libC.so")), "");
  ASSERT_EQ(build_elf(b, LibSpec().with_soname("libB.so").with_needed(std::vector<std::string>{c}).with_runpath("/nonexistent")), "");
  std::string bin = t / "bin/walk";
  ASSERT_EQ(build_elf(bin, LibSpec().with_needed(std::vector<std::string>{b}).with_rpath("$ORIGIN/../deps2"), true), "");
  expect_same_as_ld_so(bin, "");
  EXPECT_EQ(emulate(bin, "").resolved["libC.so"], "not found");
}

TEST_F(LoaderOracle, FirstSonameWinsProcessWide) {
  // bin needs libA (a1, via RPATH) and libD, whose RUNPATH points at a2's libA: not loaded again.
  std::string d = t / "d/libD.so";
  ASSERT_EQ(build_elf(d, LibSpec().with_soname("libD.so").with_needed(std::vector<std::string>{a2}).with_runpath("$ORIGIN/../a2")), "");
  std::string bin = t / "bin/first";
  ASSERT_EQ(build_elf(bin, LibSpec().with_needed(std::vector<std::string>{a1, d}).with_rpath("$ORIGIN/../a1:$ORIGIN/../d"), true), "");
  expect_same_as_ld_so(bin, "");
  Root root;
  LoaderSystem sys(root, default_loader_config(root));
  Process p(sys, bin);
  int libd = p.find("libD.so");
  ASSERT_GE(libd, 0);
  bool saw = false;
  for (const auto& r : p.requests())
    if (r.requester == libd && r.name == "libA.so") {
      saw = true;
      EXPECT_EQ(r.how.via, Via::loaded);
      EXPECT_EQ(canon(p.objects()[r.object].path), canon(a1));
    }
  EXPECT_TRUE(saw);
}

TEST_F(LoaderOracle, WrongMachineIsSkipped) {
  // A libA.so for another machine (e_machine patched to AArch64) earlier in RPATH is passed over.
  std::string bad = t / "arm/libA.so";
  fs::create_directories(t.path / "arm");
  fs::copy_file(a1, bad);
  {
    std::fstream f(bad, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(18);
    char em[2] = {static_cast<char>(183), 0};
    f.write(em, 2);
  }
  std::string bin = t / "bin/machine";
  ASSERT_EQ(build_elf(bin, LibSpec().with_needed(std::vector<std::string>{a1}).with_rpath("$ORIGIN/../arm:$ORIGIN/../a2"), true), "");
  expect_same_as_ld_so(bin, "");
  Root root;
  LoaderSystem sys(root, default_loader_config(root));
  Process p(sys, bin);
  Resolution r = p.search("libA.so", 0);
  EXPECT_EQ(canon(r.path), canon(a2));
  ASSERT_FALSE(r.tried.empty());
  EXPECT_NE(r.tried.front().find("wrong ELF class or machine"), std::string::npos);
}

TEST_F(LoaderOracle, CorruptFileStopsTheSearchWithOneLineError) {
  std::string junk = t / "junk/libA.so";
  write_file(junk, std::string(100, 'x'));
  std::string bin = t / "bin/junk";
  ASSERT_EQ(build_elf(bin, LibSpec().with_needed(std::vector<std::string>{a1}).with_rpath("$ORIGIN/../junk:$ORIGIN/../a1"), true), "");
  std::string real_error;
  ld_so_list(bin, "", &real_error);
  EXPECT_NE(real_error.find("invalid ELF header"), std::string::npos) << real_error;
  Emulated e = emulate(bin, "");
  EXPECT_EQ(e.resolved["libA.so"], "not found");
  EXPECT_NE(e.error.find("not an ELF file"), std::string::npos) << e.error;
  EXPECT_EQ(e.error.find('\n'), std::string::npos);
  EXPECT_NE(e.resolved["libc.so.6"], "not found");  // the rest still resolves
}

TEST_F(LoaderOracle, NodeflibSkipsCacheAndDefaultDirs) {
  std::string n = t / "n/libN.so";
  ASSERT_EQ(build_elf(n, LibSpec().with_soname("libN.so").with_needed(std::vector<std::string>{"/lib/x86_64-linux-gnu/libz.so.1"}).with_extra("-Wl,-z,nodefaultlib")), "");
  std::string bin = t / "bin/nodeflib";
  ASSERT_EQ(build_elf(bin, LibSpec().with_needed(std::vector<std::string>{n}).with_rpath("$ORIGIN/../n"), true), "");
  expect_same_as_ld_so(bin, "");
  EXPECT_EQ(emulate(bin, "").resolved["libz.so.1"], "not found");
  expect_same_as_ld_so(bin, "/lib/x86_64-linux-gnu");
}

TEST_F(LoaderOracle, LibAndPlatformTokens) {
  Root root;
  LoaderConfig cfg = default_loader_config(root);
  std::string dir = t / ("tok/" + cfg.lib + "/" + cfg.platform);
  ASSERT_EQ(build_elf(dir + "/libA.so", LibSpec().with_soname("libA.so").with_value(7)), "");
  std::string bin = t / "bin/tokens";
  ASSERT_EQ(build_elf(bin, LibSpec().with_needed(std::vector<std::string>{a1}).with_rpath("${ORIGIN}/../tok/$LIB/$PLATFORM"), true), "");
  expect_same_as_ld_so(bin, "");
  EXPECT_EQ(emulate(bin, "").resolved["libA.so"], canon(dir + "/libA.so"));
}

TEST(LoaderRealLibs, CudaToolkitLibrariesMatchLdSo) {
  // Real NVIDIA libraries: libcublas (RUNPATH $ORIGIN) pulls libcublasLt from its own directory.
  std::string cublas = "/usr/local/cuda/lib64/libcublas.so.13";
  if (!fs::exists(cublas)) GTEST_SKIP() << "no CUDA toolkit at /usr/local/cuda";
  TempDir t;
  std::string bin = t / "bin/cuda";
  ASSERT_EQ(build_elf(bin, LibSpec().with_needed(std::vector<std::string>{cublas, "/usr/local/cuda/lib64/libcudart.so.13"}).with_rpath("/usr/local/cuda/lib64"), true), "");
  expect_same_as_ld_so(bin, "");
  expect_same_as_ld_so(bin, "/usr/local/cuda/lib64/stubs:/usr/lib/x86_64-linux-gnu");
  Emulated e = emulate(bin, "");
  EXPECT_EQ(e.via["libcublasLt.so.13"], Via::runpath);
}

TEST(LoaderRooted, CacheAndSymlinksStayInsideTheRoot) {
  // A tree with its own ld.so.cache (written by `ldconfig -r`) and an absolute symlink
  // that only makes sense inside the tree.
  TempDir t;
  std::string root_dir = t / "root";
  // -nostdlib: no DT_NEEDED libc.so.6, which the tree lacks (a dlopen missing a dependency fails).
  ASSERT_EQ(build_elf(root_dir + "/opt/real/libQ.so.1.2.3", LibSpec().with_soname("libQ.so.1").with_value(5).with_extra("-nostdlib")), "");
  fs::create_directories(root_dir + "/opt/q");
  fs::create_symlink("/opt/real/libQ.so.1.2.3", root_dir + "/opt/q/libQ.so.1");
  write_file(root_dir + "/etc/ld.so.conf", "/opt/q\n");
  if (sh("ldconfig -X -r " + quote(root_dir)).rc != 0 || !fs::exists(root_dir + "/etc/ld.so.cache"))
    GTEST_SKIP() << "ldconfig -r needs root";
  Root root(root_dir);
  LoaderSystem sys(root, default_loader_config(root));
  ASSERT_EQ(sys.cache_error(), "");
  Process p(sys, "");
  Resolution r = p.search("libQ.so.1", -1);
  EXPECT_EQ(r.via, Via::ld_cache);
  EXPECT_EQ(r.path, "/opt/q/libQ.so.1");
  EXPECT_EQ(sys.realpath(r.path), "/opt/real/libQ.so.1.2.3");
  int q = p.dlopen("libQ.so.1");
  ASSERT_GE(q, 0);
  EXPECT_EQ(p.objects()[q].soname, "libQ.so.1");
}

TEST(LoaderConfigTest, SplitsLdLibraryPathLikeLdSo) {
  EXPECT_EQ(split_search_path("/a::/b;/c:"), (std::vector<std::string>{"/a", "/b", "/c"}));
  Root root;
  LoaderSystem sys(root, LoaderConfig{});
  auto dirs = sys.expand("$ORIGIN/x:${ORIGIN}/y:$ORIGINAL/z:/abs/", "/o");
  ASSERT_EQ(dirs.size(), 4u);
  EXPECT_EQ(dirs[0].dir, "/o/x");
  EXPECT_EQ(dirs[1].dir, "/o/y");
  EXPECT_EQ(dirs[2].dir, "$ORIGINAL/z");  // not a token: kept as written
  EXPECT_EQ(dirs[3].dir, "/abs");
  EXPECT_EQ(dirs[0].raw, "$ORIGIN/x");
}

}  // namespace
}  // namespace cd

namespace cd {
namespace {

using namespace cd::testing;

TEST(SearchSubdirs, ParsedFromTheRealLdDebugTrace) {
  auto r = sh("env -i LD_DEBUG=libs LD_LIBRARY_PATH=/nonexistent-cd-sub /bin/true");
  auto subs = subdirs_from_ld_debug(r.out, "/nonexistent-cd-sub");
  ASSERT_FALSE(subs.empty()) << r.out.substr(0, 500);
  EXPECT_EQ(subs.front().rfind("glibc-hwcaps/", 0), 0u) << subs.front();
  for (const auto& s : subs) EXPECT_EQ(s.find("nonexistent"), std::string::npos) << s;
  // Legacy lists name x86_64 twice (AT_PLATFORM and a hwcap): kept once.
  std::set<std::string> unique(subs.begin(), subs.end());
  EXPECT_EQ(unique.size(), subs.size());
  EXPECT_TRUE(subdirs_from_ld_debug("nothing here", "/x").empty());
}

TEST(SearchSubdirs, AHwcapsCopyWinsOverTheDirectoryItself) {
  auto r = sh("env -i LD_DEBUG=libs LD_LIBRARY_PATH=/nonexistent-cd-sub /bin/true");
  auto subs = subdirs_from_ld_debug(r.out, "/nonexistent-cd-sub");
  ASSERT_FALSE(subs.empty());
  TempDir t;
  // The lowest-priority supported subdirectory (x86-64-v2 on any current x86-64 CPU).
  std::string sub;
  for (const auto& s : subs)
    if (s.rfind("glibc-hwcaps/", 0) == 0) sub = s;
  ASSERT_EQ(build_elf(t / "d/libA.so", LibSpec().with_soname("libA.so").with_value(1)), "");
  ASSERT_EQ(build_elf(t / ("d/" + sub + "/libA.so"), LibSpec().with_soname("libA.so").with_value(2)), "");
  std::string bin = t / "bin/exe";
  ASSERT_EQ(build_elf(bin, LibSpec().with_needed(std::vector<std::string>{t / "d/libA.so"}).with_runpath("$ORIGIN/../d"), true), "");
  auto real = ld_so_list(bin, "");
  ASSERT_EQ(canon(real["libA.so"]), canon(t / ("d/" + sub + "/libA.so")));
  Root root;
  LoaderConfig cfg = default_loader_config(root);
  cfg.subdirs = subs;
  LoaderSystem sys(root, cfg);
  Process p(sys, bin);
  int a = p.find("libA.so");
  ASSERT_GE(a, 0);
  EXPECT_EQ(canon(p.objects()[a].path), canon(real["libA.so"]));
  for (const auto& req : p.requests())
    if (req.name == "libA.so") {
      EXPECT_EQ(req.how.via, Via::runpath);
      EXPECT_NE(req.how.detail.find(sub), std::string::npos) << req.how.detail;
    }
  // Without the subdirectories (what --root assumes) the plain copy would be predicted.
  LoaderConfig plain = default_loader_config(root);
  LoaderSystem sys2(root, plain);
  Process q(sys2, bin);
  EXPECT_EQ(canon(q.objects()[static_cast<size_t>(q.find("libA.so"))].path), canon(t / "d/libA.so"));
}

}  // namespace
}  // namespace cd
