#include <gtest/gtest.h>

#include "report/report.hpp"

using namespace cd;

namespace {
Finding sample(Severity s, std::string id) {
  Finding f;
  f.id = std::move(id);
  f.severity = s;
  f.layer = "driver";
  f.title = "title of " + f.id;
  f.evidence = {{"driver 535.104.05", "/proc/driver/nvidia/version"}};
  f.explanation = "because.";
  f.fix = {"# first", "sudo reboot"};
  return f;
}
}  // namespace

TEST(FindingsText, ShowsEvidenceAndFixAligned) {
  std::vector<Finding> fs = {sample(Severity::error, "driver.library_mismatch")};
  std::string out = render_findings_text(fs, {});
  EXPECT_NE(out.find("driver.library_mismatch"), std::string::npos);
  EXPECT_NE(out.find("evidence   driver 535.104.05  [/proc/driver/nvidia/version]"), std::string::npos);
  EXPECT_NE(out.find("fix        # first"), std::string::npos);
  EXPECT_NE(out.find("           $ sudo reboot"), std::string::npos);
  EXPECT_EQ(out.find("\033["), std::string::npos) << "plain style must not emit ANSI codes";
}

TEST(FindingsText, ColorsOnlyWhenEnabled) {
  ReportOptions o;
  o.style = Style(true);
  std::string out = render_findings_text({sample(Severity::warning, "toolkit.multiple")}, o);
  EXPECT_NE(out.find("\033[33m"), std::string::npos);
}

TEST(FindingsText, SummaryCounts) {
  std::vector<Finding> fs = {sample(Severity::error, "a"), sample(Severity::warning, "b"), sample(Severity::warning, "c"),
                             sample(Severity::info, "d")};
  EXPECT_EQ(summary_line(fs), "1 error, 2 warnings, 1 info");
}

TEST(FindingsJson, HasSchemaSummaryAndFindings) {
  auto j = nlohmann::json::parse(render_json("check", {sample(Severity::error, "x.y")}, {{"extra", 1}}));
  EXPECT_EQ(j["schema"], "cuda-doctor/check/v1");
  EXPECT_EQ(j["summary"]["worst"], "error");
  EXPECT_EQ(j["summary"]["errors"], 1);
  EXPECT_EQ(j["findings"][0]["id"], "x.y");
  EXPECT_EQ(j["findings"][0]["severity"], "error");
  EXPECT_EQ(j["extra"], 1);
}

TEST(FindingsMarkdown, FencesTheFix) {
  std::string md = render_findings_markdown({sample(Severity::error, "driver.too_old")});
  EXPECT_NE(md.find("### error `driver.too_old`"), std::string::npos);
  EXPECT_NE(md.find("```sh\n# first\nsudo reboot\n```"), std::string::npos);
}

TEST(CheckText, VerboseShowsProbeTimesSlowestFirst) {
  Facts f;
  f.probe_seconds = {{"toolkits", 0.004}, {"driver", 0.201}, {"binaries", 0.13}};
  ReportOptions o;
  EXPECT_EQ(render_check_text(derive(f, Kb::get()), {}, o).find("probe times"), std::string::npos);
  o.verbose = 1;
  std::string out = render_check_text(derive(f, Kb::get()), {}, o);
  EXPECT_NE(out.find("driver 0.201 s, binaries 0.130 s, toolkits 0.004 s"), std::string::npos) << out;
}

// JAX's fallback line guesses at the cause ("jaxlib is not installed" even when the GPUs are
// hidden), so the backend JAX ended on leads and JAX's own words follow, marked as its.
TEST(CheckText, DeepJaxShowsTheBackendBeforeJaxsOwnMessage) {
  Facts f;
  PythonEnv py;
  py.prefix = "/opt/env";
  py.interpreter = "/opt/env/bin/python3";
  PythonPackage jax;
  jax.name = "jax";
  jax.version = "0.11.2";
  py.packages.push_back(jax);
  py.deep_jax.ran = true;
  py.deep_jax.version = "0.11.2";
  py.deep_jax.backend = "cpu";
  py.deep_jax.devices = {"cpu"};
  py.deep_jax.error = "An NVIDIA GPU may be present on this machine, but a CUDA-enabled jaxlib is not installed.";
  f.pythons.push_back(py);
  std::string out = render_check_text(derive(f, Kb::get()), {}, {});
  EXPECT_NE(out.find("--deep jax           jax 0.11.2: backend cpu, 1 device(s) (cpu); JAX says: An NVIDIA GPU"),
            std::string::npos)
      << out;
  f.pythons[0].deep_jax = {};
  f.pythons[0].deep_jax.ran = true;
  f.pythons[0].deep_jax.error = "ModuleNotFoundError: No module named 'jax'";
  out = render_check_text(derive(f, Kb::get()), {}, {});
  EXPECT_NE(out.find("--deep jax           ModuleNotFoundError: No module named 'jax'"), std::string::npos) << out;
  EXPECT_EQ(out.find("JAX says"), std::string::npos);
}
