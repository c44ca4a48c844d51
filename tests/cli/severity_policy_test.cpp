// The severity policy of docs/findings.md, end to end on the recorded H200 facts:
//   error   = will fail now in this environment;
//   warning = will fail or misbehave in a situation the finding names and the user is likely to meet;
//   info    = worth knowing (shown with -v).
// The stock H200 (driver 580, torch 2.11+cu130, nothing broken) must give 0 errors and no warning
// the policy does not justify; each case the policy demotes is checked in both directions by
// editing one fact of the recording.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cli/cli_helpers.hpp"

using cdtest::doctor;
using nlohmann::json;

namespace {

json h200() {
  std::ifstream in(std::string(CD_FIXTURES) + "/h200/facts.json");
  return json::parse(in);
}

// `check --json` on these facts: the findings.
json findings_of(const json& facts, const std::string& name) {
  std::string path = cdtest::temp_dir("severity-" + name) + "/facts.json";
  cdtest::write_file(path, facts.dump());
  auto r = doctor({"check", "--json", "--facts", path});
  EXPECT_TRUE(r.code == 0 || r.code == 2) << r.err;
  return json::parse(r.out)["findings"];
}

std::vector<json> with_id(const json& findings, const std::string& id, const std::string& subject_has = "") {
  std::vector<json> out;
  for (const auto& f : findings)
    if (f["id"] == id && f["subject"].get<std::string>().find(subject_has) != std::string::npos) out.push_back(f);
  return out;
}

}  // namespace

TEST(SeverityPolicy, RecordedH200HasNoErrorsAndNoUnjustifiedWarnings) {
  json fs = findings_of(h200(), "h200");
  std::string listed;
  for (const auto& f : fs)
    if (f["severity"] == "error" || f["severity"] == "warning")
      listed += f["severity"].get<std::string>() + " " + f["id"].get<std::string>() + ": " + f["title"].get<std::string>() + "\n";
  // Nothing on the stock H200 predicts a failure the user can hit: every finding there is info.
  EXPECT_EQ(listed, "") << "the healthy H200 must give 0 errors and no warning the policy does not justify";
}

TEST(SeverityPolicy, JitOnlyIsInfoForNvidiaHelpersAndTestDataWarningForUserBinaries) {
  json fs = findings_of(h200(), "jit");
  auto cufile = with_id(fs, "arch.jit_only", "nvidia/cu13");
  ASSERT_FALSE(cufile.empty());
  EXPECT_EQ(cufile[0]["severity"], "info") << "cuFile's PTX-only helper module is NVIDIA's own";
  auto numba = with_id(fs, "arch.jit_only", "numba");
  ASSERT_FALSE(numba.empty());
  for (const auto& f : numba) EXPECT_EQ(f["severity"], "info") << "PTX under numba's tests/ is test data";

  // The same PTX-only file where a package loads it at run time is a slow first launch the user meets.
  json facts = h200();
  bool moved = false;
  for (auto& b : facts["binaries"]) {
    std::string p = b["path"];
    if (p.find("/numba/cuda/tests/data/jitlink.ptx") != std::string::npos) {
      b["path"] = "/opt/torch/.venv/lib/python3.12/site-packages/mykernels/kernels.ptx";
      b["package"] = "mykernels";
      moved = true;
    }
  }
  ASSERT_TRUE(moved);
  auto mine = with_id(findings_of(facts, "jit-user"), "arch.jit_only", "mykernels");
  ASSERT_EQ(mine.size(), 1u);
  EXPECT_EQ(mine[0]["severity"], "warning");
}

TEST(SeverityPolicy, DuplicateLibraryIsInfoUntilTheStrayCopyWins) {
  json fs = findings_of(h200(), "dup");
  auto cudnn = with_id(fs, "libs.duplicate_copies", "cudnn");
  ASSERT_EQ(cudnn.size(), 1u);
  EXPECT_EQ(cudnn[0]["severity"], "info") << "torch loads its wheel's cuDNN; the system copy is only in ld.so.cache";
  EXPECT_NE(cudnn[0]["explanation"].get<std::string>().find("LD_LIBRARY_PATH includes /lib/x86_64-linux-gnu"),
            std::string::npos)
      << "the finding names when the other copy would win";

  json facts = h200();
  for (auto& c : facts["libs"]["copies"])
    if (c["name"] == "cudnn" && c["origin"] == "system") c["on_ld_library_path"] = true;
  auto now = with_id(findings_of(facts, "dup-ldlp"), "libs.duplicate_copies", "cudnn");
  ASSERT_EQ(now.size(), 1u);
  EXPECT_EQ(now[0]["severity"], "warning") << "on LD_LIBRARY_PATH the system cuDNN reaches every program without RPATH";
}

TEST(SeverityPolicy, CpuOnnxruntimeIsInfoCpuJaxlibIsAWarning) {
  json fs = findings_of(h200(), "cpu");
  auto ort = with_id(fs, "framework.cpu_build", "onnxruntime");
  ASSERT_EQ(ort.size(), 1u);
  EXPECT_EQ(ort[0]["severity"], "info");
  EXPECT_NE(ort[0]["explanation"].get<std::string>().find("on the GPU"), std::string::npos);

  json facts = h200();
  for (auto& py : facts["pythons"]) {
    json keep = json::array();
    for (auto& p : py["packages"])
      if (p["name"].get<std::string>().rfind("jax-cuda", 0) != 0) keep.push_back(p);
    py["packages"] = keep;
  }
  auto jax = with_id(findings_of(facts, "cpu-jax"), "framework.cpu_build", "jaxlib");
  ASSERT_EQ(jax.size(), 1u);
  EXPECT_EQ(jax[0]["severity"], "warning") << "jaxlib without its CUDA plugin runs on the CPU for every JAX user";
}
