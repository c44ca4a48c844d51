// probe_libs on a hermetic --root tree shaped like the H200 machine (system cuDNN
// 9.14.0 and NCCL 2.28.3 in ld.so.cache, a CUDA 13.0 toolkit, a torch venv with the
// cu13 nvidia-* wheels and torch's real DT_RPATH), with ELF files built at test time
// and the cache written by `ldconfig -r`.
#include <gtest/gtest.h>

#include <chrono>

#include "loader/elf_fixtures.hpp"
#include "probe/libs_catalog.hpp"
#include "probe/probe.hpp"

namespace cd {
namespace {

using namespace cd::testing;

const std::string kVenv = "/opt/torch/.venv";
const std::string kSite = kVenv + "/lib/python3.12/site-packages";
const std::string kSys = "/usr/lib/x86_64-linux-gnu";
const std::string kTk = "/usr/local/cuda-13.0";

class LibsProbeTest : public ::testing::Test {
 protected:
  TempDir t;
  std::string root;
  bool have_cache = false;

  std::string R(const std::string& p) { return root + p; }
  void lib(const std::string& path, const std::string& soname, const std::string& runpath = "") {
    ASSERT_EQ(build_elf(R(path), LibSpec().with_soname(soname).with_runpath(runpath)), "");
  }
  void link(const std::string& target, const std::string& at) { fs::create_symlink(target, R(at)); }
  void record(const std::string& dist, const std::vector<std::string>& files) {
    std::string text;
    for (const auto& f : files) text += f + ",sha256=x,1\n";
    write_file(R(kSite + "/" + dist + "/RECORD"), text);
  }

  void SetUp() override {
    root = t / "root";
    // System copies, as Debian packages install them (full version in the file name).
    lib(kSys + "/libcudnn.so.9.14.0", "libcudnn.so.9");
    link("libcudnn.so.9.14.0", kSys + "/libcudnn.so.9");
    lib(kSys + "/libcudnn_ops.so.9.14.0", "libcudnn_ops.so.9");
    link("libcudnn_ops.so.9.14.0", kSys + "/libcudnn_ops.so.9");
    lib(kSys + "/libcudnn_graph.so.9.14.0", "libcudnn_graph.so.9");
    link("libcudnn_graph.so.9.14.0", kSys + "/libcudnn_graph.so.9");
    lib(kSys + "/libnccl.so.2.28.3", "libnccl.so.2");
    link("libnccl.so.2.28.3", kSys + "/libnccl.so.2");
    // The toolkit: version from version.json.
    lib(kTk + "/targets/x86_64-linux/lib/libcudart.so.13", "libcudart.so.13");
    write_file(R(kTk + "/version.json"), R"({"cuda": {"version": "13.0.2"}, "cuda_cudart": {"name": "CUDA Runtime", "version": "13.0.96"}})");
    write_file(R("/etc/ld.so.conf"), kTk + "/targets/x86_64-linux/lib\n" + kSys + "\n");
    // The wheels torch depends on (cu13 layout), with RUNPATH $ORIGIN like NVIDIA's.
    lib(kSite + "/nvidia/cudnn/lib/libcudnn.so.9", "libcudnn.so.9", "$ORIGIN");
    lib(kSite + "/nvidia/cudnn/lib/libcudnn_ops.so.9", "libcudnn_ops.so.9", "$ORIGIN");
    lib(kSite + "/nvidia/cudnn/lib/libcudnn_graph.so.9", "libcudnn_graph.so.9", "$ORIGIN");
    record("nvidia_cudnn_cu13-9.19.0.56.dist-info", {"nvidia/cudnn/lib/libcudnn.so.9", "nvidia/cudnn/lib/libcudnn_ops.so.9",
                                                       "nvidia/cudnn/lib/libcudnn_graph.so.9"});
    lib(kSite + "/nvidia/nccl/lib/libnccl.so.2", "libnccl.so.2", "$ORIGIN");
    record("nvidia_nccl_cu13-2.28.9.dist-info", {"nvidia/nccl/lib/libnccl.so.2"});
    lib(kSite + "/nvidia/cu13/lib/libcudart.so.13", "libcudart.so.13", "$ORIGIN");
    record("nvidia_cuda_runtime-13.0.96.dist-info", {"nvidia/cu13/lib/libcudart.so.13"});
    // torch: libtorch_cuda.so with the cu13 wheel's DT_RPATH; _C needs it through $ORIGIN/lib.
    std::string tl = kSite + "/torch/lib";
    ASSERT_EQ(build_elf(R(tl + "/libtorch_cuda.so"),
                        LibSpec()
                            .with_soname("libtorch_cuda.so")
                            .with_needed({R(kSite + "/nvidia/cudnn/lib/libcudnn.so.9"), R(kSite + "/nvidia/nccl/lib/libnccl.so.2"),
                                          R(kSite + "/nvidia/cu13/lib/libcudart.so.13")})
                            .with_rpath("$ORIGIN/../../nvidia/cudnn/lib:$ORIGIN/../../nvidia/nccl/lib:$ORIGIN/../../nvidia/cu13/lib:$ORIGIN")),
              "");
    ASSERT_EQ(build_elf(R(kSite + "/torch/_C.cpython-312-x86_64-linux-gnu.so"),
                        LibSpec().with_needed({R(tl + "/libtorch_cuda.so")}).with_rpath("$ORIGIN/lib")),
              "");
    write_file(R(kSite + "/torch/__init__.py"), "def _preload_cuda_deps(lib_folder, lib_name):\n    pass\n");
    have_cache = sh("ldconfig -X -r " + quote(root)).rc == 0 && fs::exists(R("/etc/ld.so.cache"));
  }

  Facts facts() {
    Facts f;
    f.toolkit.toolkits.push_back({});
    f.toolkit.toolkits.back().root = kTk;
    PythonEnv env;
    env.prefix = kVenv;
    env.kind = "venv";
    env.site_packages = {kSite};
    env.torch.version = "2.11.0+cu130";
    env.torch.cuda = "13.0";
    PythonPackage torch;
    torch.name = "torch";
    torch.version = "2.11.0+cu130";
    torch.requires_dist = {"nvidia-cudnn-cu13==9.19.0.56; platform_system == \"Linux\"", "nvidia-nccl-cu13==2.28.9",
                           "cuda-toolkit[cudart]==13.0.2"};
    env.packages = {torch};
    f.pythons.push_back(env);
    return f;
  }

  Facts probe(std::map<std::string, std::string> env = {}) {
    Facts f = facts();
    ProbeOptions opts;
    opts.root = Root(root);
    opts.env = std::move(env);
    probe_libs(f, opts);
    return f;
  }
};

const LibraryCopy* copy_in(const Facts& f, const std::string& soname, const std::string& dir_prefix) {
  for (const auto& c : f.libs.copies)
    if (c.soname == soname && c.path.rfind(dir_prefix, 0) == 0) return &c;
  return nullptr;
}

const LibraryResolution* resolution(const Facts& f, const std::string& consumer_prefix, const std::string& soname) {
  for (const auto& r : f.libs.resolutions)
    if (r.soname == soname && r.consumer.rfind(consumer_prefix, 0) == 0) return &r;
  return nullptr;
}

TEST_F(LibsProbeTest, FindsEveryCopyWithVersionAndOrigin) {
  Facts f = probe();
  const LibraryCopy* sys = copy_in(f, "libcudnn.so.9", kSys);
  ASSERT_NE(sys, nullptr);
  EXPECT_EQ(sys->name, "cudnn");
  EXPECT_EQ(sys->path, kSys + "/libcudnn.so.9");
  EXPECT_EQ(sys->realpath, kSys + "/libcudnn.so.9.14.0");
  EXPECT_EQ(sys->version, "9.14.0");
  EXPECT_EQ(sys->version_source, "file name");
  EXPECT_EQ(sys->origin, "system");
  if (have_cache) {
    EXPECT_TRUE(sys->in_ld_cache);
  }

  const LibraryCopy* wheel = copy_in(f, "libcudnn.so.9", kSite);
  ASSERT_NE(wheel, nullptr);
  EXPECT_EQ(wheel->version, "9.19.0.56");
  EXPECT_EQ(wheel->package, "nvidia-cudnn-cu13");
  EXPECT_EQ(wheel->version_source, "nvidia_cudnn_cu13-9.19.0.56.dist-info");
  EXPECT_EQ(wheel->origin, "wheel:nvidia-cudnn-cu13 (" + kVenv + ")");
  EXPECT_FALSE(wheel->in_ld_cache);

  const LibraryCopy* tk = copy_in(f, "libcudart.so.13", kTk);
  ASSERT_NE(tk, nullptr);
  EXPECT_EQ(tk->version, "13.0.96");
  EXPECT_EQ(tk->version_source, kTk + "/version.json");
  EXPECT_EQ(tk->origin, "toolkit:" + kTk);

  EXPECT_NE(copy_in(f, "libnccl.so.2", kSys), nullptr);
  EXPECT_EQ(copy_in(f, "libnccl.so.2", kSite)->version, "2.28.9");
  EXPECT_EQ(f.libs.copies.size(), 10u);  // cudnn+ops+graph ×2, nccl ×2, cudart ×2
}

TEST_F(LibsProbeTest, TorchGetsTheWheelsThroughItsRpath) {
  Facts f = probe();
  const LibraryResolution* cudnn = resolution(f, "torch 2.11.0+cu130", "libcudnn.so.9");
  ASSERT_NE(cudnn, nullptr);
  EXPECT_EQ(cudnn->path, kSite + "/torch/lib/../../nvidia/cudnn/lib/libcudnn.so.9");
  EXPECT_EQ(cudnn->realpath, kSite + "/nvidia/cudnn/lib/libcudnn.so.9");
  EXPECT_EQ(cudnn->via, "RPATH");
  EXPECT_NE(cudnn->detail.find("$ORIGIN/../../nvidia/cudnn/lib"), std::string::npos) << cudnn->detail;
  EXPECT_EQ(cudnn->requested_by, kSite + "/torch/lib/libtorch_cuda.so");
  EXPECT_EQ(cudnn->provided_by, "nvidia-cudnn-cu13==9.19.0.56; platform_system == \"Linux\"");
  EXPECT_EQ(cudnn->env, kVenv);
  // libcudnn.so dlopens its sub-libraries: found next to it through its RUNPATH $ORIGIN.
  const LibraryResolution* ops = resolution(f, "torch", "libcudnn_ops.so.9");
  ASSERT_NE(ops, nullptr);
  EXPECT_EQ(ops->via, "RUNPATH");
  EXPECT_EQ(ops->realpath, kSite + "/nvidia/cudnn/lib/libcudnn_ops.so.9");
  EXPECT_EQ(resolution(f, "torch", "libcudart.so.13")->provided_by, "cuda-toolkit[cudart]==13.0.2");

  if (!have_cache) GTEST_SKIP() << "ldconfig -r unavailable: no ld.so.cache in the tree";
  const LibraryResolution* plain = resolution(f, "a program without RPATH", "libcudnn.so.9");
  ASSERT_NE(plain, nullptr);
  EXPECT_EQ(plain->via, "ld.so.cache");
  EXPECT_EQ(plain->realpath, kSys + "/libcudnn.so.9.14.0");
}

TEST_F(LibsProbeTest, LdLibraryPathDoesNotBeatTorchsRpath) {
  Facts f = probe({{"LD_LIBRARY_PATH", kSys}});
  EXPECT_EQ(f.libs.ld_library_path, std::vector<std::string>{kSys});
  EXPECT_EQ(resolution(f, "torch", "libnccl.so.2")->realpath, kSite + "/nvidia/nccl/lib/libnccl.so.2");
  const LibraryResolution* plain = resolution(f, "a program without RPATH", "libnccl.so.2");
  EXPECT_EQ(plain->via, "LD_LIBRARY_PATH");
  EXPECT_TRUE(copy_in(f, "libnccl.so.2", kSys)->on_ld_library_path);
}

// LD_LIBRARY_PATH with the system lib dir: the shim is torch's (RPATH), its sub-libraries the
// system's (libcudnn.so.9's dlopen searches LD_LIBRARY_PATH before its RUNPATH $ORIGIN). The
// wheel's 9.19.0.56 shim first asks for libcudnn_graph.so.9.19.0, which no directory has.
TEST_F(LibsProbeTest, LdLibraryPathGivesTheWheelShimTheSystemSubLibraries) {
  Facts f = probe({{"LD_LIBRARY_PATH", kSys}});
  const LibraryResolution* shim = resolution(f, "torch", "libcudnn.so.9");
  ASSERT_NE(shim, nullptr);
  EXPECT_EQ(shim->realpath, kSite + "/nvidia/cudnn/lib/libcudnn.so.9");
  const LibraryResolution* graph = resolution(f, "torch", "libcudnn_graph.so.9");
  ASSERT_NE(graph, nullptr);
  EXPECT_EQ(graph->realpath, kSys + "/libcudnn_graph.so.9.14.0");
  EXPECT_EQ(graph->via, "LD_LIBRARY_PATH");
  EXPECT_EQ(graph->requested_by, kSite + "/torch/lib/../../nvidia/cudnn/lib/libcudnn.so.9");
  // Without it, the graph library next to the shim.
  Facts plain = probe();
  EXPECT_EQ(resolution(plain, "torch", "libcudnn_graph.so.9")->realpath, kSite + "/nvidia/cudnn/lib/libcudnn_graph.so.9");
  EXPECT_EQ(resolution(plain, "torch", "libcudnn_graph.so.9")->via, "RUNPATH");
  // A versioned name the shim asks for first wins even over LD_LIBRARY_PATH.
  fs::copy_file(R(kSite + "/nvidia/cudnn/lib/libcudnn_graph.so.9"), R(kSite + "/nvidia/cudnn/lib/libcudnn_graph.so.9.19.0"));
  Facts versioned = probe({{"LD_LIBRARY_PATH", kSys}});
  EXPECT_EQ(resolution(versioned, "torch", "libcudnn_graph.so.9")->realpath,
            kSite + "/nvidia/cudnn/lib/libcudnn_graph.so.9.19.0");
}

TEST_F(LibsProbeTest, MissingWheelFallsBackToTheSystemCopy) {
  fs::remove_all(R(kSite + "/nvidia/nccl"));
  Facts f = probe();
  const LibraryResolution* nccl = resolution(f, "torch", "libnccl.so.2");
  ASSERT_NE(nccl, nullptr);
  if (have_cache) {
    EXPECT_EQ(nccl->via, "ld.so.cache");
  } else {
    EXPECT_EQ(nccl->via, "default path");
  }
  EXPECT_EQ(nccl->realpath, kSys + "/libnccl.so.2.28.3");
  EXPECT_FALSE(nccl->tried.empty());  // the RPATH candidates it passed over
}

TEST_F(LibsProbeTest, NowhereMeansNotFoundAndCorruptFilesAreNotes) {
  fs::remove_all(R(kSite + "/nvidia/cu13"));
  fs::remove(R(kTk + "/targets/x86_64-linux/lib/libcudart.so.13"));
  write_file(R(kSys + "/libcublas.so.13"), "not an ELF file at all");
  Facts f = probe();
  const LibraryResolution* rt = resolution(f, "torch", "libcudart.so.13");
  ASSERT_NE(rt, nullptr);
  EXPECT_EQ(rt->path, "");
  EXPECT_EQ(rt->via, "not found");
  bool noted = false;
  for (const auto& n : f.notes) noted |= n.probe == "libs" && n.message.find("libcublas.so.13: not an ELF file") != std::string::npos;
  EXPECT_TRUE(noted);
}

TEST_F(LibsProbeTest, BundledCopiesJaxPluginsAndCondaEnvs) {
  // A torch wheel that bundles a hash-renamed cudart, a jax CUDA plugin linked against
  // the cu13 wheel, and a conda env with its own NCCL.
  lib(kSite + "/torch/lib/libcudart-1a2b3c4d.so.13", "libcudart-1a2b3c4d.so.13");
  ASSERT_EQ(build_elf(R(kSite + "/jax_plugins/xla_cuda13/xla_cuda_plugin.so"),
                      LibSpec()
                          .with_needed({R(kSite + "/nvidia/cu13/lib/libcudart.so.13")})
                          .with_rpath("$ORIGIN/../../nvidia/cu13/lib")),
            "");
  lib("/opt/conda/envs/x/lib/libnccl.so.2.27.3", "libnccl.so.2");
  fs::create_directories(R("/opt/conda/envs/x/conda-meta"));
  Facts f = facts();
  PythonEnv conda;
  conda.prefix = "/opt/conda/envs/x";
  conda.kind = "conda";
  f.pythons.push_back(conda);
  ProbeOptions opts;
  opts.root = Root(root);
  probe_libs(f, opts);

  const LibraryCopy* bundled = copy_in(f, "libcudart-1a2b3c4d.so.13", kSite + "/torch/lib");
  ASSERT_NE(bundled, nullptr);
  EXPECT_EQ(bundled->name, "cudart");
  EXPECT_EQ(bundled->origin, "torch/lib (bundled) (" + kVenv + ")");
  const LibraryCopy* nccl = copy_in(f, "libnccl.so.2", "/opt/conda/envs/x/lib");
  ASSERT_NE(nccl, nullptr);
  EXPECT_EQ(nccl->origin, "conda:/opt/conda/envs/x");
  EXPECT_EQ(nccl->version, "2.27.3");
  const LibraryResolution* jax = resolution(f, "jax plugin xla_cuda13", "libcudart.so.13");
  ASSERT_NE(jax, nullptr);
  EXPECT_EQ(jax->via, "RPATH");
  EXPECT_EQ(jax->realpath, kSite + "/nvidia/cu13/lib/libcudart.so.13");
}

TEST_F(LibsProbeTest, OlderNvJitLinkOnLdLibraryPathMissesSymbols) {
  // pytorch#111469: the wheel's libcusparse (no RUNPATH) needs nvJitLink symbols of its
  // release; torch's RPATH has no nvjitlink dir, so LD_LIBRARY_PATH's older toolkit copy wins.
  std::string tkl = kTk + "/targets/x86_64-linux/lib";
  write_file(t / "new.c", "int __nvJitLinkCreate_13_0(void){return 0;} int __nvJitLinkComplete_13_0(void){return 0;}\n");
  write_file(t / "old.c", "int __nvJitLinkCreate_13_0(void){return 0;}\n");
  write_file(t / "jit.map", "libnvJitLink.so.13 { global: __nvJitLink*; local: *; };\n");
  write_file(t / "sp.c", "int __nvJitLinkCreate_13_0(void); int __nvJitLinkComplete_13_0(void);\n"
                         "int sp(void){return __nvJitLinkCreate_13_0() + __nvJitLinkComplete_13_0();}\n");
  std::string vs = " -Wl,--version-script=" + quote(t / "jit.map");
  ASSERT_EQ(build_elf(R(kSite + "/nvidia/nvjitlink/lib/libnvJitLink.so.13"),
                      LibSpec().with_soname("libnvJitLink.so.13").with_extra(quote(t / "new.c") + vs)), "");
  ASSERT_EQ(build_elf(R(tkl + "/libnvJitLink.so.13.0.39"), LibSpec().with_soname("libnvJitLink.so.13").with_extra(quote(t / "old.c") + vs)), "");
  link("libnvJitLink.so.13.0.39", tkl + "/libnvJitLink.so.13");
  ASSERT_EQ(build_elf(R(kSite + "/nvidia/cusparse/lib/libcusparse.so.12"),
                      LibSpec()
                          .with_soname("libcusparse.so.12")
                          .with_needed({R(kSite + "/nvidia/nvjitlink/lib/libnvJitLink.so.13")})
                          .with_extra(quote(t / "sp.c"))),
            "");
  ASSERT_EQ(build_elf(R(kSite + "/torch/lib/libtorch_cuda.so"),
                      LibSpec()
                          .with_soname("libtorch_cuda.so")
                          .with_needed({R(kSite + "/nvidia/cusparse/lib/libcusparse.so.12")})
                          .with_rpath("$ORIGIN/../../nvidia/cusparse/lib:$ORIGIN")),
            "");
  Facts f = probe({{"LD_LIBRARY_PATH", tkl}});
  const LibraryResolution* jit = resolution(f, "torch", "libnvJitLink.so.13");
  ASSERT_NE(jit, nullptr);
  EXPECT_EQ(jit->via, "LD_LIBRARY_PATH");
  EXPECT_EQ(jit->requested_by, kSite + "/torch/lib/../../nvidia/cusparse/lib/libcusparse.so.12");
  EXPECT_EQ(jit->missing_symbols, std::vector<std::string>{"__nvJitLinkComplete_13_0"});
  // Without LD_LIBRARY_PATH the loader finds no nvJitLink (the wheel dir is on no search
  // path and this tree's cache predates the copy): torch/__init__.py's preload takes the wheel's.
  Facts g = probe();
  const LibraryResolution* jit2 = resolution(g, "torch", "libnvJitLink.so.13");
  ASSERT_NE(jit2, nullptr);
  EXPECT_EQ(jit2->via, "preload by torch/__init__.py");
  EXPECT_EQ(jit2->realpath, kSite + "/nvidia/nvjitlink/lib/libnvJitLink.so.13");
  EXPECT_TRUE(jit2->missing_symbols.empty());
}

TEST(LibsCatalog, FamiliesFromFileNames) {
  EXPECT_EQ(cuda_lib_family("libcudnn_engines_precompiled.so.9")->name, "cudnn");
  EXPECT_EQ(cuda_lib_family("libcublasLt.so.13")->name, "cublasLt");
  EXPECT_EQ(cuda_lib_family("libcublas.so.13.1.0.3")->name, "cublas");
  EXPECT_EQ(cuda_lib_family("libcudart-d0da41ae.so.12")->name, "cudart");
  EXPECT_EQ(cuda_lib_family("libnvJitLink.so")->name, "nvJitLink");
  EXPECT_EQ(cuda_lib_family("libcufftw.so.12"), nullptr);
  EXPECT_EQ(cuda_lib_family("libcusolverMg.so.12"), nullptr);
  EXPECT_EQ(cuda_lib_family("libnvrtc-builtins.so.13.0")->name, "nvrtc");  // a companion (data/libraries.toml)
  EXPECT_EQ(cuda_lib_family("libnvrtc-builtins.so")->name, "nvrtc");
  EXPECT_EQ(cuda_lib_family("libnvrtc-builtinsx.so.13.0"), nullptr);
  // Which of them is the family's own library ("2 copies of nvrtc" counts only those).
  EXPECT_TRUE(main_library_name("nvrtc", "libnvrtc.so.13"));
  EXPECT_TRUE(main_library_name("cudart", "libcudart-d0da41ae.so.12"));
  EXPECT_FALSE(main_library_name("nvrtc", "libnvrtc-builtins.so.13.0"));
  EXPECT_FALSE(main_library_name("cudnn", "libcudnn_ops.so.9"));
  EXPECT_FALSE(main_library_name("cublas", "libcublasLt.so.13"));
  EXPECT_EQ(cuda_lib_family("libcudnn.so.9.txt"), nullptr);
  EXPECT_EQ(version_from_filename("libnccl.so.2.28.3"), "2.28.3");
  EXPECT_EQ(version_from_filename("libcudnn.so"), "");
}

TEST(LibsProbeHost, ThisMachineIsFast) {
  // The real root: the CUDA 13.0 toolkit assembled from wheels in /usr/local/cuda-13.0.
  if (!fs::exists("/usr/local/cuda-13.0")) GTEST_SKIP();
  Facts f;
  f.toolkit.toolkits.push_back({});
  f.toolkit.toolkits.back().root = "/usr/local/cuda-13.0";
  ProbeOptions opts;
  opts.env = current_environment();
  auto t0 = std::chrono::steady_clock::now();
  probe_libs(f, opts);
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_LT(s, 0.25);  // 29 ms measured here (Debian 12, 2 cores)
  EXPECT_FALSE(f.libs.copies.empty());
  EXPECT_EQ(f.libs.ld_cache_format, "new");
  std::cerr << "probe_libs on this machine: " << s * 1000 << " ms, " << f.libs.copies.size() << " copies\n";
}

}  // namespace
}  // namespace cd
