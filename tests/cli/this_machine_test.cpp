// End-to-end on the machine the tests run on: a CPU box with a CUDA toolkit from
// pip wheels at /usr/local/cuda and no NVIDIA driver. The report must say exactly that.
#include <gtest/gtest.h>

#include <unistd.h>

#include <nlohmann/json.hpp>

#include "cli/cli_helpers.hpp"

using cdtest::doctor;

namespace {
bool has_driver() { return access("/proc/driver/nvidia/version", F_OK) == 0; }
bool has_finding(const nlohmann::json& j, const std::string& id) {
  for (const auto& f : j["findings"])
    if (f["id"] == id) return true;
  return false;
}
}  // namespace

TEST(ThisMachine, ReportsNoDriverCleanly) {
  if (has_driver()) GTEST_SKIP() << "this machine has an NVIDIA driver";
  auto r = doctor({"check", "--json", "--no-scan"});
  ASSERT_TRUE(r.code == 0 || r.code == 2) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_TRUE(has_finding(j, "driver.missing")) << r.out.substr(0, 2000);
  EXPECT_TRUE(j["facts"]["driver"]["gpus"].empty());
  EXPECT_EQ(r.code, 2) << "no driver is an error";

  auto text = doctor({"check", "--no-scan"});
  EXPECT_NE(text.out.find("no NVIDIA driver"), std::string::npos) << text.out;
}

TEST(ThisMachine, FindsTheToolkitAtUsrLocalCuda) {
  if (access("/usr/local/cuda/bin/nvcc", X_OK) != 0) GTEST_SKIP() << "no toolkit at /usr/local/cuda";
  auto r = doctor({"check", "--json", "--no-scan"});
  auto j = nlohmann::json::parse(r.out);
  bool found = false;
  for (const auto& t : j["facts"]["toolkit"]["toolkits"]) {
    std::string version = t.value("version", "");
    found |= version.rfind("13.0", 0) == 0;
  }
  EXPECT_TRUE(found) << j["facts"]["toolkit"].dump(2);
}
