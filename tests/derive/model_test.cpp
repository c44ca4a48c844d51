// derive(): each derived value from recorded and hand-built facts.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "derive/derive_parts.hpp"
#include "derive/judge_targets.hpp"
#include "derive/model.hpp"
#include "util/errors.hpp"

namespace cd {
namespace {

Facts h200() {
  std::ifstream in(std::string(CD_FIXTURES) + "/h200/facts.json");
  std::stringstream text;
  text << in.rdbuf();
  return facts_from_json_text(text.str(), "h200/facts.json");
}

// One container with one PTX image: compute_90 of PTX ISA `major.minor`.
BinaryScan ptx_only(int major, int minor) {
  BinaryScan b;
  b.path = "/opt/app/libk.so";
  b.containers = 1;
  KernelImage img;
  img.kind = "ptx", img.arch = 90, img.ptx_major = major, img.ptx_minor = minor, img.compression = "none", img.count = 1;
  b.images = {img};
  b.groups = {ContainerGroup{1, {0}, {}}};
  return b;
}

Facts one_gpu(int cc_major, int cc_minor) {
  Facts f;
  GpuInfo g;
  g.name = "NVIDIA H200", g.cc_major = cc_major, g.cc_minor = cc_minor, g.nvml_index = 0, g.cuda_index = 0;
  f.driver.gpus = {g};
  f.driver.module_loaded = true;
  return f;
}

TEST(Derive, H200RecordedFacts) {
  Facts f = h200();
  Model m = derive(f, Kb::get());
  EXPECT_TRUE(m.driver.found);
  EXPECT_EQ(m.driver.version.text, "580.159.04");
  EXPECT_EQ(m.driver.version_source, "NVML");
  EXPECT_EQ(m.driver.cuda.major_minor(), "13.0");
  EXPECT_EQ(m.driver.cuda_source, "cuDriverGetVersion");
  ASSERT_EQ(m.gpus.size(), 1u);
  EXPECT_EQ(m.gpus[0].sm, 90);
  EXPECT_EQ(m.gpus[0].index, 0);
  EXPECT_EQ(m.gpus[0].label, "sm_90 (NVIDIA H200)");
  ASSERT_EQ(m.targets.size(), 1u);
  EXPECT_EQ(m.driver_target.cuda, 13000);
  EXPECT_EQ(m.driver_target.version, "580.159.04");
  ASSERT_EQ(m.verdicts.size(), f.binaries.size());
  for (const auto& row : m.verdicts) EXPECT_EQ(row.size(), 1u);
  const EnvModel* torch_env = nullptr;
  for (const auto& e : m.envs)
    if (e.env->prefix == "/opt/torch/.venv") torch_env = &e;
  ASSERT_NE(torch_env, nullptr);
  EXPECT_EQ(torch_env->python, "/opt/torch/.venv/bin/python3");
  EXPECT_EQ(torch_env->torch_variant, "cu130");
  EXPECT_EQ(torch_env->torch_arch_list, (std::vector<std::string>{"sm_75", "sm_80", "sm_86", "sm_90", "sm_100", "sm_120"}));
  EXPECT_EQ(torch_env->torch_arch_list_source.rfind("recorded list for torch 2.11 cu130 wheels (kb", 0), 0u);
  EXPECT_FALSE(torch_env->resolutions.empty());
  EXPECT_EQ(m.env_for_path(torch_env->env->site_packages.front() + "/torch/lib/libtorch_cuda.so"), torch_env);
}

// cuInit failed but NVML answered: the driver's CUDA is still known, and PTX newer than it
// is judged too new (it was judged "jit" when only cuDriverGetVersion counted).
TEST(Derive, DriverCudaFromNvmlWhenCuInitFails) {
  Facts f = one_gpu(9, 0);
  f.driver.nvml_driver_version = "580.159.04";
  f.driver.nvml_cuda_driver_version = 13000;
  f.driver.cu_init_status = 999;
  f.binaries = {ptx_only(9, 1)};
  Model m = derive(f, Kb::get());
  EXPECT_EQ(m.driver.cuda.major_minor(), "13.0");
  EXPECT_EQ(m.driver.cuda_source, "nvmlSystemGetCudaDriverVersion");
  ASSERT_EQ(m.verdicts.at(0).size(), 1u);
  EXPECT_EQ(m.verdicts[0][0].verdict, Verdict::ptx_too_new);
  f.binaries = {ptx_only(9, 0)};
  EXPECT_EQ(derive(f, Kb::get()).verdicts[0][0].verdict, Verdict::jit);
}

// Nothing from the driver itself: the kernel module's version and the kb's branch table.
TEST(Derive, DriverFromKernelModuleAndBranchTable) {
  Facts f;
  f.driver.module_loaded = true;
  f.driver.module_version = "550.54.14";
  f.driver.module_version_source = "/proc/driver/nvidia/version";
  DriverModel d = derive(f, Kb::get()).driver;
  EXPECT_EQ(d.version.text, "550.54.14");
  EXPECT_EQ(d.version_source, "/proc/driver/nvidia/version");
  EXPECT_EQ(d.cuda.major_minor(), "12.4");
  EXPECT_EQ(d.cuda_source.rfind("knowledge base: driver branch 550", 0), 0u);
  Facts none;
  EXPECT_FALSE(derive(none, Kb::get()).driver.found);
}

// Verdicts stored in an old facts file are not read: a newer knowledge base (here: the
// binary judged fresh) decides, so the layer-3 table and the arch findings agree.
TEST(Derive, StoredVerdictsInOldFactsAreIgnored) {
  Facts f = one_gpu(9, 0);
  f.driver.cuda_driver_version = 13000;
  f.binaries = {ptx_only(9, 1)};
  nlohmann::json j = f;
  j["binaries"][0]["verdicts"] = nlohmann::json::array({{{"sm", 90}, {"verdict", "native"}}});
  Facts replayed = facts_from_json_text(j.dump(), "old.json");
  Model m = derive(replayed, Kb::get());
  EXPECT_EQ(m.verdicts[0][0].verdict, Verdict::ptx_too_new);
  // check --json still writes them, from the model.
  nlohmann::json out = facts_json(m);
  EXPECT_EQ(out["binaries"][0]["verdicts"][0]["verdict"], "ptx_too_new");
  EXPECT_EQ(out["binaries"][0]["verdicts"][0]["gpu"], "sm_90 (NVIDIA H200)");
}

TEST(Derive, TwoGpusOfOneArchitectureAreOneTarget) {
  Facts f = one_gpu(9, 0);
  GpuInfo second = f.driver.gpus[0];
  second.cuda_index = -1, second.nvml_index = 1;
  f.driver.gpus.push_back(second);
  Model m = derive(f, Kb::get());
  ASSERT_EQ(m.gpus.size(), 2u);
  EXPECT_EQ(m.gpus[1].index, 1);  // CUDA did not number it: NVML's number
  EXPECT_EQ(m.targets.size(), 1u);
}

TEST(Derive, ContainerWithoutGpus) {
  Facts f;
  f.platform.container = "docker";
  f.driver.module_loaded = true;
  PlatformModel p = derive(f, Kb::get()).platform;
  EXPECT_TRUE(p.container_without_gpus);
  EXPECT_FALSE(p.gpu_device_nodes);
  f.driver.device_nodes = {"/dev/nvidiactl", "/dev/nvidia0"};
  p = derive(f, Kb::get()).platform;
  EXPECT_TRUE(p.gpu_device_nodes);
  EXPECT_FALSE(p.container_without_gpus);
  // A host without NVIDIA hardware (PCI bus read, none there, no module) is not "a container without GPUs".
  Facts cpu;
  cpu.platform.container = "docker";
  cpu.driver.pci_devices_seen = 12;
  EXPECT_FALSE(derive(cpu, Kb::get()).platform.container_without_gpus);
  EXPECT_FALSE(derive(cpu, Kb::get()).platform.machine_has_gpu);
}

TEST(Derive, CudaSeesNoGpu) {
  Facts f;
  f.driver.cu_init_status = 100;
  EXPECT_TRUE(derive(f, Kb::get()).platform.cuda_sees_no_gpu);
  f.driver.cu_init_status = 0, f.driver.cuda_device_count = 0;
  EXPECT_TRUE(derive(f, Kb::get()).platform.cuda_sees_no_gpu);
  f.driver.cuda_device_count = 1;
  EXPECT_FALSE(derive(f, Kb::get()).platform.cuda_sees_no_gpu);
}

TEST(Derive, TorchArchListDeepThenKbNeverForCondaOrCpu) {
  PythonEnv env;
  env.torch.version = "2.11.0+cu130";
  env.torch.cuda = "13.0";
  env.packages = {PythonPackage{"torch", "2.11.0+cu130", "", {}, "pip"}};
  ArchList kb_list = torch_arch_list(env, Kb::get());
  EXPECT_EQ(kb_list.archs.front(), "sm_75");
  env.deep.ran = true;
  env.deep.arch_list = {"sm_90", "sm_100"};
  ArchList deep = torch_arch_list(env, Kb::get());
  EXPECT_EQ(deep.archs, (std::vector<std::string>{"sm_90", "sm_100"}));
  EXPECT_EQ(deep.source, "deep: torch._C._cuda_getArchFlags()");
  env.deep = {};
  env.packages[0].installer = "conda";
  EXPECT_TRUE(torch_arch_list(env, Kb::get()).archs.empty());
  env.packages[0].installer = "pip";
  env.torch.cuda.clear();  // a CPU build
  EXPECT_TRUE(torch_arch_list(env, Kb::get()).archs.empty());
}

TEST(Derive, TorchVariantForDriverAndGpu) {
  const Kb& kb = Kb::get();
  Version cuda129 = *Version::parse("12.9");
  EXPECT_EQ(torch_variant_for(kb, "2.11.0+cu130", cuda129).variant, "cu129");
  // No variant at or below CUDA 12.5: the oldest of its major runs through minor-version compatibility.
  TorchPick compat = torch_variant_for(kb, "2.11.0+cu130", *Version::parse("12.5"));
  EXPECT_EQ(compat.variant, "cu126");
  EXPECT_TRUE(compat.minor_compat);
  // An RTX 5090 (sm_120) needs the cu128 wheel of torch 2.7, whatever newer driver runs it.
  EXPECT_EQ(torch_variant_for(kb, "2.7.0+cu126", *Version::parse("13.0"), 120).variant, "cu128");
  EXPECT_EQ(torch_variant_for(kb, "2.7.0+cu126", cuda129, 90).variant, "cu128");
  EXPECT_EQ(torch_variant_for(kb, "0.1.0", cuda129).variant, "");
}

TEST(Derive, PythonCommand) {
  EXPECT_EQ(python_cmd(nullptr), "python3");
  PythonEnv env;
  env.prefix = "/opt/venv";
  EXPECT_EQ(python_cmd(&env), "/opt/venv/bin/python");
  env.interpreter = "/opt/venv/bin/python3.12";
  EXPECT_EQ(python_cmd(&env), "/opt/venv/bin/python3.12");
}

TEST(Derive, JudgeTargetsFromFlags) {
  JudgeTargets t;
  t.gpus = {{89, "RTX 4090"}};
  t.driver = {12040, "550.54"};
  Facts base = one_gpu(9, 0);
  base.env["TORCH_CUDA_ARCH_LIST"] = "9.0";
  Facts f = facts_for_judging(base, t, {ptx_only(9, 0)});
  Model m = derive(f, Kb::get());
  ASSERT_EQ(m.targets.size(), 1u);
  EXPECT_EQ(m.targets[0].sm, 89);
  EXPECT_EQ(m.driver_target.cuda, 12040);
  EXPECT_EQ(m.driver_target.version, "550.54");
  EXPECT_TRUE(f.env.empty());
  EXPECT_EQ(m.verdicts[0][0].verdict, Verdict::no_kernel_image);  // compute_90 PTX cannot serve sm_89
}

// --gpu / --driver as the user types them, and this machine filling what they leave open.
TEST(Derive, ScanTargetsFromFlagsThenThisMachine) {
  const Kb& kb = Kb::get();
  JudgeTargets t = targets_from_flags({"H100", "sm_80"}, "", kb);
  ASSERT_EQ(t.gpus.size(), 2u);
  EXPECT_EQ(t.gpus[0].sm, 90);
  EXPECT_EQ(t.gpus[1].sm, 80);
  EXPECT_EQ(t.gpu_source, "--gpu");
  EXPECT_FALSE(needs_this_machine(t));
  EXPECT_EQ(targets_from_flags({}, "12.4", kb).driver.cuda, 12040);
  EXPECT_EQ(targets_from_flags({}, "12040", kb).driver.cuda, 12040);
  JudgeTargets d = targets_from_flags({}, "580.65.06", kb);
  EXPECT_EQ(d.driver.version, "580.65.06");
  EXPECT_EQ(d.driver.cuda, 13000);  // CUDA 13.0 GA's minimum (data/cuda_drivers.toml)
  EXPECT_THROW(targets_from_flags({"H10"}, "", kb), UsageError);
  EXPECT_THROW(targets_from_flags({}, "x.y", kb), UsageError);

  Facts machine_facts = one_gpu(9, 0);
  machine_facts.driver.nvml_driver_version = "580.65.06";
  Model machine = derive(machine_facts, kb);
  JudgeTargets none;  // no flag: GPUs and driver from this machine
  ASSERT_TRUE(needs_this_machine(none));
  add_this_machine(none, machine);
  EXPECT_EQ(none.gpu_source, "this machine");
  EXPECT_EQ(none.driver.version, "580.65.06");
  EXPECT_EQ(none.driver_source, "this machine");
  // --driver alone: this machine's GPUs, the driver asked about.
  JudgeTargets drv = targets_from_flags({}, "550.54", kb);
  add_this_machine(drv, machine);
  EXPECT_EQ(drv.gpus.size(), 1u);
  EXPECT_EQ(drv.driver.version, "550.54");
  EXPECT_EQ(drv.driver_source, "--driver");
}

// The libraries check shows per environment: the `main` families of data/libraries.toml,
// by their main soname, with the version of the file loaded and how the loader found it.
TEST(Derive, MainLibrariesOfTheRecordedTorchEnvironment) {
  Facts f = h200();
  Model m = derive(f, Kb::get());
  const EnvModel* torch = nullptr;
  for (const auto& e : m.envs)
    if (e.env->prefix == "/opt/torch/.venv") torch = &e;
  ASSERT_NE(torch, nullptr);
  std::vector<std::string> sonames;
  for (const auto& lib : torch->main_libraries) sonames.push_back(lib.soname);
  // Resolution order; no cuDNN sub-library, no cuBLASLt, no cuFFT (not `main`).
  EXPECT_EQ(sonames, (std::vector<std::string>{"libcudart.so.13", "libcudnn.so.9", "libnccl.so.2", "libcublas.so.13"}));
  for (const auto& lib : torch->main_libraries) {
    EXPECT_TRUE(lib.found) << lib.soname;
    EXPECT_EQ(lib.via, "RPATH") << lib.soname;
    EXPECT_NE(lib.realpath.find("/opt/torch/.venv/"), std::string::npos) << lib.realpath;
    EXPECT_EQ(lib.resolution->soname, lib.soname);
  }
  EXPECT_EQ(torch->main_libraries[1].family, "cudnn");
  EXPECT_FALSE(torch->main_libraries[1].version.empty());
  // A library the loader cannot find is listed, without a file or version.
  LibraryResolution missing = *torch->main_libraries[2].resolution;
  missing.path.clear(), missing.realpath.clear(), missing.via = "not found";
  f.libs.resolutions = {missing};
  Model m2 = derive(f, Kb::get());
  for (const auto& e : m2.envs)
    if (e.env->prefix == "/opt/torch/.venv") {
      ASSERT_EQ(e.main_libraries.size(), 1u);
      EXPECT_FALSE(e.main_libraries[0].found);
      EXPECT_TRUE(e.main_libraries[0].version.empty());
      EXPECT_EQ(e.main_libraries[0].via, "not found");
    }
}

// --deep's JAX run: which state it is in, so the report and the framework rule agree and
// neither reads JAX's message to find out.
TEST(Derive, JaxStates) {
  auto state = [](Facts f, DeepJax j, const char* platforms = nullptr) {
    PythonEnv py;
    py.prefix = "/opt/env";
    py.deep_jax = std::move(j);
    py.deep_jax.ran = true;
    f.pythons = {py};
    if (platforms) f.env["JAX_PLATFORMS"] = platforms;
    Facts kept = f;  // the model refers to its facts
    return derive(kept, Kb::get()).envs.at(0).jax;
  };
  const std::string guess = "An NVIDIA GPU may be present on this machine, but a CUDA-enabled jaxlib is not installed.";
  Facts gpu_machine = one_gpu(9, 0);
  JaxModel fallback = state(gpu_machine, DeepJax{true, guess, "0.11.2", "cpu", {"cpu"}, 1});
  EXPECT_EQ(fallback.state, JaxState::cpu_fallback);
  EXPECT_TRUE(fallback.failed());
  EXPECT_TRUE(fallback.message_is_jax_guess);
  EXPECT_EQ(fallback.message, guess);
  EXPECT_EQ(fallback.backend, "cpu");
  EXPECT_STREQ(jax_state_name(fallback.state), "cpu_fallback");
  EXPECT_EQ(state(gpu_machine, DeepJax{true, guess, "0.11.2", "cpu", {"cpu"}, 1}, "cpu").state, JaxState::cpu_asked);
  EXPECT_EQ(state(gpu_machine, DeepJax{true, "", "0.11.2", "cpu", {"cpu"}, 1}, "cuda,cpu").state, JaxState::cpu_fallback);
  Facts hidden = gpu_machine;
  hidden.driver.cu_init_status = 100;  // CUDA_VISIBLE_DEVICES hides the GPU: device.not_visible explains it
  EXPECT_EQ(state(hidden, DeepJax{true, guess, "0.11.2", "cpu", {"cpu"}, 1}).state, JaxState::cpu_no_gpu);
  EXPECT_EQ(state(Facts{}, DeepJax{true, guess, "0.11.2", "cpu", {"cpu"}, 1}).state, JaxState::cpu_no_gpu);
  JaxModel on_gpu = state(gpu_machine, DeepJax{true, "", "0.11.2", "gpu", {"NVIDIA H200"}, 1});
  EXPECT_EQ(on_gpu.state, JaxState::gpu);
  EXPECT_FALSE(on_gpu.failed());
  JaxModel import = state(gpu_machine, DeepJax{true, "ModuleNotFoundError: No module named 'jax'", "", "", {}, 1});
  EXPECT_EQ(import.state, JaxState::import_failed);
  EXPECT_TRUE(import.failed());
  EXPECT_FALSE(import.message_is_jax_guess);
  EXPECT_EQ(state(gpu_machine, DeepJax{true, "", "", "", {}, 1}).state, JaxState::no_answer);
  Facts none = gpu_machine;
  none.pythons = {PythonEnv{}};
  EXPECT_EQ(derive(none, Kb::get()).envs.at(0).jax.state, JaxState::not_run);
}

// The verify rule and the verify/bench tables read one judgement per measurement.
TEST(Derive, MeasurementBelowItsThresholdOnlyWhenJudged) {
  Facts f;
  f.verify.ran = true;
  f.verify.measurements = {Measurement{"dtod_memcpy", "GPU 0", 2000, "GB/s", 4000, "kb", "", 2800},
                           Measurement{"dtod_copy_kernel", "GPU 0", 3900, "GB/s", 4000, "kb", "", 2800},
                           Measurement{"nccl_allreduce", "2 GPUs", 10, "GB/s", 400, "kb", "", 0},  // shown, not judged
                           Measurement{"htod_pinned", "GPU 0", 50, "GB/s", 0, "", "", 0}};
  Model m = derive(f, Kb::get());
  ASSERT_EQ(m.measurements.size(), 4u);
  EXPECT_EQ(m.measurements[0].measurement, &f.verify.measurements[0]);
  EXPECT_TRUE(m.measurements[0].below_expected);
  EXPECT_DOUBLE_EQ(m.measurements[0].percent, 50);
  EXPECT_FALSE(m.measurements[1].below_expected);
  EXPECT_FALSE(m.measurements[2].below_expected);
  EXPECT_DOUBLE_EQ(m.measurements[2].percent, 2.5);
  EXPECT_FALSE(m.measurements[3].below_expected);
  EXPECT_DOUBLE_EQ(m.measurements[3].percent, 0);
}

}  // namespace
}  // namespace cd
