// plan: a table of machines with hand-checked expected plans. Each row states what the
// machine is (the flags a user would pass), what the plan must do with the driver and which
// torch build it must pick, and where the expectation comes from. The expectations were worked
// out by hand from the public tables, not by running the code:
//   [T3]  CUDA Toolkit release notes, Table 3 (driver per CUDA release) — data/cuda_drivers.toml
//   [MC]  CUDA Compatibility guide / release notes Table 2: minor-version compatibility floors
//         (11.x >= 450.80.02, 12.x >= 525.60.13, 13.x >= 580); no JIT of newer PTX under it
//   [RM]  pytorch/pytorch RELEASE.md: release compatibility matrix (variants, Python) and the
//         CUDA support matrix (arch lists; 2.12-2.14 cu126 5.0-9.0, cu130/cu132 7.5-12.0+PTX,
//         aarch64 cu13x 8.0;9.0;10.0;11.0;12.0+PTX)
//   [BC]  pytorch/pytorch .ci/manywheel/build_cuda.sh (arch lists of 2.8-2.11), pytorch#172598
//         (Volta dropped from cu128/cu129 in 2.11), pytorch/builder (cu118 lists with 3.7)
//   [CC]  NVIDIA CUDA GPU Compute Capability pages; CUDA Programming Guide, binary compatibility
//         (sm_XY SASS runs on sm_XZ, Z >= Y)
//   [DS]  NVIDIA Unix graphics feature deprecation schedule (R470 last for Kepler, R580 last for
//         Maxwell/Pascal/Volta); open-gpu-kernel-modules README (open modules: Turing+)
//   [WSL] NVIDIA CUDA on WSL user guide; [JP] NVIDIA "Installing PyTorch for Jetson Platform"
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "derive/plan.hpp"
#include "derive/plan_request.hpp"
#include "util/errors.hpp"

namespace cd {
namespace {

struct Case {
  const char* name;
  std::vector<std::string> gpus;
  const char* driver;  // --driver
  const char* os = "";
  const char* arch = "";
  const char* python = "";
  const char* framework = "";
  // Expected:
  const char* driver_step;  // "ok" keep the driver, "do" install/upgrade, "info" (Jetson)
  int branch;               // the branch to install; 0 = keep
  const char* release;      // "" = none fits
  const char* variant;
  const char* runs;         // "direct", "minor-version compatibility", "" when none
  const char* why;          // the hand check, with its sources
};

const std::vector<Case> kCases = {
    {"H100 no driver", {"H100"}, "none", "", "", "", "", "do", 580, "2.14", "cu130", "direct",
     "R580 is the default branch (CUDA 13.0, >= 580.65.06 [T3]); 2.14 cu130 lists sm_90 [RM]; cu130 runs directly, cu132 only through [MC]"},
    {"H200 driver 580.159.04", {"H200"}, "580.159.04", "", "", "", "", "ok", 0, "2.14", "cu130", "direct",
     "580 reports CUDA 13.0 (measured on the H200 machine); 2.14 cu130 has sm_90 [RM]"},
    {"RTX 5090 on driver 550", {"RTX 5090"}, "550.54.14", "", "", "", "", "do", 580, "2.14", "cu130", "direct",
     "sm_120 needs CUDA 12.8 (>= 570.26 [T3]); 550 is CUDA 12.4 [T3], so the driver must go; then as with no driver"},
    {"RTX 5090 on driver 570 (CUDA 12.8)", {"RTX 5090"}, "570.124.06", "", "", "", "", "ok", 0, "2.11", "cu128", "direct",
     "2.12-2.14 have cu126 (no sm_120) and cu13x (major 13 > 12) [RM]; 2.11 cu128 has sm_120 [BC] and 12.8 <= 12.8"},
    {"GTX 1080 on driver 580", {"GTX 1080"}, "580.95.05", "", "", "", "", "ok", 0, "2.14", "cu126", "direct",
     "cu130 has no sm_6x; 2.14 cu126 has sm_60, whose SASS runs on sm_61 [RM][CC] (what uv's --torch-backend=auto gets wrong)"},
    {"GTX 1080 no driver", {"GTX 1080"}, "none", "", "", "", "", "do", 580, "2.14", "cu126", "direct",
     "R580 is the last branch for Pascal [DS]; cu126 has sm_60 [RM]"},
    {"GTX 1080 on driver 590", {"GTX 1080"}, "590.44.01", "", "", "", "", "do", 580, "2.14", "cu126", "direct",
     "590 no longer drives Pascal [DS]: back to R580"},
    {"V100 on driver 535 (12.2)", {"V100"}, "535.104.05", "", "", "", "", "ok", 0, "2.14", "cu126", "minor-version compatibility",
     "2.14 cu126 has sm_70 [RM]; 12.6 > 12.2 but 535.104.05 >= 525.60.13 [MC]"},
    {"K80 on driver 470", {"K80"}, "470.82.01", "", "", "", "", "ok", 0, "2.7", "cu118", "minor-version compatibility",
     "only cu118 lists carry sm_37, the newest in 2.7 [BC]; 470 is CUDA 11.4, 11.8 runs by 470.82.01 >= 450.80.02 [MC]"},
    {"T4 on driver 535", {"T4"}, "535.104.05", "", "", "", "", "ok", 0, "2.14", "cu126", "minor-version compatibility",
     "2.14 cu126 has sm_75 [RM]; 12.x floor 525.60.13 [MC]"},
    {"T4 on driver 525.60.13 (the 12.x floor exactly)", {"T4"}, "525.60.13", "", "", "", "", "ok", 0, "2.14", "cu126",
     "minor-version compatibility", "12.x minor-version floor is 525.60.13 itself [MC]"},
    {"T4 on driver 520 (CUDA 11.8)", {"T4"}, "520.61.05", "", "", "", "", "ok", 0, "2.7", "cu118", "direct",
     "520.61.05 is CUDA 11.8 [T3]; 2.8+ have no cu118 and cu12x need a 12.x driver [RM]; 2.7 cu118 has sm_75 [BC]"},
    {"A100 on driver 450.80.02 (the 11.x floor exactly)", {"A100"}, "450.80.02", "", "", "", "", "ok", 0, "2.7", "cu118",
     "minor-version compatibility", "11.x floor 450.80.02 [MC]; 2.7 cu118 has sm_80 [BC]"},
    {"A100 on driver 450.51.06 (below the 11.x floor)", {"A100"}, "450.51.06", "", "", "", "", "do", 580, "2.14", "cu130", "direct",
     "450.51.06 < 450.80.02 [MC] and no wheel is CUDA <= 11.0 with a recorded list: nothing runs, so the driver goes"},
    {"RTX 4090 + RTX 3090 on driver 560", {"RTX 4090", "RTX 3090"}, "560.35.03", "", "", "", "", "ok", 0, "2.14", "cu126", "direct",
     "560.35.03 is CUDA 12.6 [T3]; cu126 has sm_86, which runs on sm_89 [CC][RM]"},
    {"GTX 1080 + RTX 4090 on driver 580", {"GTX 1080", "RTX 4090"}, "580.65.06", "", "", "", "", "ok", 0, "2.14", "cu126", "direct",
     "mixed: cu130 has no sm_61, so the Pascal card decides [RM]"},
    {"WSL2 RTX 4090 on Windows driver 566.36", {"RTX 4090"}, "566.36", "wsl", "", "", "", "ok", 0, "2.14", "cu126", "direct",
     "Windows 566.36 >= 561.17 (12.6 Update 3, Table 3 Windows column) [T3]; the driver is Windows' [WSL]"},
    {"WSL2 without a driver", {"RTX 4090"}, "none", "wsl", "", "", "", "do", 580, "2.14", "cu130", "direct",
     "install the Windows driver, never a Linux one inside WSL [WSL]; no apt command"},
    {"Windows RTX 3060 on 572.61", {"RTX 3060"}, "572.61", "windows", "", "", "", "ok", 0, "2.14", "cu126", "direct",
     "572.61 is 12.8 Update 1's Windows driver [T3]; cu130 is major 13 [RM]"},
    {"Jetson AGX Orin", {"Jetson AGX Orin"}, "none", "", "aarch64", "", "", "info", 0, "", "", "",
     "the driver is JetPack's and download.pytorch.org has no Jetson build [JP]"},
    {"B200 no driver", {"B200"}, "none", "", "", "", "", "do", 580, "2.14", "cu130", "direct", "cu130 lists sm_100 [RM]"},
    {"B200 on driver 570.26 (CUDA 12.8)", {"B200"}, "570.26", "", "", "", "", "ok", 0, "2.11", "cu128", "direct",
     "2.12+ have no 12.x wheel with sm_100 [RM]; 2.11 cu128 has sm_100 [BC]"},
    {"GB10 (aarch64) no driver", {"GB10"}, "none", "", "aarch64", "", "", "do", 580, "2.14", "cu130", "direct",
     "sm_121 needs CUDA 12.9 (R580 = 13.0 is enough) [T3]; aarch64 cu130 has sm_120, which runs on sm_121 [RM][CC]"},
    {"GH200 (aarch64) on driver 580.65.06", {"GH200"}, "580.65.06", "", "aarch64", "", "", "ok", 0, "2.14", "cu130", "direct",
     "aarch64 cu130 list 8.0;9.0;10.0;11.0;12.0+PTX [RM]"},
    {"H100 aarch64 on driver 570 (no 12.x aarch64 list recorded)", {"H100"}, "570.124.06", "", "aarch64", "", "", "do", 580, "2.14",
     "cu130", "direct", "no aarch64 arch list of a 12.x wheel is recorded: the plan says so and moves to R580 + cu130 [RM]"},
    {"torch==2.5 on RTX 5090", {"RTX 5090"}, "580.65.06", "", "", "", "torch==2.5", "ok", 0, "", "", "",
     "2.5's cu118/cu121/cu124 lists stop at sm_90 without PTX [BC]: no 2.5 build runs on sm_120"},
    {"torch==2.11 on H200", {"H200"}, "580.159.04", "", "", "", "torch==2.11", "ok", 0, "2.11", "cu130", "direct",
     "2.11 cu130 has sm_90 (measured on the H200 machine)"},
    {"torch==2.11 on V100", {"V100"}, "580.65.06", "", "", "", "torch==2.11", "ok", 0, "2.11", "cu126", "direct",
     "2.11 dropped Volta from cu128/cu129 (pytorch#172598) and cu130 never had it; cu126 keeps sm_70 [BC]"},
    {"Python 3.9 on H100", {"H100"}, "580.65.06", "", "", "3.9", "", "ok", 0, "2.8", "cu129", "direct",
     "2.9+ need Python >= 3.10 [RM]; 2.8's newest variant cu129 has sm_90 [BC]"},
    {"Python 3.15 on H100", {"H100"}, "580.65.06", "", "", "3.15", "", "ok", 0, "2.14", "cu130", "direct",
     "2.13-2.14 wheels reach Python 3.15 [RM]"},
    {"A10 on CUDA 12.4 (driver given as its CUDA)", {"A10"}, "12.4", "", "", "", "", "ok", 0, "2.14", "cu126", "minor-version compatibility",
     "CUDA 12.4's driver is >= 550.54.14 [T3], above the 12.x floor [MC]"},
    {"no GPU, no driver", {}, "none", "", "", "", "", "do", 580, "2.14", "cu130", "direct",
     "nothing to cover: the default branch and the newest release's CUDA 13.0 wheel [T3][RM]"},
    {"RTX 2080 Ti on 580.65.06 (13.0 GA exactly)", {"RTX 2080 Ti"}, "580.65.06", "", "", "", "", "ok", 0, "2.14", "cu130", "direct",
     "580.65.06 is CUDA 13.0 GA's driver [T3]; cu130 has sm_75 [RM]"},
    {"GTX 750 Ti no driver", {"GTX 750 Ti"}, "none", "", "", "", "", "do", 580, "2.14", "cu126", "direct",
     "Maxwell: R580 is the last branch, proprietary module [DS]; cu126 has sm_50 [RM]"},
    {"P100 on driver 418 (CUDA 10.1)", {"P100"}, "418.39", "", "", "", "", "do", 580, "2.14", "cu126", "direct",
     "no recorded wheel runs on CUDA 10.1 (no 10.x minor-version compatibility [MC]): R580, then cu126 with sm_60 [RM]"},
    {"L4 on driver 575 (12.9)", {"L4"}, "575.57.08", "", "", "", "", "ok", 0, "2.14", "cu126", "direct",
     "575 is CUDA 12.9 [T3]; 2.14's only 12.x wheel is cu126, sm_89 by sm_86 SASS [RM][CC]"},
    {"A100 on 550 with torch==2.8", {"A100"}, "550.54.14", "", "", "", "torch==2.8", "ok", 0, "2.8", "cu126",
     "minor-version compatibility",
     "550 is CUDA 12.4 [T3]: cu126, cu128 and cu129 all run only through [MC]; the plan takes the one nearest the driver"},
};

TEST(Plan, TableOfMachines) {
  ASSERT_GE(kCases.size(), 30u);
  const Kb& kb = Kb::get();
  for (const Case& c : kCases) {
    SCOPED_TRACE(c.name);
    PlanFlags f;
    f.gpus = c.gpus;
    f.driver = c.driver;
    f.os = c.os;
    f.arch = c.arch;
    f.python = c.python;
    f.framework = c.framework;
    PlanRequest rq = plan_request(f, nullptr, kb);
    Plan p = make_plan(rq, kb);
    ASSERT_GE(p.steps.size(), 2u);
    EXPECT_EQ(p.steps[0].id, "driver");
    EXPECT_EQ(p.steps[0].status, c.driver_step) << p.steps[0].title << " | " << c.why;
    EXPECT_EQ(p.driver_branch, c.branch) << c.why;
    if (std::string(c.release).empty()) {
      EXPECT_FALSE(p.torch.found) << p.torch.pick.release << " " << p.torch.pick.variant << " | " << c.why;
      continue;
    }
    ASSERT_TRUE(p.torch.found) << p.steps[1].title << " | " << c.why;
    EXPECT_EQ(p.torch.pick.release, c.release) << c.why;
    EXPECT_EQ(p.torch.pick.variant, c.variant) << c.why;
    EXPECT_EQ(run_mode_name(p.torch.pick.mode), std::string(c.runs)) << c.why;
    EXPECT_EQ(p.torch.index_url, "https://download.pytorch.org/whl/" + std::string(c.variant));
  }
}

Plan plan_for(PlanFlags f) { return make_plan(plan_request(f, nullptr, Kb::get()), Kb::get()); }

TEST(Plan, DriverCommandsFollowTheGpuAndOs) {
  PlanFlags f;
  f.gpus = {"H100"}, f.driver = "none";
  Plan p = plan_for(f);
  ASSERT_FALSE(p.steps[0].commands.empty());
  EXPECT_NE(p.steps[0].commands[0].find("nvidia-driver-580-open"), std::string::npos) << p.steps[0].commands[0];
  f.gpus = {"GTX 1080"};  // [DS] the open modules drive Turing and newer only
  p = plan_for(f);
  EXPECT_NE(p.steps[0].commands[0].find("nvidia-driver-580 "), std::string::npos) << p.steps[0].commands[0];
  f.os = "wsl";  // [WSL] never a Linux driver inside WSL
  p = plan_for(f);
  EXPECT_TRUE(p.steps[0].commands.empty());
  EXPECT_NE(p.steps[0].title.find("Windows driver"), std::string::npos) << p.steps[0].title;
}

TEST(Plan, InstallCommandsNameTheIndex) {
  PlanFlags f;
  f.gpus = {"H100"}, f.driver = "580.65.06";
  Plan p = plan_for(f);
  const auto& cmds = p.steps[1].commands;
  ASSERT_EQ(cmds.size(), 2u);
  EXPECT_EQ(cmds[0], "python -m pip install 'torch==2.14.*' --index-url https://download.pytorch.org/whl/cu130");
  EXPECT_EQ(cmds[1], "uv pip install 'torch==2.14.*' --index-url https://download.pytorch.org/whl/cu130");
  f.framework = "torch==2.11.0";
  f.installer = "uv";
  p = plan_for(f);
  ASSERT_EQ(p.steps[1].commands.size(), 1u);
  EXPECT_EQ(p.steps[1].commands[0], "uv pip install 'torch==2.11.0' --index-url https://download.pytorch.org/whl/cu130");
  f.framework = "torch==2.5";  // PyTorch's conda channel carries 2.5 (pytorch#138506)
  f.installer = "conda";
  p = plan_for(f);
  ASSERT_FALSE(p.steps[1].commands.empty());
  EXPECT_EQ(p.steps[1].commands[0], "conda install pytorch==2.5.* pytorch-cuda=12.4 -c pytorch -c nvidia");
  f.framework = "", f.installer = "pixi";
  p = plan_for(f);
  std::string all;
  for (const auto& c : p.steps[1].commands) all += c + "\n";
  EXPECT_NE(all.find("torch = { version = \"==2.14.*\", index = \"https://download.pytorch.org/whl/cu130\" }"), std::string::npos) << all;
  f.framework = "torch==1.13", f.installer = "pip", f.gpus = {"T4"}, f.driver = "520.61.05";  // 1.13's page used --extra-index-url
  p = plan_for(f);
  ASSERT_TRUE(p.torch.found);
  EXPECT_EQ(p.torch.index_flag, "--extra-index-url");
}

TEST(Plan, ImpossiblePinSaysWhyAndTheNearestThatWorks) {
  PlanFlags f;
  f.gpus = {"RTX 5090"}, f.driver = "580.65.06", f.framework = "torch==2.5";
  Plan p = plan_for(f);
  EXPECT_FALSE(p.satisfiable);
  EXPECT_EQ(p.steps[1].status, "blocked");
  ASSERT_FALSE(p.skipped.empty());
  EXPECT_NE(p.skipped[0].find("cu124: no kernels for sm_120"), std::string::npos) << p.skipped[0];
  ASSERT_TRUE(p.nearest.found);  // 2.6 has no sm_120 either; 2.7 cu128 is the first with it [BC]
  EXPECT_EQ(p.nearest.pick.release, "2.7");
  EXPECT_EQ(p.nearest.pick.variant, "cu128");
}

TEST(Plan, NewerReleasesPassedOverSayWhy) {
  PlanFlags f;
  f.gpus = {"RTX 5090"}, f.driver = "570.124.06";
  Plan p = plan_for(f);
  ASSERT_EQ(p.skipped.size(), 3u);  // 2.14, 2.13, 2.12
  EXPECT_NE(p.skipped[0].find("torch 2.14: cu126: no kernels for sm_120"), std::string::npos) << p.skipped[0];
  EXPECT_NE(p.skipped[0].find("cu130: needs driver >= 580.65.06, CUDA 13.0"), std::string::npos) << p.skipped[0];
}

TEST(Plan, InstalledTorchAlreadyRight) {
  PlanFlags f;
  f.gpus = {"H200"}, f.driver = "580.159.04";
  PlanRequest rq = plan_request(f, nullptr, Kb::get());
  rq.installed.push_back({"2.11.0+cu130", "cu130", {"sm_75", "sm_80", "sm_86", "sm_90", "sm_100", "sm_120"}, "measured", "/opt/torch/.venv",
                          "/opt/torch/.venv/bin/python3"});
  Plan p = make_plan(rq, Kb::get());
  EXPECT_EQ(p.steps[1].status, "ok");
  EXPECT_NE(p.steps[1].title.find("already right"), std::string::npos) << p.steps[1].title;
  ASSERT_FALSE(p.steps[1].commands.empty());  // the newer release, optional, with that environment's python
  EXPECT_EQ(p.steps[1].commands[0].rfind("/opt/torch/.venv/bin/python3 -m pip install 'torch==2.14.*'", 0), 0u) << p.steps[1].commands[0];

  rq.installed[0] = {"2.11.0+cpu", "cpu", {}, "", "/opt/venv", "/opt/venv/bin/python"};
  p = make_plan(rq, Kb::get());
  EXPECT_EQ(p.steps[1].status, "do");
  EXPECT_NE(p.steps[1].details.back().find("CPU build"), std::string::npos);

  rq.installed[0] = {"2.11.0+cu130", "cu130", {"sm_75", "sm_80", "sm_86", "sm_90", "sm_100", "sm_120"}, "", "/opt/venv", "python"};
  rq.gpus = {{61, "GTX 1080"}};  // the same wheel on a Pascal card: no kernels
  p = make_plan(rq, Kb::get());
  EXPECT_EQ(p.steps[1].status, "do");
  EXPECT_NE(p.steps[1].details.back().find("no kernels for sm_61"), std::string::npos) << p.steps[1].details.back();
  EXPECT_EQ(p.torch.pick.variant, "cu126");
}

TEST(Plan, BadInputIsAUsageError) {
  const Kb& kb = Kb::get();
  auto bad = [&](PlanFlags f) {
    try {
      make_plan(plan_request(f, nullptr, kb), kb);
    } catch (const UsageError& e) {
      EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos);
      return std::string(e.what());
    }
    return std::string();
  };
  PlanFlags f;
  f.gpus = {"RTX 9999"};
  EXPECT_NE(bad(f).find("unknown GPU"), std::string::npos);
  f.gpus = {"RTX 5090"}, f.framework = "torch==1.0";
  EXPECT_NE(bad(f).find("not a release the knowledge base knows"), std::string::npos);
  f.framework = "tensorflow";
  EXPECT_NE(bad(f).find("only torch"), std::string::npos);
  f.framework = "", f.os = "macos";
  EXPECT_NE(bad(f).find("--os macos"), std::string::npos);
  f.os = "", f.driver = "abc";
  EXPECT_NE(bad(f).find("--driver abc"), std::string::npos);
  f.driver = "", f.python = "2.7";
  EXPECT_NE(bad(f).find("--python"), std::string::npos);
  f.python = "", f.purpose = "train";
  EXPECT_NE(bad(f).find("--for train"), std::string::npos);
}

TEST(Plan, JsonCarriesTheSteps) {
  PlanFlags f;
  f.gpus = {"GTX 1080"}, f.driver = "none";
  nlohmann::json j = plan_json(plan_for(f));
  EXPECT_EQ(j["schema"], "cuda-doctor/plan/v1");
  EXPECT_EQ(j["driver_branch"], 580);
  EXPECT_EQ(j["torch"]["variant"], "cu126");
  EXPECT_EQ(j["torch"]["gpus"][0]["verdict"], "native");
  EXPECT_EQ(j["steps"][0]["id"], "driver");
  EXPECT_TRUE(j["satisfiable"].get<bool>());
}

// --for build. [RF] NVIDIA CUDA Installation Guide for Linux (runfile --toolkit --silent
// --toolkitpath; runfile name = cuda_X.Y.N_<Table-3 driver>_linux.run); [FA] flash-attention's
// MAX_JOBS rule (cpus // 2, ~20 GB per job: 4 nvcc threads x 5 GB, PR #2079).
TEST(PlanBuild, H200NamesCuda130ArchList90MaxJobsAndTheRunfile) {
  PlanFlags f;
  f.gpus = {"H200"}, f.driver = "580.159.04", f.purpose = "build", f.cpus = 16, f.memory_gib = 128;
  Plan p = plan_for(f);
  EXPECT_EQ(p.build_cuda.major_minor(), "13.0");  // 2.14 cu130 [RM]
  EXPECT_EQ(p.arch_list, "9.0");
  EXPECT_EQ(p.max_jobs, 6);  // min(16 / 2, 128 / 20) [FA]
  std::string all;
  for (const auto& s : p.steps)
    for (const auto& c : s.commands) all += c + "\n";
  EXPECT_NE(all.find("wget https://developer.download.nvidia.com/compute/cuda/13.0.2/local_installers/cuda_13.0.2_580.95.05_linux.run"),
            std::string::npos) << all;  // 13.0 Update 2 bundles 580.95.05 [T3][RF]
  EXPECT_NE(all.find("sudo sh cuda_13.0.2_580.95.05_linux.run --toolkit --silent --toolkitpath=/usr/local/cuda-13.0"), std::string::npos) << all;
  EXPECT_EQ(all.find("--driver"), std::string::npos) << all;  // never the driver
  EXPECT_NE(all.find("export CUDA_HOME=/usr/local/cuda-13.0\n"), std::string::npos) << all;
  EXPECT_NE(all.find("export TORCH_CUDA_ARCH_LIST=\"9.0\"\n"), std::string::npos) << all;
  EXPECT_NE(all.find("export MAX_JOBS=6\n"), std::string::npos) << all;
  EXPECT_NE(all.find("export UV_TORCH_BACKEND=cu130"), std::string::npos) << all;
  EXPECT_NE(all.find("export CONDA_OVERRIDE_CUDA=13.0"), std::string::npos) << all;
  nlohmann::json j = plan_json(p);
  EXPECT_EQ(j["build"]["cuda"], "13.0");
  EXPECT_EQ(j["build"]["max_jobs"], 6);
}

TEST(PlanBuild, AnInstalledMatchingToolkitIsUsedAndTheInstalledTorchDecides) {
  PlanFlags f;
  f.gpus = {"H200"}, f.driver = "580.159.04", f.purpose = "build";
  PlanRequest rq = plan_request(f, nullptr, Kb::get());
  rq.installed.push_back({"2.11.0+cu130", "cu130", {"sm_75", "sm_80", "sm_86", "sm_90", "sm_100", "sm_120"}, "measured", "/opt/torch/.venv", "python3"});
  rq.toolkits.push_back({"13.0.88", "/usr/local/cuda-13.0", 15});
  rq.host_gcc = "13.3.0";
  Plan p = make_plan(rq, Kb::get());
  ASSERT_GE(p.steps.size(), 4u);
  EXPECT_EQ(p.steps[2].id, "toolkit");
  EXPECT_EQ(p.steps[2].status, "ok") << p.steps[2].title;
  // Nothing to install here; the runfile is for replaying the build elsewhere, toolkit only.
  ASSERT_EQ(p.steps[2].commands.size(), 2u);
  EXPECT_NE(p.steps[2].commands[1].find("--toolkit --silent --toolkitpath=/usr/local/cuda-13.0"), std::string::npos);
  EXPECT_EQ(p.steps[2].commands[1].find("--driver"), std::string::npos);
  EXPECT_NE(p.steps[2].details.front().find("elsewhere"), std::string::npos);
  EXPECT_EQ(p.steps[3].commands[0], "export CUDA_HOME=/usr/local/cuda-13.0");
  EXPECT_NE(p.steps[3].details.back().find("CPUs and memory unknown"), std::string::npos);
  EXPECT_EQ(p.max_jobs, 0);
}

TEST(PlanBuild, MixedCardsAndANewerGcc) {
  PlanFlags f;
  f.gpus = {"A100", "RTX 3090", "RTX 4090"}, f.driver = "560.35.03", f.purpose = "build", f.cpus = 64, f.memory_gib = 512;
  PlanRequest rq = plan_request(f, nullptr, Kb::get());
  rq.host_gcc = "14.2.0";  // CUDA 12.6 accepts gcc <= 13 (data/toolkits.toml)
  Plan p = make_plan(rq, Kb::get());
  EXPECT_EQ(p.build_cuda.major_minor(), "12.6");  // 560 = CUDA 12.6 [T3]: 2.14 cu126
  EXPECT_EQ(p.arch_list, "8.0;8.6;8.9");
  EXPECT_EQ(p.max_jobs, 25);  // min(64 / 2, 512 / 20)
  std::string all;
  for (const auto& s : p.steps)
    for (const auto& c : s.commands) all += c + "\n";
  EXPECT_NE(all.find("sudo apt-get install gcc-13 g++-13"), std::string::npos) << all;
  EXPECT_NE(all.find("export CUDAHOSTCXX=/usr/bin/g++-13"), std::string::npos) << all;
  EXPECT_NE(all.find("cuda_12.6.3_560.35.05_linux.run"), std::string::npos) << all;  // 12.6 Update 3 [T3]
}

TEST(PlanBuild, MaxJobsRule) {
  EXPECT_EQ(max_jobs_for(16, 128 * 1024, 20, 2), 6);
  EXPECT_EQ(max_jobs_for(2, 4 * 1024, 20, 2), 1);
  EXPECT_EQ(max_jobs_for(96, 880 * 1024, 20, 2), 44);
  EXPECT_EQ(max_jobs_for(0, 1024, 20, 2), 0);
  EXPECT_EQ(max_jobs_for(8, 0, 20, 2), 0);
}

TEST(Plan, UvIgnoresComputeCapability) {
  PlanFlags f;  // uv's table (driver floor only) takes cu129 for 2.11, whose list starts at sm_75 [BC]
  f.gpus = {"GTX 1080"}, f.driver = "580.95.05", f.framework = "torch==2.11";
  Plan p = plan_for(f);
  ASSERT_EQ(p.steps.size(), 3u);
  EXPECT_EQ(p.steps[2].id, "tools");
  EXPECT_NE(p.steps[2].title.find("from cu129: no kernels for sm_61"), std::string::npos) << p.steps[2].title;
  EXPECT_EQ(p.torch.pick.variant, "cu126");
  f.gpus = {"H100"};  // uv's pick runs: no tools step for run
  EXPECT_EQ(plan_for(f).steps.size(), 2u);
}

}  // namespace
}  // namespace cd
