// rules/verify.cpp on hand-built verify facts: which finding each result becomes.
#include <gtest/gtest.h>

#include "gpu/verify_expect.hpp"
#include "rules/rules.hpp"
#include "rules/run_rule.hpp"

using namespace cd;

namespace {

Facts h200(double memcpy_gbs, int gen = 5, int width = 16) {
  Facts f;
  f.verify.ran = true;
  f.verify.gpus.push_back(VerifyGpu{0, "NVIDIA H200", "9.0", 132, 139.8, "0000:19:00.0", "", gen, width, 5, 16});
  f.verify.measurements.push_back(Measurement{"dtod_memcpy", "GPU 0", memcpy_gbs, "GB/s", 0, "", "", 0});
  gpu::add_expectations(f.verify, Kb::get());
  return f;
}

const Finding* find(const Findings& fs, const std::string& id) {
  for (const Finding& f : fs)
    if (f.id == id) return &f;
  return nullptr;
}

}  // namespace

TEST(VerifyRules, HealthyH200HasNoFindings) {
  EXPECT_TRUE(cdtest::run_rule(cd::verify_rules, h200(4277)).empty());
}

TEST(VerifyRules, SlowMemoryIsBelowExpectedWithBothNumbersAndSource) {
  Findings fs = cdtest::run_rule(cd::verify_rules, h200(2000));
  const Finding* f = find(fs, "perf.below_expected");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->severity, Severity::warning);
  EXPECT_NE(f->title.find("2000.0 GB/s"), std::string::npos) << f->title;
  EXPECT_NE(f->title.find("4278"), std::string::npos);
  ASSERT_EQ(f->evidence.size(), 2u);
  EXPECT_NE(f->evidence[1].source.find("measured on the H200 machine"), std::string::npos) << f->evidence[1].source;
}

TEST(VerifyRules, NarrowPcieLinkIsDegraded) {
  Findings fs = cdtest::run_rule(cd::verify_rules, h200(4277, 4, 8));
  const Finding* f = find(fs, "device.degraded_link");
  ASSERT_NE(f, nullptr);
  EXPECT_NE(f->title.find("Gen4 x8"), std::string::npos);
  EXPECT_NE(f->fix.back().find("lspci"), std::string::npos);
}

TEST(VerifyRules, FailedStepUsesItsMappedFindingAndSkipsAreQuiet) {
  Facts f;
  f.verify.ran = true;
  f.verify.steps.push_back(VerifyStep{"driver", "cuInit", StepStatus::fail, "cuInit failed: CUDA_ERROR_SYSTEM_DRIVER_MISMATCH (803)",
                                      0.1, "", 803, "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH", "driver.forward_compat_unsupported"});
  f.verify.steps.push_back(VerifyStep{"framework", "torch", StepStatus::skip, "no Python with torch found", 0, "", 0, "", ""});
  Findings fs = cdtest::run_rule(cd::verify_rules, f);
  ASSERT_EQ(fs.size(), 1u);
  EXPECT_EQ(fs[0].id, "driver.forward_compat_unsupported");
  EXPECT_EQ(fs[0].severity, Severity::error);
  EXPECT_NE(fs[0].title.find("CUDA_ERROR_SYSTEM_DRIVER_MISMATCH"), std::string::npos);
}

TEST(VerifyRules, NothingWhenVerifyDidNotRun) {
  Facts f;
  EXPECT_TRUE(cdtest::run_rule(cd::verify_rules, f).empty());
}
