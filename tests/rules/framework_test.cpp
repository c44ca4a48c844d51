// framework.* rules on hand-built facts: one test per finding id, plus the quiet H200 case.
#include <gtest/gtest.h>

#include "rules/rules.hpp"
#include "rules/run_rule.hpp"

namespace cd {
namespace {

const std::string kSite = "/opt/torch/.venv/lib/python3.12/site-packages";

PythonPackage pkg(const std::string& name, const std::string& version, std::vector<std::string> requires_dist = {}) {
  return {name, version, kSite, std::move(requires_dist), "pip"};
}

PythonEnv h200_env() {
  PythonEnv py;
  py.prefix = "/opt/torch/.venv";
  py.interpreter = "/opt/torch/.venv/bin/python3";
  py.kind = "venv";
  py.found_by = "PATH, /opt";
  py.is_default = true;
  py.site_packages = {kSite};
  py.torch = {"2.11.0+cu130", "13.0", "", "70d99e9", kSite + "/torch/version.py"};
  py.packages = {
      pkg("torch", "2.11.0+cu130",
          {"cuda-toolkit[cublas,cudart]==13.0.2; platform_system == \"Linux\"",
           "nvidia-cudnn-cu13==9.19.0.56; platform_system == \"Linux\"", "nvidia-nccl-cu13==2.28.9; platform_system == \"Linux\"",
           "nvidia-cufile==1.15.0; platform_system == \"Linux\" and platform_machine == \"aarch64\"", "triton==3.6.0"}),
      pkg("cuda-toolkit", "13.0.2",
          {"nvidia-cublas==13.1.0.3; extra == \"cublas\"", "nvidia-cuda-runtime==13.0.96; extra == \"cudart\"",
           "nvidia-cuda-nvcc==13.0.88; extra == \"nvcc\""}),
      pkg("nvidia-cublas", "13.1.0.3"), pkg("nvidia-cuda-runtime", "13.0.96"), pkg("nvidia-cudnn-cu13", "9.19.0.56"),
      pkg("nvidia-nccl-cu13", "2.28.9"), pkg("triton", "3.6.0"), pkg("torchvision", "0.26.0+cu130", {"torch==2.11.0"})};
  return py;
}

Facts h200() {
  Facts f;
  f.host.arch = "x86_64";
  f.driver.module_loaded = true;
  f.driver.cuda_driver_version = 13000;
  f.pythons = {h200_env()};
  return f;
}

Findings with_id(const Findings& all, const std::string& id) {
  Findings out;
  for (const auto& f : all)
    if (f.id == id) out.push_back(f);
  return out;
}

std::vector<PythonPackage>& packages(Facts& f) { return f.pythons[0].packages; }

void erase(Facts& f, const std::string& name) {
  auto& p = packages(f);
  p.erase(std::remove_if(p.begin(), p.end(), [&](const PythonPackage& x) { return x.name == name; }), p.end());
}

TEST(FrameworkRules, H200IsQuiet) {
  Findings all = cdtest::run_rule(cd::framework_rules, h200());
  EXPECT_TRUE(all.empty()) << all.front().id << ": " << all.front().title;
}

TEST(FrameworkRules, CpuBuildOnAGpuMachineIsAnErrorWithTheRightIndex) {
  Facts f = h200();
  f.driver.cuda_driver_version = 12080;  // a 570 driver: cu130 would not run, cu128 does
  f.pythons[0].torch = {"2.11.0+cpu", "", "", "x", kSite + "/torch/version.py"};
  packages(f) = {pkg("torch", "2.11.0+cpu"), pkg("torchvision", "0.26.0+cpu")};
  Findings found = with_id(cdtest::run_rule(cd::framework_rules, f), "framework.cpu_build");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].severity, Severity::error);
  EXPECT_EQ(found[0].fix[0],
            "/opt/torch/.venv/bin/python3 -m pip install --force-reinstall torch==2.11.0 torchvision==0.26.0 "
            "--index-url https://download.pytorch.org/whl/cu128");
  // Without any NVIDIA GPU or driver a CPU build is just noted.
  f.driver = {};
  found = with_id(cdtest::run_rule(cd::framework_rules, f), "framework.cpu_build");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].severity, Severity::info);
  EXPECT_TRUE(found[0].fix.empty());
}

TEST(FrameworkRules, CpuOnlyJaxAndOnnxruntimeNextToAGpu) {
  Facts f = h200();
  packages(f).push_back(pkg("jax", "0.11.2"));
  packages(f).push_back(pkg("jaxlib", "0.11.2"));
  packages(f).push_back(pkg("onnxruntime", "1.23.0"));
  Findings found = with_id(cdtest::run_rule(cd::framework_rules, f), "framework.cpu_build");
  ASSERT_EQ(found.size(), 2u);
  EXPECT_EQ(found[0].fix[0], "/opt/torch/.venv/bin/python3 -m pip install -U \"jax[cuda13]\"");
  EXPECT_EQ(found[1].fix[1], "/opt/torch/.venv/bin/python3 -m pip install onnxruntime-gpu");
  packages(f).push_back(pkg("jax-cuda13-plugin", "0.11.2"));  // the H200 has the plugin: jax uses the GPU
  EXPECT_EQ(with_id(cdtest::run_rule(cd::framework_rules, f), "framework.cpu_build").size(), 1u);
  f.driver = {};  // no GPU: nothing to say about CPU packages
  EXPECT_TRUE(with_id(cdtest::run_rule(cd::framework_rules, f), "framework.cpu_build").empty());
}

TEST(FrameworkRules, MissingNvidiaWheelThatTorchRequires) {
  Facts f = h200();
  erase(f, "nvidia-cudnn-cu13");
  Findings found = with_id(cdtest::run_rule(cd::framework_rules, f), "framework.pins_conflict");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].severity, Severity::error);
  EXPECT_NE(found[0].title.find("requires nvidia-cudnn-cu13==9.19.0.56, which is not installed"), std::string::npos)
      << found[0].title;
  EXPECT_EQ(found[0].fix[0], "/opt/torch/.venv/bin/python3 -m pip install \"nvidia-cudnn-cu13==9.19.0.56\"");
}

TEST(FrameworkRules, WrongNvidiaWheelVersionThroughCudaToolkitExtras) {
  Facts f = h200();
  for (auto& p : packages(f))
    if (p.name == "nvidia-cublas") p.version = "13.0.0.19";
  Findings found = with_id(cdtest::run_rule(cd::framework_rules, f), "framework.pins_conflict");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].severity, Severity::warning);
  EXPECT_NE(found[0].title.find("cuda-toolkit 13.0.2 requires nvidia-cublas==13.1.0.3, installed 13.0.0.19"),
            std::string::npos)
      << found[0].title;
}

TEST(FrameworkRules, PackagesPinnedToAnotherTorch) {
  Facts f = h200();
  packages(f).push_back(pkg("vllm", "0.32.0", {"torch==2.13.0", "xformers; extra == \"x\""}));
  packages(f).push_back(pkg("xformers", "0.0.35"));                      // kb: built for 2.10.0
  packages(f).push_back(pkg("flash-attn", "2.8.3+cu12torch2.10cxx11abiTRUE"));  // local tag: torch 2.10
  packages(f).push_back(pkg("torchaudio", "2.11.0+cu128"));              // other CUDA variant
  Findings found = with_id(cdtest::run_rule(cd::framework_rules, f), "framework.pins_conflict");
  ASSERT_EQ(found.size(), 4u);
  std::string titles;
  for (const auto& fi : found) {
    EXPECT_EQ(fi.severity, Severity::error) << fi.title;
    titles += fi.title + "\n";
  }
  EXPECT_NE(titles.find("vllm 0.32.0 requires torch==2.13.0, installed 2.11.0+cu130"), std::string::npos) << titles;
  EXPECT_NE(titles.find("xformers 0.0.35 is built for torch ==2.10.0"), std::string::npos) << titles;
  EXPECT_NE(titles.find("flash-attn 2.8.3+cu12torch2.10cxx11abiTRUE was built for torch 2.10"), std::string::npos) << titles;
  EXPECT_NE(titles.find("torchaudio 2.11.0+cu128 and torch 2.11.0+cu130 are built for different CUDA versions"),
            std::string::npos)
      << titles;
}

TEST(FrameworkRules, PinOnlyInAnExtraFallsBackToKb) {
  Facts f = h200();
  packages(f).push_back(pkg("sglang", "0.5.1.post3", {"torch==2.8.0; extra == \"srt\""}));
  Findings found = with_id(cdtest::run_rule(cd::framework_rules, f), "framework.pins_conflict");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_NE(found[0].title.find("sglang 0.5.1.post3 is built for torch ==2.8.0"), std::string::npos) << found[0].title;
}

TEST(FrameworkRules, CompanionFromAnotherReleaseViaKb) {
  Facts f = h200();
  erase(f, "torchvision");
  packages(f).push_back(pkg("torchvision", "0.25.0"));  // no metadata pin recorded: kb says 2.11 ↔ 0.26
  Findings found = with_id(cdtest::run_rule(cd::framework_rules, f), "framework.pins_conflict");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_NE(found[0].title.find("expects torchvision 0.26.x"), std::string::npos) << found[0].title;
}

TEST(FrameworkRules, WrongEnvironment) {
  Facts f = h200();
  f.pythons[0].is_default = false;
  PythonEnv sys;
  sys.prefix = "/usr";
  sys.interpreter = "/usr/bin/python3";
  sys.kind = "system";
  sys.is_default = true;
  f.pythons.push_back(sys);
  Findings found = with_id(cdtest::run_rule(cd::framework_rules, f), "framework.wrong_environment");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].fix[0], "source /opt/torch/.venv/bin/activate");
  // An activated env that PATH does not run.
  f.pythons[0].found_by = "VIRTUAL_ENV, /opt";
  found = with_id(cdtest::run_rule(cd::framework_rules, f), "framework.wrong_environment");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_NE(found[0].title.find("activated environment /opt/torch/.venv"), std::string::npos);
  // A venv with torch on top of an activated conda base is normal.
  f.pythons[1].torch.version = "2.11.0+cu130";
  EXPECT_TRUE(with_id(cdtest::run_rule(cd::framework_rules, f), "framework.wrong_environment").empty());
}

TEST(FrameworkRules, ImportFailedFromDeep) {
  Facts f = h200();
  f.pythons[0].deep.ran = true;
  f.pythons[0].deep.error = "ImportError: libcudnn.so.9: cannot open shared object file: No such file or directory";
  Findings found = with_id(cdtest::run_rule(cd::framework_rules, f), "framework.import_failed");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].severity, Severity::error);
  EXPECT_EQ(found[0].evidence[0].fact, f.pythons[0].deep.error);
  f.pythons[0].deep.error.clear();
  EXPECT_TRUE(with_id(cdtest::run_rule(cd::framework_rules, f), "framework.import_failed").empty());
}

TEST(FrameworkRules, JaxFallingBackToTheCpuOrFailingToImport) {
  Facts f = h200();
  PythonEnv& py = f.pythons[0];
  py.deep_jax.ran = true;
  py.deep_jax.version = "0.11.2";
  py.deep_jax.backend = "gpu";
  py.deep_jax.devices = {"NVIDIA H200"};
  EXPECT_TRUE(with_id(cdtest::run_rule(cd::framework_rules, f), "framework.import_failed").empty());
  py.deep_jax.backend = "cpu";
  py.deep_jax.error = "Unable to initialize backend 'cuda': FAILED_PRECONDITION: No visible GPU devices.";
  Findings found = with_id(cdtest::run_rule(cd::framework_rules, f), "framework.import_failed");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_NE(found[0].title.find("runs on the CPU"), std::string::npos) << found[0].title;
  EXPECT_EQ(found[0].evidence[0].fact, "jax.default_backend() = cpu");
  EXPECT_EQ(found[0].evidence[1].fact, py.deep_jax.error);
  f.env["JAX_PLATFORMS"] = "cpu";  // asked for: not a failure
  EXPECT_TRUE(with_id(cdtest::run_rule(cd::framework_rules, f), "framework.import_failed").empty());
  f.env.erase("JAX_PLATFORMS");
  f.env["CUDA_VISIBLE_DEVICES"] = "";  // every GPU hidden: device.not_visible is the cause, not JAX
  f.driver.cu_init_status = 100;
  EXPECT_TRUE(with_id(cdtest::run_rule(cd::framework_rules, f), "framework.import_failed").empty());
  f.driver.cu_init_status = 0;
  f.driver.cuda_device_count = 0;
  EXPECT_TRUE(with_id(cdtest::run_rule(cd::framework_rules, f), "framework.import_failed").empty());
  f.driver.cuda_device_count = 1;
  f.env.erase("CUDA_VISIBLE_DEVICES");
  EXPECT_EQ(with_id(cdtest::run_rule(cd::framework_rules, f), "framework.import_failed").size(), 1u);
  py.deep_jax = {};
  py.deep_jax.ran = true;
  py.deep_jax.error = "ImportError: libcudnn.so.9: cannot open shared object file";
  found = with_id(cdtest::run_rule(cd::framework_rules, f), "framework.import_failed");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_NE(found[0].title.find("importing jax"), std::string::npos);
}

}  // namespace
}  // namespace cd
