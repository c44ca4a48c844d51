// report/verify_text.cpp: the verify and bench tables read the model's judgement of each
// measurement (derive/verify.cpp) instead of comparing numbers themselves.
#include <gtest/gtest.h>

#include "../injection_checks.hpp"
#include "gpu/verify_expect.hpp"
#include "report/verify_report.hpp"
#include "rules/rules.hpp"

using namespace cd;

namespace {

Facts slow_and_fast() {
  Facts f;
  f.verify.ran = true;
  f.verify.driver_cuda_version = 13000;
  f.verify.libcuda = "/usr/lib/x86_64-linux-gnu/libcuda.so.1";
  f.verify.gpus.push_back(VerifyGpu{0, "NVIDIA H200", "9.0", 132, 139.8, "0000:19:00.0", "", 5, 16, 5, 16});
  f.verify.steps.push_back(VerifyStep{"driver", "cuInit", StepStatus::pass, "ok", 0.2, "", 0, "", ""});
  f.verify.measurements.push_back(Measurement{"dtod_memcpy", "GPU 0", 2000, "GB/s", 0, "", "slow one", 0});
  f.verify.measurements.push_back(Measurement{"dtod_copy_kernel", "GPU 0", 4200, "GB/s", 0, "", "fast one", 0});
  gpu::add_expectations(f.verify, Kb::get());
  return f;
}

std::string line_with(const std::string& text, const std::string& what) {
  size_t at = text.find(what);
  if (at == std::string::npos) return {};
  size_t begin = text.rfind('\n', at);
  begin = begin == std::string::npos ? 0 : begin + 1;
  return text.substr(begin, text.find('\n', at) - begin);
}

}  // namespace

TEST(VerifyRender, OnlyTheMeasurementBelowItsThresholdIsHighlighted) {
  Facts f = slow_and_fast();
  Model m = derive(f, Kb::get());
  ASSERT_TRUE(m.measurements[0].below_expected);
  ASSERT_FALSE(m.measurements[1].below_expected);
  ReportOptions o;
  o.style = Style(true);
  Findings findings = verify_rules(m, Kb::get());
  std::string out = render_verify_text(m, findings, o);
  EXPECT_EQ(line_with(out, "slow one").rfind("\033[33m", 0), 0u) << out;  // the whole row in yellow
  EXPECT_EQ(line_with(out, "fast one").find("\033["), std::string::npos) << out;
  EXPECT_NE(out.find("perf.below_expected"), std::string::npos);
  EXPECT_NE(out.find("driver CUDA 13.0, /usr/lib/x86_64-linux-gnu/libcuda.so.1"), std::string::npos) << out;
  std::string bench = render_bench_text(m, o);
  EXPECT_EQ(line_with(bench, "slow one").rfind("\033[33m", 0), 0u) << bench;
  EXPECT_EQ(line_with(bench, "fast one").find("\033["), std::string::npos) << bench;
  // The percentage is the model's, rounded.
  EXPECT_NE(line_with(bench, "slow one").find(fmt::format("{:.0f}%", m.measurements[0].percent)), std::string::npos);
}

TEST(VerifyRender, BenchWithoutMeasurementsSaysWhereToLook) {
  Facts f;
  f.verify.ran = true;
  Model m = derive(f, Kb::get());
  EXPECT_EQ(render_bench_text(m, {}), "no measurements: run `cuda-doctor verify` to see why\n");
  auto j = nlohmann::json::parse(render_bench_json(m));
  EXPECT_EQ(j["schema"], "cuda-doctor/bench/v1");
  EXPECT_TRUE(j["measurements"].empty());
}

// Issue 12 #7: what the driver and libraries report (GPU name, bus id, library path, a step's
// error text, a measurement's note) is escaped in the verify and bench tables.
TEST(VerifyRender, EveryReportedStringIsEscaped) {
  using cdtest::kHostile;
  Facts f = slow_and_fast();
  f.verify.libcuda = kHostile;
  f.verify.gpus[0].name = kHostile;
  f.verify.gpus[0].pci_bus_id = kHostile;
  f.verify.steps.push_back(VerifyStep{"device", kHostile, StepStatus::fail, kHostile, 0.1, kHostile, 0, "", ""});
  f.verify.measurements[0].note = kHostile;
  f.verify.measurements[1].gpu = kHostile;
  Model m = derive(f, Kb::get());
  for (bool colours : {false, true}) {
    ReportOptions o;
    o.style = Style(colours);
    std::string out = render_verify_text(m, verify_rules(m, Kb::get()), o);
    EXPECT_TRUE(cdtest::no_injection(out)) << colours;
    EXPECT_NE(out.find(cdtest::kHostileShown), std::string::npos) << out;
    EXPECT_TRUE(cdtest::no_injection(render_bench_text(m, o))) << colours;
  }
}

// End to end: the fake driver names its GPU with the hostile string (CD_FAKE_NAME).
TEST(VerifyRender, HostileGpuNameFromTheDriverIsEscaped) {
  std::map<std::string, std::string> fake{{"CUDA_DOCTOR_LIBCUDA", std::string(CD_FAKES_DIR) + "/libcuda.so.1"},
                                          {"CUDA_DOCTOR_LIB_DIR", CD_FAKES_DIR},
                                          {"CUDA_DOCTOR_LIBNVML", std::string(CD_FAKES_DIR) + "/libnvidia-ml.so.1"},
                                          {"CUDA_DOCTOR_PYTHON", ""},
                                          {"CD_FAKE_NAME", cdtest::kHostile}};
  for (const auto& mode : cdtest::text_modes()) {
    std::map<std::string, std::string> env = fake;
    env.insert(mode.env.begin(), mode.env.end());
    std::vector<std::string> args{"verify", "--quick"};
    args.insert(args.end(), mode.args.begin(), mode.args.end());
    cdtest::Output r = cdtest::run_doctor(args, env);
    EXPECT_EQ(r.code, 0) << mode.name << r.out << r.err;
    EXPECT_TRUE(cdtest::no_injection(r.out)) << mode.name;
    EXPECT_NE(r.out.find(cdtest::kHostileShown), std::string::npos) << mode.name << "\n" << r.out;
  }
}
