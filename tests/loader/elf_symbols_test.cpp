// Versioned symbol requirements: a library built against a newer libP.so.1 that
// resolves to an older copy misses a symbol. The real loader (LD_BIND_NOW) is the oracle.
#include <gtest/gtest.h>

#include "loader/elf_fixtures.hpp"
#include "loader/elf_symbols.hpp"
#include "loader/loader.hpp"
#include "util/errors.hpp"

namespace cd {
namespace {

using namespace cd::testing;

TEST(ElfSymbols, OlderProviderMissesANewSymbol) {
  TempDir t;
  write_file(t / "p.map", "libP.so.1 { global: p_old; p_new; local: *; };\n");
  write_file(t / "p_new.c", "int p_old(void){return 1;} int p_new(void){return 2;}\n");
  write_file(t / "p_old.c", "int p_old(void){return 1;}\n");
  write_file(t / "old.map", "libP.so.1 { global: p_old; local: *; };\n");
  write_file(t / "u.c", "int p_old(void); int p_new(void); int u(void){return p_old() + p_new();}\n");
  write_file(t / "main.c", "int u(void); int main(void){return u() == 3 ? 0 : 1;}\n");
  fs::create_directories(t.path / "new");
  fs::create_directories(t.path / "old");
  fs::create_directories(t.path / "u");
  fs::create_directories(t.path / "bin");
  auto gcc = [&](const std::string& args) { return sh("cd " + quote(t.str()) + " && gcc " + args); };
  ASSERT_EQ(gcc("-shared -fPIC -o new/libP.so.1 p_new.c -Wl,-soname,libP.so.1 -Wl,--version-script=p.map").rc, 0);
  ASSERT_EQ(gcc("-shared -fPIC -o old/libP.so.1 p_old.c -Wl,-soname,libP.so.1 -Wl,--version-script=old.map").rc, 0);
  ASSERT_EQ(gcc("-shared -fPIC -o u/libU.so u.c -Wl,-soname,libU.so new/libP.so.1").rc, 0);
  // bin's RPATH reaches libU, then (inherited: libU has no RUNPATH) the OLD libP first.
  ASSERT_EQ(gcc("-o bin/main main.c u/libU.so -Wl,-rpath-link,new -Wl,--disable-new-dtags,-rpath,'$ORIGIN/../u:$ORIGIN/../old:$ORIGIN/../new'").rc, 0);

  ElfSymbols u = read_elf_symbols(t / "u/libU.so");
  ASSERT_TRUE(u.needs.count("libP.so.1"));
  EXPECT_EQ(u.needs["libP.so.1"].size(), 2u);
  EXPECT_TRUE(u.defines.count("u"));
  EXPECT_EQ(missing_symbols(u, "libP.so.1", read_elf_symbols(t / "old/libP.so.1")), std::vector<std::string>{"p_new"});
  EXPECT_TRUE(missing_symbols(u, "libP.so.1", read_elf_symbols(t / "new/libP.so.1")).empty());

  // The emulation picks the old copy, like ld.so …
  Root root;
  LoaderSystem sys(root, default_loader_config(root));
  Process p(sys, t / "bin/main");
  int lp = p.find("libP.so.1");
  ASSERT_GE(lp, 0);
  EXPECT_EQ(path_dirname(p.objects()[lp].realpath), fs::canonical(t.path / "old").string());
  // … and the real loader fails on exactly that symbol.
  auto run = sh("LD_BIND_NOW=1 " + quote(t / "bin/main"));
  EXPECT_NE(run.rc, 0);
  EXPECT_NE(run.out.find("undefined symbol: p_new"), std::string::npos) << run.out;
}

TEST(ElfSymbols, RealCudaLibrariesAgree) {
  std::string cusparse = "/usr/local/cuda/lib64/libcusparse.so.12", jit = "/usr/local/cuda/lib64/libnvJitLink.so.13";
  if (!fs::exists(cusparse) || !fs::exists(jit)) GTEST_SKIP() << "no CUDA toolkit";
  ElfSymbols user = read_elf_symbols(cusparse);
  ASSERT_TRUE(user.needs.count("libnvJitLink.so.13")) << "libcusparse versions its nvJitLink imports";
  EXPECT_FALSE(user.needs["libnvJitLink.so.13"].empty());
  EXPECT_TRUE(missing_symbols(user, "libnvJitLink.so.13", read_elf_symbols(jit)).empty());
  EXPECT_THROW(read_elf_symbols("/nonexistent.so"), InputError);
}

}  // namespace
}  // namespace cd
