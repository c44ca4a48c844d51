// End-to-end `plan`: the built binary on the recorded machines (the H200's facts, this CPU
// machine's), on flag-described machines, and on bad input. The text of the two recorded
// machines is golden (tests/fixtures/golden/*-plan.txt; CD_UPDATE_GOLDENS=1 rewrites them).
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "util/subprocess.hpp"

namespace {

struct DoctorRun {
  int code = -1;
  std::string out, err;
};

DoctorRun doctor(std::vector<std::string> args) {
  cd::ProcessOptions o;
  o.timeout = std::chrono::seconds(60);
  o.env_set = {{"NO_COLOR", "1"}, {"CUDA_DOCTOR_PYTHON", ""}};
  args.insert(args.begin(), CD_BINARY);
  cd::ProcessResult p = cd::run_process(args, o);
  return {p.exit_code, p.out, p.err};
}

const std::string kH200 = std::string(CD_FIXTURES) + "/h200/facts.json";
const std::string kCpu = std::string(CD_FIXTURES) + "/cpu/facts.json";

std::string read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void expect_golden(const std::string& name, const std::string& got) {
  std::string path = std::string(CD_FIXTURES) + "/golden/" + name;
  if (std::getenv("CD_UPDATE_GOLDENS")) {
    std::ofstream(path, std::ios::binary) << got;
    return;
  }
  EXPECT_EQ(read(path), got) << "golden " << name << " differs (CD_UPDATE_GOLDENS=1 to rewrite, then review the diff)";
}

TEST(PlanCli, H200TorchIsAlreadyRight) {
  auto r = doctor({"plan", "--facts", kH200});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("✓ 1  driver 580.159.04 (CUDA 13.0) runs torch"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("torch 2.11.0+cu130 in /opt/torch/.venv is already right"), std::string::npos) << r.out;
  expect_golden("h200-plan.txt", r.out);
}

TEST(PlanCli, CpuMachineStartsWithTheDriver) {
  auto r = doctor({"plan", "--facts", kCpu});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("→ 1  install the NVIDIA driver, branch 580"), std::string::npos) << r.out;
  expect_golden("cpu-plan.txt", r.out);
}

TEST(PlanCli, JsonForAFlagMachine) {
  auto r = doctor({"plan", "--gpu", "GTX 1080", "--driver", "580.95.05", "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["schema"], "cuda-doctor/plan/v1");
  EXPECT_EQ(j["torch"]["variant"], "cu126");
  EXPECT_EQ(j["machine"]["gpus"][0]["sm"], 61);
}

TEST(PlanCli, ImpossiblePinExitsTwoWithTheNearest) {
  auto r = doctor({"plan", "--gpu", "RTX 5090", "--driver", "580.65.06", "--framework", "torch==2.5"});
  EXPECT_EQ(r.code, 2) << r.out << r.err;
  EXPECT_NE(r.out.find("nearest that works: torch 2.7 cu128"), std::string::npos) << r.out;
}

TEST(PlanCli, BadInputIsOneLineExitThree) {
  const std::vector<std::vector<std::string>> cases = {
      {"plan", "--gpu", "RTX 9999"},
      {"plan", "--gpu", "RTX 5090", "--framework", "torch==1.0"},
      {"plan", "--gpu", "H100", "--driver", "banana"},
      {"plan", "--gpu", "H100", "--os", "macos"},
      {"plan", "--gpu", "H100", "--distro", "Ubuntu 24.04"},
      {"plan", "--gpu", "H100", "--distro", "$(reboot)"},
      {"plan", "--facts", std::string(CD_FIXTURES) + "/golden/cpu-check.txt"},
  };
  for (const auto& args : cases) {
    auto r = doctor(args);
    EXPECT_EQ(r.code, 3) << args.back() << ": " << r.out << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
    ASSERT_FALSE(r.err.empty());
    EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << r.err;
  }
}

// A described machine's distribution: its own commands, named in the header and --json; an
// ID no row covers gets NVIDIA's guide, never another distribution's command.
TEST(PlanCli, DistroFlagPicksTheDistributionsCommands) {
  struct Case {
    const char* distro;
    const char* header;
    const char* command;
  };
  for (const Case& c : {Case{"rhel-9", "linux (RHEL 9) x86_64", "$ sudo dnf module install nvidia-driver:580-open && sudo reboot"},
                        Case{"rocky-9.4", "linux (RHEL 9.4) x86_64", "repos/rhel9/x86_64/cuda-rhel9.repo"},
                        Case{"debian-12", "linux (Debian 12) x86_64", "$ sudo apt install nvidia-open-580 && sudo reboot"},
                        Case{"opensuse-leap-15.6", "linux (SUSE 15.6) x86_64", "$ sudo zypper install nvidia-open-580 && sudo reboot"},
                        Case{"arch", "· linux x86_64", "as NVIDIA's guide says for this distribution"}}) {
    auto r = doctor({"plan", "--gpu", "H100", "--distro", c.distro});
    ASSERT_EQ(r.code, 0) << c.distro << ": " << r.err;
    EXPECT_NE(r.out.find(c.header), std::string::npos) << c.distro << ":\n" << r.out;
    EXPECT_NE(r.out.find(c.command), std::string::npos) << c.distro << ":\n" << r.out;
    if (std::string(c.distro) != "debian-12") {
      EXPECT_EQ(r.out.find(" apt "), std::string::npos) << c.distro << ":\n" << r.out;
    }
  }
  auto r = doctor({"plan", "--gpu", "H100", "--distro", "rhel-9", "--for", "build", "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["machine"]["distribution"], "RHEL 9");
  EXPECT_NE(j.dump().find("sudo dnf install cuda-toolkit-13-0"), std::string::npos) << j.dump(1);
}

std::string write_temp(const std::string& name, const std::string& text) {
  std::string path = std::string(CD_BUILD_DIR) + "/plan_cli_" + name;
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

TEST(PlanCli, BuildOnTheH200Facts) {
  auto r = doctor({"plan", "--for", "build", "--facts", kH200});
  ASSERT_EQ(r.code, 0) << r.err;
  // The recorded toolkit is CUDA 13.0 at /usr/local/cuda-13.0 and torch 2.11.0+cu130 is right: nothing to install.
  EXPECT_NE(r.out.find("✓ 3  CUDA 13.0 toolkit at /usr/local/cuda-13.0 matches"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("export CUDA_HOME=/usr/local/cuda-13.0"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("export TORCH_CUDA_ARCH_LIST=\"9.0\""), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("this environment has TORCH_CUDA_ARCH_LIST=9.0a"), std::string::npos) << r.out;
  expect_golden("h200-plan-build.txt", r.out);
}

// lock on the H200's facts, plan --from on this CPU machine's: the round trip of the issue.
TEST(LockCli, RoundTripH200ToCpu) {
  auto lock = doctor({"lock", "--facts", kH200});
  ASSERT_EQ(lock.code, 0) << lock.err;
  auto j = nlohmann::json::parse(lock.out);
  EXPECT_EQ(j["schema"], "cuda-doctor/lock/v1");
  EXPECT_EQ(j["torch"]["version"], "2.11.0+cu130");
  EXPECT_EQ(j["torch"]["index_url"], "https://download.pytorch.org/whl/cu130");
  EXPECT_EQ(j["requires"]["driver_min"], "580.65.06");  // CUDA 13.0 GA [T3]
  EXPECT_EQ(j["requires"]["gpu_archs"][0], "sm_90");
  EXPECT_EQ(j["env"]["TORCH_CUDA_ARCH_LIST"], "9.0a");
  std::string path = write_temp("h200.lock", lock.out);

  auto here = doctor({"plan", "--from", path, "--facts", kCpu});
  EXPECT_EQ(here.code, 2) << here.out << here.err;
  EXPECT_NE(here.out.find("no NVIDIA driver here"), std::string::npos) << here.out;
  EXPECT_NE(here.out.find("sudo apt install nvidia-driver-580-open"), std::string::npos) << here.out;
  EXPECT_NE(here.out.find("-m pip install 'torch==2.11.0+cu130' --extra-index-url https://download.pytorch.org/whl/cu130"), std::string::npos)
      << here.out;
  EXPECT_NE(here.out.find("✓ toolkit"), std::string::npos) << here.out;  // both have CUDA 13.0
  expect_golden("h200-lock-plan-from-cpu.txt", here.out);

  auto same = doctor({"plan", "--from", path, "--facts", kH200});
  EXPECT_EQ(same.code, 0) << same.out;
  EXPECT_NE(same.out.find("nothing differs"), std::string::npos) << same.out;
}

TEST(LockCli, FormatsForPipCondaPixi) {
  auto req = doctor({"lock", "--format", "requirements", "--facts", kH200});
  ASSERT_EQ(req.code, 0) << req.err;
  EXPECT_NE(req.out.find("--extra-index-url https://download.pytorch.org/whl/cu130\ntorch==2.11.0+cu130\n"), std::string::npos) << req.out;
  EXPECT_NE(req.out.find("\nnvidia-cudnn-cu13==9.19.0.56\n"), std::string::npos) << req.out;
  auto yml = doctor({"lock", "--format", "environment.yml", "--facts", kH200});
  EXPECT_NE(yml.out.find("  - python=3.12\n"), std::string::npos) << yml.out;
  EXPECT_NE(yml.out.find("    - torch==2.11.0+cu130\n"), std::string::npos) << yml.out;
  auto pixi = doctor({"lock", "--format", "pixi", "--facts", kH200});
  EXPECT_NE(pixi.out.find("torch = { version = \"==2.11.0\", index = \"https://download.pytorch.org/whl/cu130\" }"), std::string::npos) << pixi.out;
  EXPECT_NE(pixi.out.find("[system-requirements]\ncuda = \"13.0\""), std::string::npos) << pixi.out;
}

TEST(LockCli, GarbageLocksAreOneLineExitThree) {
  for (const std::string& text : {std::string("not json at all"), std::string("{\"schema\": \"cuda-doctor/facts/v1\"}"),
                                   std::string("{\"schema\": \"cuda-doctor/lock/v1\", \"torch\": []}"), std::string("[1,2]")}) {
    auto r = doctor({"plan", "--from", write_temp("garbage.lock", text), "--facts", kCpu});
    EXPECT_EQ(r.code, 3) << text << ": " << r.out;
    EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << r.err;
    EXPECT_NE(r.err.find("not a cuda-doctor lock"), std::string::npos) << r.err;
  }
  auto r = doctor({"lock", "--facts", kCpu});  // no environment with CUDA packages
  EXPECT_EQ(r.code, 3) << r.out;
  EXPECT_NE(r.err.find("nothing to lock"), std::string::npos) << r.err;
}

}  // namespace
