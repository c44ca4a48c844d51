// `cuda-doctor libs` end to end, each answer checked against the real loader: `ld.so --list`
// for FILE and the what-if flags, /proc/PID/maps of a live process that dlopened two copies
// for --pid, and /proc/self/maps after `import torch` in a virtualenv made here (its
// torch/__init__.py preloads with ctypes RTLD_GLOBAL as torch's does) for --python.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "cli/cli_helpers.hpp"
#include "loader/elf_fixtures.hpp"

namespace cd {
namespace {

using namespace cd::testing;
using cdtest::doctor;

std::string canon(const std::string& p) {
  std::error_code ec;
  auto c = fs::canonical(p, ec);
  return ec ? p : c.string();
}

// soname → path of the CUDA libraries the JSON says a process gets.
std::map<std::string, std::string> libraries(const std::string& json_text, size_t process = 0) {
  auto j = nlohmann::json::parse(json_text);
  std::map<std::string, std::string> out;
  for (const auto& l : j["processes"][process]["libraries"]) out[l["soname"]] = l["path"];
  return out;
}

class LibsCli : public ::testing::Test {
 protected:
  TempDir t;
  std::string exe;
  void SetUp() override {
    // libx needs cudart 12 (RUNPATH), the program cudart 13 (RPATH) and libx.
    ASSERT_EQ(build_elf(t / "d12/libcudart.so.12", LibSpec().with_soname("libcudart.so.12").with_value(12)), "");
    ASSERT_EQ(build_elf(t / "d12b/libcudart.so.12", LibSpec().with_soname("libcudart.so.12").with_value(121)), "");
    ASSERT_EQ(build_elf(t / "d13/libcudart.so.13", LibSpec().with_soname("libcudart.so.13").with_value(13)), "");
    ASSERT_EQ(build_elf(t / "d13b/libcudart.so.13", LibSpec().with_soname("libcudart.so.13").with_value(131)), "");
    ASSERT_EQ(build_elf(t / "lib/libx.so", LibSpec().with_soname("libx.so").with_needed({t / "d12/libcudart.so.12"}).with_runpath("$ORIGIN/../d12")), "");
    exe = t / "bin/app";
    ASSERT_EQ(build_elf(exe, LibSpec().with_needed({t / "lib/libx.so", t / "d13/libcudart.so.13"}).with_rpath("$ORIGIN/../d13:$ORIGIN/../lib"), true), "");
  }
};

TEST_F(LibsCli, TwoMajorsInOneProgramAsTheRealLoaderSeesIt) {
  auto r = doctor({"libs", "--json", exe}, {{"LD_LIBRARY_PATH", "\x01"}, {"LD_PRELOAD", "\x01"}});
  ASSERT_EQ(r.code, 2) << r.err << r.out;  // an error finding
  auto got = libraries(r.out);
  auto real = ld_so_list(exe, "");
  ASSERT_EQ(got.size(), 2u) << r.out;
  for (const auto& [soname, path] : got) EXPECT_EQ(canon(path), canon(real[soname])) << soname;
  auto j = nlohmann::json::parse(r.out);
  bool twice = false;
  for (const auto& f : j["findings"])
    twice |= f["id"] == "libs.duplicate_copies" && f["title"].get<std::string>().find("2 copies of cudart in one process") != std::string::npos;
  EXPECT_TRUE(twice) << r.out;
  auto text = doctor({"libs", "--tree", exe}, {{"LD_LIBRARY_PATH", "\x01"}});
  EXPECT_NE(text.out.find("via RUNPATH of libx.so ($ORIGIN/../d12)"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("libx.so => " + t / "bin/../lib/libx.so"), std::string::npos) << text.out;  // the tree
}

// A relative FILE is taken from the working directory, as dlopen and the shell take it.
TEST_F(LibsCli, RelativeFileIsReadFromTheWorkingDirectory) {
  char here[4096];
  ASSERT_NE(getcwd(here, sizeof here), nullptr);
  ASSERT_EQ(chdir((t / "bin").c_str()), 0);
  auto r = doctor({"libs", "--json", "./app"}, {{"LD_LIBRARY_PATH", "\x01"}, {"LD_PRELOAD", "\x01"}});
  auto parent = doctor({"libs", "--json", "../bin/app"}, {{"LD_LIBRARY_PATH", "\x01"}, {"LD_PRELOAD", "\x01"}});
  ASSERT_EQ(chdir(here), 0);
  auto got = libraries(r.out);
  ASSERT_EQ(got.size(), 2u) << r.err << r.out;
  EXPECT_EQ(canon(got["libcudart.so.13"]), canon(t / "d13/libcudart.so.13"));
  EXPECT_EQ(libraries(parent.out), got) << parent.err;
}

TEST_F(LibsCli, WhatIfEnvUnsetAndPreloadMatchTheRealLoader) {
  // --env: LD_LIBRARY_PATH beats libx's RUNPATH, not the program's RPATH.
  auto r = doctor({"libs", "--json", "--env", "LD_LIBRARY_PATH=" + t / "d12b:" + t / "d13b", exe}, {{"LD_LIBRARY_PATH", "\x01"}});
  auto got = libraries(r.out);
  auto real = ld_so_list(exe, t / "d12b:" + t / "d13b");
  EXPECT_EQ(canon(got["libcudart.so.12"]), canon(t / "d12b/libcudart.so.12"));
  EXPECT_EQ(canon(got["libcudart.so.12"]), canon(real["libcudart.so.12"]));
  EXPECT_EQ(canon(got["libcudart.so.13"]), canon(real["libcudart.so.13"]));
  // The copy that lost is named, with why.
  auto j = nlohmann::json::parse(r.out);
  std::string why;
  for (const auto& l : j["processes"][0]["libraries"])
    for (const auto& lost : l["losers"])
      if (lost["path"] == t / "d13b/libcudart.so.13") why = lost["why"];
  EXPECT_NE(why.find("LD_LIBRARY_PATH, which comes after the RPATH"), std::string::npos) << r.out;
  // --unset: our own LD_LIBRARY_PATH is ignored.
  auto u = doctor({"libs", "--json", "--unset", "LD_LIBRARY_PATH", exe}, {{"LD_LIBRARY_PATH", t / "d12b"}});
  EXPECT_EQ(canon(libraries(u.out)["libcudart.so.12"]), canon(t / "d12/libcudart.so.12"));
  // --preload: the preloaded copy of libcudart.so.13 is loaded first and wins by soname.
  auto p = doctor({"libs", "--json", "--preload", t / "d13b/libcudart.so.13", exe}, {{"LD_LIBRARY_PATH", "\x01"}, {"LD_PRELOAD", "\x01"}});
  auto preload_real = sh("env -u LD_LIBRARY_PATH LD_PRELOAD=" + quote(t / "d13b/libcudart.so.13") + " /lib64/ld-linux-x86-64.so.2 --list " + quote(exe));
  ASSERT_NE(preload_real.out.find(t / "d13b/libcudart.so.13"), std::string::npos) << preload_real.out;
  EXPECT_EQ(preload_real.out.find(t / "d13/libcudart.so.13"), std::string::npos) << preload_real.out;
  EXPECT_EQ(canon(libraries(p.out)["libcudart.so.13"]), canon(t / "d13b/libcudart.so.13")) << p.out;
}

TEST_F(LibsCli, BadInputIsOneLineAndExit3) {
  for (const auto& args : std::vector<std::vector<std::string>>{{"libs"},
                                                                {"libs", t / "nonexistent"},
                                                                {"libs", "--env", "NOEQUALS", exe},
                                                                {"libs", "--pid", "999999999"},
                                                                {"libs", "--python", t / "nopython"}}) {
    auto r = doctor(args);
    EXPECT_EQ(r.code, 3) << args.back() << ": " << r.out << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
  write_file(t / "garbage.so", "not an ELF file\n");
  EXPECT_EQ(doctor({"libs", t / "garbage.so"}).code, 3);
}

// A live process that dlopened two copies of cudart (two majors): --pid lists both, mapped.
TEST_F(LibsCli, PidSeesTwoCopiesMappedInALiveProcess) {
  write_file(t / "live.c",
             "#include <dlfcn.h>\n#include <stdio.h>\n#include <unistd.h>\n"
             "int main(int c, char** v) { if (!dlopen(v[1], RTLD_NOW) || !dlopen(v[2], RTLD_NOW)) return 1;\n"
             "  FILE* f = fopen(v[3], \"w\"); fprintf(f, \"%d\\n\", getpid()); fclose(f); sleep(60); return 0; }\n");
  ASSERT_EQ(sh("gcc -o " + quote(t / "live") + " " + quote(t / "live.c")).rc, 0);
  auto start = sh(quote(t / "live") + " " + quote(t / "d12/libcudart.so.12") + " " + quote(t / "d13/libcudart.so.13") + " " +
                  quote(t / "ready") + " >/dev/null 2>&1 & echo $!");
  int pid = std::atoi(start.out.c_str());
  ASSERT_GT(pid, 0);
  for (int i = 0; i < 200 && !fs::exists(t / "ready"); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  auto r = doctor({"libs", "--json", "--pid", std::to_string(pid)});
  // Our LD_LIBRARY_PATH names both directories: their files are known copies, with an origin.
  auto text = doctor({"libs", "--pid", std::to_string(pid)}, {{"LD_LIBRARY_PATH", t / "d12:" + t / "d13"}, {"NO_COLOR", "1"}});
  kill(pid, SIGKILL);
  // The maps say no rule: the origin stands alone on its line, with no empty "via" before it.
  EXPECT_NE(text.out.find("\n             [LD_LIBRARY_PATH]\n"), std::string::npos) << text.out;
  EXPECT_EQ(text.out.find("               ["), std::string::npos) << text.out;
  EXPECT_EQ(text.out.find("via \n"), std::string::npos) << text.out;
  ASSERT_EQ(r.code, 2) << r.out << r.err;
  auto got = libraries(r.out);
  EXPECT_EQ(got["libcudart.so.12"], canon(t / "d12/libcudart.so.12")) << r.out;
  EXPECT_EQ(got["libcudart.so.13"], canon(t / "d13/libcudart.so.13")) << r.out;
  EXPECT_NE(text.out.find("2 copies of cudart in one process"), std::string::npos) << text.out;
}

// --python against /proc/self/maps after a real `import torch` of a mimic torch package.
class LibsPython : public ::testing::Test {
 protected:
  TempDir t;
  std::string venv, sp, sysdir;
  void SetUp() override {
    venv = t / "venv";
    if (sh("python3 -m venv --without-pip " + quote(venv)).rc != 0) GTEST_SKIP() << "python3 -m venv unavailable";
    auto pyver = sh(quote(venv + "/bin/python3") + " -c 'import sys; print(\"python%d.%d\" % sys.version_info[:2])'");
    sp = venv + "/lib/" + std::string(trim_nl(pyver.out)) + "/site-packages";
    sysdir = t / "sys";
    ASSERT_EQ(build_elf(sysdir + "/libcudnn.so.9", LibSpec().with_soname("libcudnn.so.9").with_value(914)), "");
    ASSERT_EQ(build_elf(sp + "/nvidia/cudnn/lib/libcudnn.so.9", LibSpec().with_soname("libcudnn.so.9").with_runpath("$ORIGIN").with_value(919)), "");
    ASSERT_EQ(build_elf(sp + "/nvidia/cu13/lib/libcudart.so.13", LibSpec().with_soname("libcudart.so.13").with_runpath("$ORIGIN").with_value(13)), "");
    std::string tl = sp + "/torch/lib";
    ASSERT_EQ(build_elf(tl + "/libtorch_global_deps.so", LibSpec().with_soname("libtorch_global_deps.so")
                                                             .with_needed({sp + "/nvidia/cu13/lib/libcudart.so.13"})
                                                             .with_rpath("$ORIGIN/../../nvidia/cu13/lib:$ORIGIN")), "");
    // libtorch_cuda's RPATH misses the cudnn dir: only torch's own preloading gets the wheel's copy.
    ASSERT_EQ(build_elf(tl + "/libtorch_cuda.so", LibSpec().with_soname("libtorch_cuda.so")
                                                      .with_needed({sp + "/nvidia/cudnn/lib/libcudnn.so.9", sp + "/nvidia/cu13/lib/libcudart.so.13"})
                                                      .with_rpath("$ORIGIN/../../nvidia/cu13/lib:$ORIGIN")), "");
    ASSERT_EQ(build_elf(sp + "/torch/_C.cpython-3-x86_64-linux-gnu.so", LibSpec().with_needed({tl + "/libtorch_cuda.so"}).with_rpath("$ORIGIN/lib")), "");
    write_file(sp + "/torch/version.py", "__version__ = '2.11.0+cu130'\ncuda = '13.0'\n");
  }
  static std::string_view trim_nl(const std::string& s) { return std::string_view(s).substr(0, s.find('\n')); }
  // torch/__init__.py: global deps with RTLD_GLOBAL, then (like torch 2.9+) _preload_cuda_deps() when
  // /proc/self/maps shows a libcudart.so, then torch._C (here by ctypes: a plain library).
  void write_init(bool preload) {
    write_file(sp + "/torch/__init__.py",
               std::string("import ctypes, glob, os, sys\n"
                           "_here = os.path.dirname(os.path.abspath(__file__))\n"
                           "def _preload_cuda_deps(err=None):\n"
                           "    cuda_libs = [\n"
                           "        (\"cudnn\", \"libcudnn.so.*[0-9]\"),\n"
                           "        (\"cuda_runtime\", \"libcudart.so.*[0-9]\"),\n"
                           "    ]\n"
                           "    for folder, name in cuda_libs:\n"
                           "        for p in sys.path:\n"
                           "            m = glob.glob(os.path.join(p, 'nvidia', folder, 'lib', name)) + glob.glob(os.path.join(p, 'nvidia', 'cu13', 'lib', name))\n"
                           "            if m:\n"
                           "                ctypes.CDLL(m[0])\n"
                           "                break\n"
                           "ctypes.CDLL(os.path.join(_here, 'lib', 'libtorch_global_deps.so'), mode=ctypes.RTLD_GLOBAL)\n") +
                   (preload ? "with open('/proc/self/maps') as f:\n    _maps = f.read()\nif 'libcudart.so' in _maps:\n    _preload_cuda_deps()\n" : "") +
                   "ctypes.CDLL(glob.glob(os.path.join(_here, '_C.*.so'))[0])\n");
  }
  // The CUDA libraries (cudnn, cudart) mapped after the real import.
  std::set<std::string> real_maps() {
    auto r = sh("env LD_LIBRARY_PATH=" + quote(sysdir) + " " + quote(venv + "/bin/python3") +
                " -c 'import torch; print(open(\"/proc/self/maps\").read())'");
    std::set<std::string> out;
    std::istringstream in(r.out);
    for (std::string line; std::getline(in, line);)
      if (auto at = line.find(" /"); at != std::string::npos && line.find("libcud") != std::string::npos) out.insert(line.substr(at + 1));
    return out;
  }
  std::set<std::string> predicted() {
    auto r = doctor({"libs", "--json", "--python", venv + "/bin/python3", "--env", "LD_LIBRARY_PATH=" + sysdir},
                    {{"VIRTUAL_ENV", venv}, {"CONDA_PREFIX", "\x01"}});
    std::set<std::string> out;
    // The mimic makes no cuDNN call; the emulation's libcudnn_* are those of a first convolution.
    for (const auto& [soname, path] : libraries(r.out))
      if (soname.rfind("libcudnn_", 0) != 0) out.insert(canon(path));
    EXPECT_FALSE(out.empty()) << r.out << r.err;
    return out;
  }
};

TEST_F(LibsPython, TorchsOwnPreloadingWinsOverLdLibraryPath) {
  write_init(true);
  auto real = real_maps();
  EXPECT_TRUE(real.count(canon(sp + "/nvidia/cudnn/lib/libcudnn.so.9"))) << "the mimic's preload";
  EXPECT_EQ(predicted(), real);
}

TEST_F(LibsPython, WithoutPreloadingLdLibraryPathWins) {
  write_init(false);
  auto real = real_maps();
  EXPECT_TRUE(real.count(canon(sysdir + "/libcudnn.so.9")));
  EXPECT_EQ(predicted(), real);
}

}  // namespace
}  // namespace cd

namespace cd {
namespace {

// A 9.14.0 cuDNN sub-library in t/sys (libcudnn_<sub>.so.9.14.0 and its .so.9 link), built from `source`,
// as a system package would leave it.
bool old_sublib(const TempDir& t, const std::string& sub, const std::string& source) {
  fs::create_directories(t / "sys");
  const std::string file = "libcudnn_" + sub + ".so.9.14.0";
  write_file(t / (sub + ".c"), source);
  if (sh("gcc -shared -fPIC -o " + quote(t / ("sys/" + file)) + " " + quote(t / (sub + ".c")) + " -Wl,-soname,libcudnn_" +
         sub + ".so.9").rc != 0)
    return false;
  fs::create_symlink(file, t / ("sys/libcudnn_" + sub + ".so.9"));
  return true;
}

// The real libcudnn.so.9 of the toolkit with a system-like directory on LD_LIBRARY_PATH whose
// libcudnn_graph.so.9 is 9.14.0: libs names it, and the real shim does load that file.
TEST(LibsCudnn, WhatIfLdLibraryPathGivesTheShimOldSubLibraries) {
  const std::string shim = "/usr/local/cuda/lib64/libcudnn.so.9";
  if (!fs::exists(shim)) GTEST_SKIP() << shim << " not installed";
  TempDir t;
  ASSERT_TRUE(old_sublib(t, "graph", "#include <stddef.h>\nsize_t cudnnGetVersion(void){return 91400;}\n"));
  auto r = doctor({"libs", "--env", "LD_LIBRARY_PATH=" + t / "sys", shim});
  EXPECT_EQ(r.code, 2) << r.out << r.err;
  EXPECT_NE(r.out.find("libcudnn.so is 9.19"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("sub-libraries are 9.14.0 (" + t / "sys via LD_LIBRARY_PATH)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("the first cuDNN call fails"), std::string::npos) << r.out;
  auto plain = doctor({"libs", shim}, {{"LD_LIBRARY_PATH", "\x01"}});
  EXPECT_EQ(plain.out.find("libs.cudnn_mismatch"), std::string::npos) << plain.out;
  // When each loads (tests/loader/cudnn_test.cpp checks it on the real process).
  auto j = nlohmann::json::parse(doctor({"libs", "--json", shim}, {{"LD_LIBRARY_PATH", "\x01"}}).out);
  std::map<std::string, std::string> loads;
  for (const auto& l : j["processes"][0]["libraries"]) loads[l["soname"]] = l["loads"];
  EXPECT_EQ(loads["libcudnn.so.9"], "startup");
  EXPECT_EQ(loads["libcudnn_graph.so.9"], "first_call");
  EXPECT_EQ(loads["libcudnn_heuristic.so.9"], "first_call");
  EXPECT_EQ(loads["libcudnn_ops.so.9"], "on_demand");
  EXPECT_EQ(loads["libcudnn_adv.so.9"], "on_demand");
  EXPECT_NE(plain.out.find("libcudnn_ops.so.9"), std::string::npos);
  EXPECT_NE(plain.out.find("(on demand)\n"), std::string::npos) << plain.out;
  EXPECT_NE(plain.out.find("(at first call)\n"), std::string::npos) << plain.out;
}

// Only ops from another installation (LD_LIBRARY_PATH): the first cuDNN call works, the first
// call that needs ops fails (tests/loader/cudnn_test.cpp: the real shim maps that ops library
// at cudnnCreateTensorDescriptor, not before).
TEST(LibsCudnn, OldOpsOnLdLibraryPathFailOnlyTheCallsThatNeedThem) {
  const std::string shim = "/usr/local/cuda/lib64/libcudnn.so.9";
  if (!fs::exists(shim)) GTEST_SKIP() << shim << " not installed";
  TempDir t;
  ASSERT_TRUE(old_sublib(t, "ops", "int cudnnCreateTensorDescriptor(void** d) { *d = 0; return 0; }\n"));
  auto r = doctor({"libs", "--json", "--env", "LD_LIBRARY_PATH=" + t / "sys", shim});
  EXPECT_EQ(r.code, 2) << r.out << r.err;
  auto j = nlohmann::json::parse(r.out);
  std::string title;
  for (const auto& f : j["findings"])
    if (f["id"] == "libs.cudnn_mismatch") title = f["title"];
  EXPECT_NE(title.find("libcudnn.so is 9.19"), std::string::npos) << r.out;
  EXPECT_NE(title.find("but libcudnn_ops.so.9 is 9.14.0 (" + t / "sys via LD_LIBRARY_PATH): the first call that needs them fails"),
            std::string::npos) << title;
  EXPECT_EQ(title.find("the first cuDNN call fails"), std::string::npos) << title;
}

}  // namespace
}  // namespace cd

namespace cd {
namespace {

// Text output with the temporary directory as <t>, compared with tests/fixtures/golden/NAME
// (CD_UPDATE_GOLDENS=1 rewrites it; review the diff).
void expect_libs_golden(const std::string& name, const std::string& out, const std::string& t) {
  std::string got = out;
  for (size_t at = got.find(t); at != std::string::npos; at = got.find(t, at)) got.replace(at, t.size(), "<t>");
  const std::string path = std::string(CD_FIXTURES) + "/golden/" + name;
  if (std::getenv("CD_UPDATE_GOLDENS")) write_file(path, got);
  std::ifstream in(path, std::ios::binary);
  std::stringstream want;
  want << in.rdbuf();
  EXPECT_EQ(got, want.str()) << "golden " << path << " (CD_UPDATE_GOLDENS=1 to rewrite)";
}

// A toolkit's stubs/ directory on LD_LIBRARY_PATH (with the libcuda.so.1 link ldconfig makes
// there) ahead of the driver's libcuda that the program's RUNPATH names: the real loader takes
// the stub, libs says so (driver.stub_library, error) and names the copy it shadows.
TEST(LibsStub, StubLibcudaOnLdLibraryPathWinsOverTheDriversAsTheRealLoaderSays) {
  const std::string real_stub = "/usr/local/cuda/lib64/stubs/libcuda.so";
  if (!fs::exists(real_stub)) GTEST_SKIP() << real_stub << " not installed";
  TempDir t;
  const std::string stubs = t / "cuda-13.0/lib64/stubs";
  fs::create_directories(stubs);
  fs::copy_file(real_stub, stubs + "/libcuda.so");
  fs::create_symlink("libcuda.so", stubs + "/libcuda.so.1");
  ASSERT_EQ(build_elf(t / "driver/libcuda.so.580.65.06", LibSpec().with_soname("libcuda.so.1").with_value(580)), "");
  fs::create_symlink("libcuda.so.580.65.06", t / "driver/libcuda.so.1");
  const std::string exe = t / "bin/app";
  ASSERT_EQ(build_elf(exe, LibSpec().with_needed({t / "driver/libcuda.so.1"}).with_runpath("$ORIGIN/../driver"), true), "");

  auto real = ld_so_list(exe, stubs);
  ASSERT_EQ(canon(real["libcuda.so.1"]), canon(stubs + "/libcuda.so.1"));
  auto r = doctor({"libs", "--json", "--tree", "--env", "LD_LIBRARY_PATH=" + stubs, exe}, {{"LD_PRELOAD", "\x01"}});
  ASSERT_EQ(r.code, 2) << r.out << r.err;
  auto j = nlohmann::json::parse(r.out);
  std::string got, shadowed;
  for (const auto& l : j["processes"][0]["process"]["loads"])
    if (l["name"] == "libcuda.so.1") got = l["path"], shadowed = l["shadowed"];
  EXPECT_EQ(canon(got), canon(real["libcuda.so.1"]));
  EXPECT_EQ(canon(shadowed), canon(ld_so_list(exe, "")["libcuda.so.1"])) << "what it gets with LD_LIBRARY_PATH unset";
  int stub_findings = 0;
  for (const auto& f : j["findings"]) stub_findings += f["id"] == "driver.stub_library" && f["severity"] == "error";
  EXPECT_EQ(stub_findings, 1) << r.out;
  auto text = doctor({"libs", "--env", "LD_LIBRARY_PATH=" + stubs, exe}, {{"LD_PRELOAD", "\x01"}, {"NO_COLOR", "1"}});
  expect_libs_golden("libs-stub.txt", text.out, t.str());

  // Without the stubs dir the driver's copy wins and nothing is reported.
  auto plain = doctor({"libs", "--json", exe}, {{"LD_LIBRARY_PATH", "\x01"}, {"LD_PRELOAD", "\x01"}});
  EXPECT_EQ(plain.code, 0) << plain.out;
  EXPECT_EQ(plain.out.find("driver.stub_library"), std::string::npos) << plain.out;
}

// The toolkit's lib dir on LD_LIBRARY_PATH ahead of the cuBLAS a torch-like library's RUNPATH
// names in its wheel ($ORIGIN/../../nvidia/cublas/lib): the real loader takes the toolkit's,
// libs names the wheel copy it shadows (libs.duplicate_copies, warning: versions differ).
TEST(LibsShadow, ToolkitLibDirOnLdLibraryPathShadowsTheWheelAsTheRealLoaderSays) {
  const std::string toolkit = "/usr/local/cuda/lib64";
  if (!fs::exists(toolkit + "/libcublas.so.13")) GTEST_SKIP() << toolkit << "/libcublas.so.13 not installed";
  TempDir t;
  const std::string wheel = t / "site-packages/nvidia/cublas/lib";
  ASSERT_EQ(build_elf(wheel + "/libcublas.so.13.0.2.14", LibSpec().with_soname("libcublas.so.13").with_value(13)), "");
  fs::create_symlink("libcublas.so.13.0.2.14", wheel + "/libcublas.so.13");
  const std::string torch = t / "site-packages/torch/lib/libtorch_cuda.so";
  ASSERT_EQ(build_elf(torch, LibSpec().with_soname("libtorch_cuda.so").with_needed({wheel + "/libcublas.so.13"})
                                 .with_runpath("$ORIGIN/../../nvidia/cublas/lib")), "");

  auto real = ld_so_list(torch, toolkit);
  ASSERT_EQ(canon(real["libcublas.so.13"]), canon(toolkit + "/libcublas.so.13"));
  auto r = doctor({"libs", "--json", "--env", "LD_LIBRARY_PATH=" + toolkit, torch}, {{"LD_PRELOAD", "\x01"}});
  ASSERT_EQ(r.code, 0) << r.out << r.err;  // a warning
  auto got = libraries(r.out);
  EXPECT_EQ(canon(got["libcublas.so.13"]), canon(real["libcublas.so.13"]));
  auto j = nlohmann::json::parse(r.out);
  std::string shadowed;
  for (const auto& l : j["processes"][0]["libraries"])
    if (l["soname"] == "libcublas.so.13") shadowed = l["shadowed"];
  auto unset = ld_so_list(torch, "");
  EXPECT_EQ(canon(shadowed), canon(unset["libcublas.so.13"]));
  EXPECT_EQ(canon(shadowed), canon(wheel + "/libcublas.so.13.0.2.14"));
  std::string title;
  for (const auto& f : j["findings"])
    if (f["id"] == "libs.duplicate_copies" && f["severity"] == "warning") title = f["title"];
  EXPECT_NE(title.find("instead of " + t / "site-packages/torch/lib/../../nvidia/cublas/lib"), std::string::npos) << r.out;
  EXPECT_NE(title.find("instead of 13.0.2.14"), std::string::npos) << r.out;

  // Without it: the wheel's copy via RUNPATH, as the real loader, and no finding.
  auto plain = doctor({"libs", "--json", torch}, {{"LD_LIBRARY_PATH", "\x01"}, {"LD_PRELOAD", "\x01"}});
  EXPECT_EQ(canon(libraries(plain.out)["libcublas.so.13"]), canon(unset["libcublas.so.13"]));
  EXPECT_EQ(plain.out.find("libs.duplicate_copies"), std::string::npos) << plain.out;
}

}  // namespace
}  // namespace cd
