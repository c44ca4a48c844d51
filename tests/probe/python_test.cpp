// Python probe against hermetic --root trees:
//  python_h200: the H200 layout (/opt/torch/.venv first on PATH, torch 2.11.0+cu130 with real-shaped
//    METADATA (cuda-toolkit[...] and nvidia-* pins), nvidia-* cu13 wheels, torchvision, jax, cupy).
//  python_broken: pyenv shim as python3 (3.11.7, no torch), conda base + env "ml" with a CPU torch
//    (also $CONDA_PREFIX and ~/.conda/environments.txt), ./.venv with torch 2.10+cu128 and
//    conflicting vllm/xformers/flash-attn/torchaudio/nvidia-* wheels.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "probe/probe.hpp"
#include "probe/python_deep.hpp"
#include "probe/python_envs.hpp"
#include "probe/python_packages.hpp"
#include "util/strings.hpp"
#include "util/subprocess.hpp"

namespace cd {
namespace {

const std::string kH200 = std::string(CD_FIXTURES) + "/roots/python_h200";
const std::string kBroken = std::string(CD_FIXTURES) + "/roots/python_broken";

ProbeOptions options(const std::string& root, std::map<std::string, std::string> env) {
  ProbeOptions o;
  o.root = Root(root);
  o.env = std::move(env);
  return o;
}

const PythonEnv* env_at(const Facts& f, const std::string& prefix) {
  for (const auto& py : f.pythons)
    if (py.prefix == prefix) return &py;
  return nullptr;
}

const PythonPackage* pkg(const PythonEnv& py, const std::string& name) {
  for (const auto& p : py.packages)
    if (p.name == name) return &p;
  return nullptr;
}

TEST(PythonProbe, H200LayoutWithoutRunningPython) {
  Facts f;
  probe_pythons(f, options(kH200, {{"PATH", "/opt/torch/.venv/bin:/usr/local/cuda/bin:/usr/bin"}, {"HOME", "/root"}}));
  const PythonEnv* py = env_at(f, "/opt/torch/.venv");
  ASSERT_NE(py, nullptr);
  EXPECT_TRUE(py->is_default);
  EXPECT_EQ(py->found_by, "PATH, /opt");
  EXPECT_EQ(py->kind, "venv");
  EXPECT_EQ(py->version, "3.12.3");
  EXPECT_EQ(py->interpreter, "/opt/torch/.venv/bin/python3");
  EXPECT_EQ(py->site_packages, std::vector<std::string>{"/opt/torch/.venv/lib/python3.12/site-packages"});
  EXPECT_EQ(py->torch.version, "2.11.0+cu130");
  EXPECT_EQ(py->torch.cuda, "13.0");
  EXPECT_TRUE(py->torch.hip.empty());
  EXPECT_EQ(py->torch.git_version, "70d99e998b8955e778fe5b5f9ee4bdb4f1a3ab2e");
  const PythonPackage* torch = pkg(*py, "torch");
  ASSERT_NE(torch, nullptr);
  // Only CUDA-relevant pins, and nothing from the description after the header.
  EXPECT_EQ(torch->requires_dist.size(), 6u);
  EXPECT_EQ(torch->requires_dist.front().rfind("cuda-toolkit[cublas", 0), 0u);
  EXPECT_EQ(torch->installer, "pip");
  ASSERT_NE(pkg(*py, "nvidia-cudnn-cu13"), nullptr);
  EXPECT_EQ(pkg(*py, "nvidia-cudnn-cu13")->version, "9.19.0.56");
  EXPECT_NE(pkg(*py, "jax-cuda13-plugin"), nullptr);
  EXPECT_NE(pkg(*py, "cupy-cuda13x"), nullptr);
  EXPECT_EQ(pkg(*py, "numpy"), nullptr);  // not CUDA-relevant: not recorded
  EXPECT_EQ(pkg(*py, "torchvision")->requires_dist, std::vector<std::string>{"torch==2.11.0"});
}

TEST(PythonProbe, FindsEveryEnvironmentOnceAndWhichOneRuns) {
  Facts f;
  probe_pythons(f, options(kBroken, {{"PATH", "/root/.pyenv/shims:/usr/bin"},
                                     {"HOME", "/root"},
                                     {"PWD", "/work/proj"},
                                     {"CONDA_PREFIX", "/root/miniconda3/envs/ml"}}));
  const PythonEnv* pyenv = env_at(f, "/root/.pyenv/versions/3.11.7");
  const PythonEnv* ml = env_at(f, "/root/miniconda3/envs/ml");
  const PythonEnv* base = env_at(f, "/root/miniconda3");
  const PythonEnv* proj = env_at(f, "/work/proj/.venv");
  ASSERT_TRUE(pyenv && ml && base && proj);
  EXPECT_EQ(f.pythons.size(), 4u);  // each found once, the missing env of environments.txt skipped
  EXPECT_TRUE(pyenv->is_default);   // the shim runs ~/.pyenv/version
  EXPECT_EQ(pyenv->found_by, "PATH, pyenv");
  EXPECT_FALSE(ml->is_default);
  EXPECT_EQ(ml->found_by, "CONDA_PREFIX, conda env list");
  EXPECT_EQ(ml->kind, "conda");
  EXPECT_EQ(ml->version, "3.10.14");
  EXPECT_EQ(ml->version_source, "conda-meta");
  EXPECT_EQ(ml->torch.version, "2.5.1+cpu");
  EXPECT_TRUE(ml->torch.cuda.empty());
  EXPECT_EQ(proj->found_by, ".venv");
  EXPECT_EQ(proj->version, "3.12.3");
  EXPECT_EQ(proj->torch.cuda, "12.8");
  EXPECT_EQ(pkg(*proj, "flash-attn")->version, "2.8.3+cu12torch2.9cxx11abiTRUE");
  EXPECT_EQ(pkg(*proj, "vllm")->requires_dist, (std::vector<std::string>{"torch==2.11.0", "xformers; extra == \"xformers\""}));
}

TEST(PythonProbe, PyenvVersionVariableWinsOverTheGlobalFile) {
  auto envs = find_python_envs(options(kBroken, {{"PATH", "/root/.pyenv/shims"}, {"HOME", "/root"}, {"PYENV_VERSION", "system"}}));
  for (const auto& e : envs) EXPECT_FALSE(e.is_default) << e.prefix;  // "system" and no python3 after the shims
}

TEST(PythonPackages, NormalisesNamesAndPicksRelevantOnes) {
  EXPECT_EQ(normalize_dist_name("Flash_Attn"), "flash-attn");
  EXPECT_EQ(normalize_dist_name("jax_cuda12_plugin"), "jax-cuda12-plugin");
  EXPECT_TRUE(is_relevant_dist("nvidia-nccl-cu12"));
  EXPECT_TRUE(is_relevant_dist("cupy-cuda12x"));
  EXPECT_FALSE(is_relevant_dist("numpy"));
  for (const char* n : {"cudf-cu12", "tensorrt-cu12-libs", "spconv-cu120", "mxnet-cu112", "transformer-engine", "numba-cuda"})
    EXPECT_TRUE(is_relevant_dist(n)) << n;
  for (const char* n : {"cucumber", "scikit-cuda-lab", "my-cu1x"}) EXPECT_FALSE(is_relevant_dist(n)) << n;
}

TEST(PythonDeep, ParsesTheScriptOutput) {
  DeepCheck d = parse_deep_output(
      "noise\nCUDA_DOCTOR_DEEP:{\"torch_version\": \"2.11.0+cu130\", \"torch_cuda\": \"13.0\", \"cuda_available\": true, "
      "\"device_count\": 1, \"capabilities\": [\"9.0\"], \"arch_list\": [\"sm_90\"], \"cudnn_version\": \"91900\", "
      "\"nccl_version\": \"2.28.9\", \"loaded_libraries\": [\"/x/libcudnn.so.9\"]}\n",
      "");
  EXPECT_TRUE(d.ran);
  EXPECT_TRUE(d.error.empty());
  EXPECT_TRUE(d.cuda_available);
  EXPECT_EQ(d.device_count, 1);
  EXPECT_EQ(d.capabilities, std::vector<std::string>{"9.0"});
  EXPECT_EQ(d.cudnn_version, "91900");
  DeepCheck crashed = parse_deep_output("", "Traceback...\nImportError: libcudnn.so.9: cannot open shared object file\n");
  EXPECT_EQ(crashed.error, "ImportError: libcudnn.so.9: cannot open shared object file");
}

// A real interpreter of this machine without torch: the import error is recorded, not thrown.
TEST(PythonDeep, RealInterpreterWithoutTorchReportsTheImportError) {
  std::string python;
  for (const char* p : {"/usr/bin/python3", "/usr/local/bin/python3"})
    if (std::filesystem::exists(p)) python = p;
  if (python.empty()) GTEST_SKIP() << "no python3";
  DeepCheck d = run_deep_check(python, std::chrono::seconds(30));
  EXPECT_TRUE(d.ran);
  if (d.torch_version.empty()) {
    EXPECT_NE(d.error.find("No module named 'torch'"), std::string::npos) << d.error;
  }
  EXPECT_GT(d.seconds, 0.0);
}

TEST(PythonDeep, HungInterpreterTimesOut) {
  auto path = std::filesystem::temp_directory_path() / ("cd_hang_py_" + std::to_string(::getpid()));
  std::ofstream(path) << "#!/bin/sh\nsleep 30\n";
  std::filesystem::permissions(path, std::filesystem::perms::owner_all);
  DeepCheck d = run_deep_check(path.string(), std::chrono::milliseconds(300));
  std::filesystem::remove(path);
  EXPECT_TRUE(d.ran);
  EXPECT_NE(d.error.find("timed out"), std::string::npos) << d.error;
  EXPECT_LT(d.seconds, 5.0);
}

}  // namespace
}  // namespace cd

namespace cd {
namespace {

// This machine (9 pyenv versions, one with ~200 distributions, a pip-wheel CUDA 13.0): the
// file-only probes must stay far below the one-second budget of `check`.
TEST(ProbeSpeed, ToolkitsAndPythonsOnThisMachine) {
  ProbeOptions o;
  o.env = current_environment();
  Facts f;
  auto t0 = std::chrono::steady_clock::now();
  probe_pythons(f, o);
  auto t1 = std::chrono::steady_clock::now();
  probe_toolkits(f, o);
  auto t2 = std::chrono::steady_clock::now();
  double py_ms = std::chrono::duration<double, std::milli>(t1 - t0).count();
  double tk_ms = std::chrono::duration<double, std::milli>(t2 - t1).count();
  std::cout << "probe_pythons " << py_ms << " ms (" << f.pythons.size() << " envs), probe_toolkits " << tk_ms << " ms ("
            << f.toolkit.toolkits.size() << " toolkits, " << f.toolkit.host_compilers.size() << " compilers)\n";
  EXPECT_FALSE(f.pythons.empty());
  EXPECT_LT(py_ms + tk_ms, 2000.0);
}

}  // namespace
}  // namespace cd

namespace cd {
namespace {

namespace fs = std::filesystem;

// A real venv layout around this machine's /usr/bin/python3 (pyvenv.cfg + bin/python3 link) with a
// stand-in torch package, so --deep runs a real interpreter end to end without a real torch.
class DeepEnv : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::exists("/usr/bin/python3")) GTEST_SKIP() << "no /usr/bin/python3";
    ProcessResult r = run_process({"/usr/bin/python3", "-c", "import sys; print('%d.%d' % sys.version_info[:2])"});
    ASSERT_TRUE(r.ok());
    xy_ = std::string(trim(r.out));
    prefix_ = fs::temp_directory_path() / ("cd_deep_venv_" + std::to_string(::getpid()));
    site_ = prefix_ / ("lib/python" + xy_ + "/site-packages");
    fs::create_directories(prefix_ / "bin");
    fs::create_directories(site_ / "torch");
    fs::create_directories(site_ / "torch-2.11.0+cu130.dist-info");
    std::ofstream(prefix_ / "pyvenv.cfg") << "home = /usr/bin\ninclude-system-site-packages = false\n";
    fs::create_symlink("/usr/bin/python3", prefix_ / "bin/python3");
    std::ofstream(site_ / "torch-2.11.0+cu130.dist-info/METADATA") << "Metadata-Version: 2.1\nName: torch\nVersion: 2.11.0+cu130\n";
    std::ofstream(site_ / "torch/version.py") << "__version__ = '2.11.0+cu130'\ncuda = '13.0'\n";
  }
  void TearDown() override {
    if (!prefix_.empty()) fs::remove_all(prefix_);
  }
  void write_torch_init(const std::string& text) { std::ofstream(site_ / "torch/__init__.py") << text; }
  const PythonEnv& probe_deep() {
    ProbeOptions o;
    o.deep = true;
    o.timeout = std::chrono::seconds(30);
    o.env = {{"PATH", (prefix_ / "bin").string()}, {"HOME", "/nonexistent"}};
    facts_ = {};
    probe_pythons(facts_, o);
    for (const auto& py : facts_.pythons)
      if (py.prefix == prefix_.string()) return py;
    ADD_FAILURE() << "venv not found";
    return facts_.pythons.front();
  }
  std::string xy_;
  fs::path prefix_, site_;
  Facts facts_;
};

TEST_F(DeepEnv, ReportsWhatTorchSees) {
  write_torch_init(
      "import types\n__version__ = '2.11.0+cu130'\nversion = types.SimpleNamespace(cuda='13.0')\n"
      "cuda = types.SimpleNamespace(is_available=lambda: False, device_count=lambda: 0, get_arch_list=lambda: [],\n"
      "                             nccl=types.SimpleNamespace(version=lambda: (2, 28, 9)))\n"
      "_C = types.SimpleNamespace(_cuda_getArchFlags=lambda: 'sm_90 sm_100')\n"
      "backends = types.SimpleNamespace(cudnn=types.SimpleNamespace(version=lambda: 91900))\n");
  const PythonEnv& py = probe_deep();
  EXPECT_TRUE(py.is_default);
  ASSERT_TRUE(py.deep.ran);
  EXPECT_EQ(py.deep.error, "");
  EXPECT_EQ(py.deep.torch_version, "2.11.0+cu130");
  EXPECT_FALSE(py.deep.cuda_available);
  EXPECT_EQ(py.deep.cudnn_version, "91900");
  EXPECT_EQ(py.deep.nccl_version, "2.28.9");
  EXPECT_EQ(py.deep.arch_list, (std::vector<std::string>{"sm_90", "sm_100"}));  // derive prefers it to the kb's list
}

// JAX with its CUDA plugin installed: its own interpreter run, and a CPU fallback keeps
// the log line that says why.
TEST_F(DeepEnv, JaxRunsOnlyWithACudaPluginAndKeepsTheFallbackReason) {
  write_torch_init("__version__ = '2.11.0+cu130'\n");
  fs::create_directories(site_ / "jax");
  fs::create_directories(site_ / "jax-0.11.2.dist-info");
  std::ofstream(site_ / "jax-0.11.2.dist-info/METADATA") << "Metadata-Version: 2.1\nName: jax\nVersion: 0.11.2\n";
  std::ofstream(site_ / "jax/__init__.py")
      << "import sys\n__version__ = '0.11.2'\n"
         "sys.stderr.write(\"WARNING: Unable to initialize backend 'cuda': version mismatch (plugin 0.11.1, jaxlib 0.11.2)\\n\")\n"
         "def default_backend(): return 'cpu'\n"
         "class _D:\n    device_kind = 'cpu'\n"
         "def devices(): return [_D()]\n";
  EXPECT_FALSE(probe_deep().deep_jax.ran);  // jax without a CUDA plugin is a CPU install: nothing to confirm
  fs::create_directories(site_ / "jax_cuda13_plugin-0.11.1.dist-info");
  std::ofstream(site_ / "jax_cuda13_plugin-0.11.1.dist-info/METADATA")
      << "Metadata-Version: 2.1\nName: jax-cuda13-plugin\nVersion: 0.11.1\n";
  const PythonEnv& py = probe_deep();
  ASSERT_TRUE(py.deep_jax.ran);
  EXPECT_EQ(py.deep_jax.version, "0.11.2");
  EXPECT_EQ(py.deep_jax.backend, "cpu");
  EXPECT_EQ(py.deep_jax.devices, (std::vector<std::string>{"cpu"}));
  EXPECT_EQ(py.deep_jax.error, "WARNING: Unable to initialize backend 'cuda': version mismatch (plugin 0.11.1, jaxlib 0.11.2)");
}

TEST(DeepJaxOutput, SuccessImportErrorAndGarbage) {
  DeepJax ok = parse_deep_jax_output("noise\nCUDA_DOCTOR_DEEP:{\"version\": \"0.11.2\", \"backend\": \"gpu\", \"devices\": [\"NVIDIA H200\"]}\n", "");
  EXPECT_EQ(ok.backend, "gpu");
  EXPECT_EQ(ok.devices, (std::vector<std::string>{"NVIDIA H200"}));
  EXPECT_EQ(ok.error, "");
  DeepJax bad = parse_deep_jax_output("CUDA_DOCTOR_DEEP:{\"error\": \"ModuleNotFoundError: No module named 'jaxlib'\"}\n", "");
  EXPECT_EQ(bad.error, "ModuleNotFoundError: No module named 'jaxlib'");
  DeepJax none = parse_deep_jax_output("CUDA_DOCTOR_DEEP:{not json\n", "Segmentation fault\n");
  EXPECT_TRUE(none.ran);
  EXPECT_EQ(none.error, "Segmentation fault");
}

TEST_F(DeepEnv, RecordsTheImportError) {
  write_torch_init("raise ImportError('libcudnn.so.9: cannot open shared object file: No such file or directory')\n");
  const PythonEnv& py = probe_deep();
  ASSERT_TRUE(py.deep.ran);
  EXPECT_EQ(py.deep.error, "ImportError: libcudnn.so.9: cannot open shared object file: No such file or directory");
  EXPECT_EQ(py.torch.cuda, "13.0");  // the file facts are still there
  EXPECT_TRUE(py.deep.arch_list.empty());
}

}  // namespace
}  // namespace cd

namespace cd {
namespace {

// conda builds of torch choose their own arch lists: the installer is recorded, so derive
// (tests/derive) does not claim the kb's wheel list for them.
TEST(PythonProbe, RecordsCondaAsTorchsInstaller) {
  auto root = std::filesystem::temp_directory_path() / ("cd_conda_root_" + std::to_string(::getpid()));
  auto site = root / "opt/conda/lib/python3.11/site-packages";
  std::filesystem::create_directories(root / "opt/conda/conda-meta");
  std::filesystem::create_directories(site / "torch");
  std::filesystem::create_directories(site / "torch-2.5.1.dist-info");
  std::ofstream(root / "opt/conda/conda-meta/python-3.11.9-h0.json") << "{}";
  std::ofstream(site / "torch-2.5.1.dist-info/METADATA") << "Metadata-Version: 2.1\nName: torch\nVersion: 2.5.1\n";
  std::ofstream(site / "torch-2.5.1.dist-info/INSTALLER") << "conda\n";
  std::ofstream(site / "torch/version.py") << "__version__ = '2.5.1'\ncuda = '12.4'\n";
  Facts f;
  probe_pythons(f, options(root.string(), {}));
  std::filesystem::remove_all(root);
  const PythonEnv* py = env_at(f, "/opt/conda");
  ASSERT_NE(py, nullptr);
  EXPECT_EQ(py->found_by, "conda env list");
  EXPECT_EQ(py->torch.cuda, "12.4");
  EXPECT_EQ(pkg(*py, "torch")->installer, "conda");
}

}  // namespace
}  // namespace cd

namespace cd {
namespace {

TEST(PythonProbe, CondarcEnvsDirsBlockAndFlowLists) {
  EXPECT_EQ(condarc_envs_dirs("channels:\n  - conda-forge\nenvs_dirs:\n  - ~/envs   # mine\n  - \"/data/conda envs\"\n"
                              "pkgs_dirs:\n  - /data/pkgs\n"),
            (std::vector<std::string>{"~/envs", "/data/conda envs"}));
  EXPECT_EQ(condarc_envs_dirs("envs_dirs:\n- /a\n- '/b'\nauto_activate_base: false\n"), (std::vector<std::string>{"/a", "/b"}));
  EXPECT_EQ(condarc_envs_dirs("envs_dirs: [/x, ~/y]\n"), (std::vector<std::string>{"/x", "~/y"}));
  EXPECT_TRUE(condarc_envs_dirs("pkgs_dirs:\n  - /data/pkgs\n").empty());
  EXPECT_TRUE(condarc_envs_dirs("\x01\xff: [\n-").empty());  // garbage is no list, not a crash
}

void make_env(const std::filesystem::path& prefix) {
  std::filesystem::create_directories(prefix / "bin");
  std::filesystem::create_directories(prefix / "lib/python3.12/site-packages");
  std::ofstream(prefix / "pyvenv.cfg") << "home = /usr/bin\nversion = 3.12.3\n";
  std::ofstream(prefix / "bin/python3") << "";
}

// Environments outside the usual places: conda envs_dirs (condarc and $CONDA_ENVS_PATH),
// pipx and uv tool envs, virtualenvwrapper's $WORKON_HOME, poetry's cache.
TEST(PythonProbe, FindsCondaEnvsDirsAndToolManagedEnvs) {
  auto root = std::filesystem::temp_directory_path() / ("cd_envs_root_" + std::to_string(::getpid()));
  std::filesystem::create_directories(root / "home/u");
  std::ofstream(root / "home/u/.condarc") << "envs_dirs:\n  - ~/conda-envs\n  - /data/envs\n";
  make_env(root / "home/u/conda-envs/train");
  make_env(root / "data/envs/serve");
  make_env(root / "scratch/envs/exp");
  make_env(root / "home/u/.local/share/pipx/venvs/nvitop");
  make_env(root / "home/u/.local/share/uv/tools/vllm");
  make_env(root / "home/u/wk/old");
  make_env(root / "home/u/.cache/pypoetry/virtualenvs/proj-AbC123-py3.12");
  Facts f;
  probe_pythons(f, options(root.string(), {{"HOME", "/home/u"}, {"CONDA_ENVS_PATH", "/scratch/envs"}, {"WORKON_HOME", "/home/u/wk"}}));
  std::filesystem::remove_all(root);
  auto by = [&](const char* prefix) {
    const PythonEnv* e = env_at(f, prefix);
    return e ? e->found_by : std::string("(not found)");
  };
  EXPECT_EQ(by("/home/u/conda-envs/train"), "conda envs_dirs");
  EXPECT_EQ(by("/data/envs/serve"), "conda envs_dirs");
  EXPECT_EQ(by("/scratch/envs/exp"), "conda envs_dirs");
  EXPECT_EQ(by("/home/u/.local/share/pipx/venvs/nvitop"), "pipx");
  EXPECT_EQ(by("/home/u/.local/share/uv/tools/vllm"), "uv tool");
  EXPECT_EQ(by("/home/u/wk/old"), "virtualenvwrapper");
  EXPECT_EQ(by("/home/u/.cache/pypoetry/virtualenvs/proj-AbC123-py3.12"), "poetry");
}

}  // namespace
}  // namespace cd
