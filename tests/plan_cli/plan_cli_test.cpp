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
  EXPECT_NE(r.out.find("✓ 1  driver  580.159.04"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("torch 2.11.0+cu130 in /opt/torch/.venv is already right"), std::string::npos) << r.out;
  expect_golden("h200-plan.txt", r.out);
}

TEST(PlanCli, CpuMachineStartsWithTheDriver) {
  auto r = doctor({"plan", "--facts", kCpu});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("→ 1  driver  install the NVIDIA driver, branch 580"), std::string::npos) << r.out;
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

}  // namespace
