// derive/toolkits: which toolkit a request names, what `use` and `use --off` set, the
// driver's verdict per toolkit and the install commands, on hand-built toolkits.
#include <gtest/gtest.h>

#include "derive/derive_parts.hpp"
#include "derive/toolkits.hpp"

namespace cd {
namespace {

Toolkit tk(const std::string& root, const std::string& version, bool nvcc = true, std::string origin = "system") {
  Toolkit t;
  t.root = root;
  t.version = version;
  if (nvcc) t.nvcc = root + "/bin/nvcc";
  t.lib_dir = root + "/lib64";
  t.origin = std::move(origin);
  return t;
}

const std::vector<Toolkit> kToolkits = {tk("/usr/local/cuda-12.4", "12.4.1"), tk("/usr/local/cuda-12.8", "12.8.0"),
                                        tk("/usr/local/cuda-11.8", "11.8"), tk("/opt/nvcc-less", "12.9", false),
                                        tk("/opt/conda/envs/x", "12.1", true, "conda:/opt/conda/envs/x")};

std::string root_of(const ToolkitPick& p) { return p.toolkit ? p.toolkit->root : "error: " + p.error; }

TEST(PickToolkit, VersionsMatchByPrefixNewestFirst) {
  EXPECT_EQ(root_of(pick_toolkit(kToolkits, "12", "")), "/usr/local/cuda-12.8");  // 12.9 has no nvcc
  EXPECT_EQ(root_of(pick_toolkit(kToolkits, "12.4", "")), "/usr/local/cuda-12.4");
  EXPECT_EQ(root_of(pick_toolkit(kToolkits, "12.4.1", "")), "/usr/local/cuda-12.4");
  EXPECT_EQ(root_of(pick_toolkit(kToolkits, "11.8", "")), "/usr/local/cuda-11.8");
  EXPECT_EQ(root_of(pick_toolkit(kToolkits, "latest", "")), "/usr/local/cuda-12.8");
  EXPECT_EQ(root_of(pick_toolkit(kToolkits, "torch", "12.1")), "/opt/conda/envs/x");
  EXPECT_EQ(root_of(pick_toolkit(kToolkits, "/usr/local/cuda-11.8/", "")), "/usr/local/cuda-11.8");
  EXPECT_EQ(root_of(pick_toolkit(kToolkits, "/opt/nvcc-less", "")), "/opt/nvcc-less");  // a path may lack nvcc
}

TEST(PickToolkit, MissingAndMalformed) {
  auto missing = pick_toolkit(kToolkits, "12.4.2", "");
  EXPECT_EQ(missing.toolkit, nullptr);
  EXPECT_EQ(missing.missing.text, "12.4.2");
  EXPECT_EQ(missing.error, "CUDA 12.4.2 is not installed");
  for (const char* bad : {"twelve", "12.x", "1.2.3.4", "", "-1", "0", "12..4"}) {
    auto p = pick_toolkit(kToolkits, bad, "");
    EXPECT_EQ(p.toolkit, nullptr) << bad;
    EXPECT_TRUE(p.missing.empty()) << bad;
    EXPECT_NE(p.error.find("unknown toolkit"), std::string::npos) << bad << ": " << p.error;
  }
  EXPECT_NE(pick_toolkit(kToolkits, "torch", "").error.find("no CUDA build of torch"), std::string::npos);
  EXPECT_EQ(pick_toolkit(kToolkits, "torch", "13.0").missing.text, "13.0");
  EXPECT_EQ(pick_toolkit({}, "latest", "").error, "no CUDA toolkit with nvcc is installed");
}

EnvMap env_after(const ShellPlan& plan, EnvMap env) {
  for (const auto& a : plan.vars) {
    if (a.value) env[a.name] = *a.value;
    else env.erase(a.name);
  }
  return env;
}

TEST(PlanUse, DropsEveryToolkitEntryKeepsTheRestInOrder) {
  EnvMap env = {{"PATH", "/usr/local/cuda/bin:/home/u/bin::/usr/local/cuda-12.4/bin:/usr/bin"},
                {"LD_LIBRARY_PATH", "/usr/local/cuda-12.8/lib64:/opt/x/lib:/opt/conda/envs/x/lib"}};
  std::map<std::string, std::string> resolved = {{"/usr/local/cuda/bin", "/usr/local/cuda-12.8/bin"}};
  ShellPlan plan = plan_use(kToolkits, kToolkits[2], env, resolved);
  EnvMap after = env_after(plan, env);
  EXPECT_EQ(after["PATH"], "/usr/local/cuda-11.8/bin:/home/u/bin::/usr/bin");
  EXPECT_EQ(after["LD_LIBRARY_PATH"], "/usr/local/cuda-11.8/lib64:/opt/x/lib:/opt/conda/envs/x/lib");  // the conda env stays
  EXPECT_EQ(after["CUDA_HOME"], "/usr/local/cuda-11.8");
  EXPECT_EQ(after["CUDA_PATH"], "/usr/local/cuda-11.8");
  EXPECT_EQ(after[saved_name("PATH")], env["PATH"]);
  EXPECT_EQ(after[kOrigVars], "PATH LD_LIBRARY_PATH");
  EXPECT_EQ(plan.removed, (std::vector<std::string>{"/usr/local/cuda/bin", "/usr/local/cuda-12.4/bin", "/usr/local/cuda-12.8/lib64"}));
  EXPECT_TRUE(plan.rehash);

  // Idempotent, and a second switch keeps the first one's saved originals.
  EnvMap again = env_after(plan_use(kToolkits, kToolkits[2], after, resolved), after);
  EXPECT_EQ(again, after);
  EnvMap other = env_after(plan_use(kToolkits, kToolkits[0], after, resolved), after);
  EXPECT_EQ(other["PATH"], "/usr/local/cuda-12.4/bin:/home/u/bin::/usr/bin");
  EXPECT_EQ(other[saved_name("PATH")], env["PATH"]);

  // --off: exactly what was there.
  EnvMap off = env_after(plan_off(kToolkits, other, resolved), other);
  EXPECT_EQ(off, env);
}

TEST(PlanUse, UnsetVariablesComeBackUnset) {
  EnvMap env = {{"PATH", "/usr/bin"}};
  EnvMap after = env_after(plan_use(kToolkits, kToolkits[1], env, {}), env);
  EXPECT_EQ(after["LD_LIBRARY_PATH"], "/usr/local/cuda-12.8/lib64");
  EXPECT_EQ(after[kOrigVars], "PATH");
  EXPECT_EQ(env_after(plan_off(kToolkits, after, {}), after), env);
}

TEST(PlanOff, KeepsWhatTheUserChangedSince) {
  EnvMap env = {{"PATH", "/usr/bin"}, {"CUDA_HOME", ""}};
  EnvMap after = env_after(plan_use(kToolkits, kToolkits[1], env, {}), env);
  after["PATH"] = "/new/bin:" + after["PATH"];
  ShellPlan off = plan_off(kToolkits, after, {});
  EnvMap restored = env_after(off, after);
  EXPECT_EQ(restored["PATH"], "/new/bin:/usr/bin");
  EXPECT_EQ(restored["CUDA_HOME"], "");
  EXPECT_EQ(restored.count("LD_LIBRARY_PATH"), 0u);
  EXPECT_EQ(off.note, "PATH changed since `cuda-doctor use`: removed only the entries it added");
  EXPECT_EQ(plan_off(kToolkits, env, {}).vars.size(), 0u);
  EXPECT_NE(plan_off(kToolkits, env, {}).note.find("nothing to undo"), std::string::npos);
}

TEST(PlanUse, NeverDropsSystemPrefixes) {
  std::vector<Toolkit> distro = {tk("/usr", "11.8"), tk("/usr/local/cuda-12.8", "12.8.0")};
  EnvMap env = {{"PATH", "/usr/bin:/bin"}};
  EnvMap after = env_after(plan_use(distro, distro[1], env, {}), env);
  EXPECT_EQ(after["PATH"], "/usr/local/cuda-12.8/bin:/usr/bin:/bin");
}

TEST(ToolkitView, DriverVerdicts) {
  const Kb& kb = Kb::get();
  DriverModel d;
  d.found = true;
  d.version = *Version::parse("535.261.03");
  d.cuda = *Version::parse("12.2");
  Toolkit old = tk("/usr/local/cuda-11.8", "11.8"), minor = tk("/usr/local/cuda-12.8", "12.8"),
          major = tk("/usr/local/cuda-13.0", "13.0.88");
  EXPECT_EQ(toolkit_view(old, d, kb).driver, DriverFit::runs);
  EXPECT_EQ(toolkit_view(minor, d, kb).driver, DriverFit::minor_compat);
  auto v13 = toolkit_view(major, d, kb);
  EXPECT_EQ(v13.driver, DriverFit::too_old);
  EXPECT_EQ(v13.driver_needed.text, "580.65.06");
  EXPECT_EQ(toolkit_view(old, DriverModel{}, kb).driver, DriverFit::unknown);
  auto v118 = toolkit_view(old, d, kb);  // no host_config.h read: the kb row
  EXPECT_EQ(v118.gcc_max, 11);
  EXPECT_GT(v118.sm_max, 80);
}

TEST(InstallCommands, RunfileNeverTheDriver) {
  auto cmds = install_commands(*Version::parse("12.4"), Kb::get(), DistroModel{});
  std::string all;
  for (const auto& c : cmds) all += c + "\n";
  EXPECT_NE(all.find("wget https://developer.download.nvidia.com/compute/cuda/12.4.0/local_installers/cuda_12.4.0_550.54.14_linux.run"),
            std::string::npos) << all;
  EXPECT_NE(all.find("--silent --toolkit --toolkitpath=/usr/local/cuda-12.4"), std::string::npos);
  EXPECT_EQ(all.find("--driver"), std::string::npos);
  EXPECT_NE(all.find("conda install -c nvidia cuda-toolkit=12.4"), std::string::npos);
  auto c13 = install_commands(*Version::parse("13.0"), Kb::get(), DistroModel{});
  EXPECT_NE(std::find(c13.begin(), c13.end(), "pip install 'nvidia-cuda-nvcc==13.0.*'"), c13.end());
  // Unknown distribution: the default row's apt; an unlisted one: no package-manager line at all.
  EXPECT_NE(all.find("sudo apt-get install cuda-toolkit-12-4   # NVIDIA's CUDA repository"), std::string::npos) << all;
  DistroModel unlisted;
  unlisted.unlisted = true;
  auto arch = install_commands(*Version::parse("12.4"), Kb::get(), unlisted);
  EXPECT_TRUE(std::none_of(arch.begin(), arch.end(), [](const std::string& c) { return c.find("cuda-toolkit-12-4") != std::string::npos; }));
  EXPECT_FALSE(arch.empty());  // the runfile, conda and pip remain
}

}  // namespace
}  // namespace cd
