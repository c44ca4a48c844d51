// probe_binaries as check runs it: the site-packages of each environment scanned with check's
// question (the local GPUs) set, and the note `check -v` shows on what was read only partly.
// The real cuFFT of this machine's toolkit: its kernels sit in its own table (.ldata).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "binary/verdict.hpp"
#include "kb/kb.hpp"
#include "probe/probe.hpp"

namespace cd {
namespace {

namespace fs = std::filesystem;

TEST(ProbeBinaries, NoteSaysWhichKernelTablesWereReadOnlyPartly) {
  const std::string cufft = "/usr/local/cuda/lib64/libcufft.so.12";
  if (access(cufft.c_str(), R_OK) != 0) GTEST_SKIP() << "no " << cufft;
  fs::path site = fs::path(testing::TempDir()) / ("binaries_probe_" + std::to_string(getpid())) / "site-packages";
  fs::remove_all(site.parent_path());
  fs::create_directories(site / "nvidia" / "cufft" / "lib");
  fs::create_symlink(cufft, site / "nvidia" / "cufft" / "lib" / "libcufft.so.12");

  Facts facts;
  PythonEnv env;
  env.prefix = site.parent_path().string();
  env.site_packages = {site.string()};
  facts.pythons.push_back(env);
  ProbeOptions o;
  o.scan_focus = std::make_shared<ScanFocus>();
  const ArchRules& rules = arch_rules(Kb::get());
  o.scan_focus->focus.set({{90}, native_on_all({{90, "NVIDIA H200"}}, {13000, "580.159.04"}, rules)});
  probe_binaries(facts, o);

  ASSERT_EQ(facts.binaries.size(), 1u);
  EXPECT_TRUE(facts.binaries[0].dispatch_cut);
  std::string note;
  for (const auto& n : facts.notes)
    if (n.message.find("read only as far as") != std::string::npos) note = n.message;
  EXPECT_NE(note.find("1 file was read only as far as its verdicts for sm_90 need"), std::string::npos) << note;
  EXPECT_NE(note.find("1 kernel table only until a container served it"), std::string::npos) << note;

  // Without the question (scan, or check before the driver answered) nothing is cut: no note.
  Facts all = Facts{};
  all.pythons = facts.pythons;
  probe_binaries(all, ProbeOptions{});
  for (const auto& n : all.notes) EXPECT_EQ(n.message.find("read only as far as"), std::string::npos) << n.message;
  fs::remove_all(site.parent_path());
}

}  // namespace
}  // namespace cd
