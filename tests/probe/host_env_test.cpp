// What probe_env keeps of the environment (issue 12 #2): an exact allowlist of the
// variables a diagnosis uses, with credentials redacted, because `snapshot` and
// `check --json` write files that users send to others.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "probe/probe.hpp"
#include "probe/python_packages.hpp"

namespace cd {
namespace {

Facts env_facts(std::map<std::string, std::string> env) {
  ProbeOptions o;
  o.env = std::move(env);
  Facts f;
  probe_env(f, o);
  return f;
}

TEST(ProbeEnv, SecretsUnderFormerPrefixesAreNotKept) {
  Facts f = env_facts({{"NVIDIA_API_KEY", "nvapi-abc123"},
                       {"VLLM_API_KEY", "sk-vllm"},
                       {"TF_TOKEN_app_terraform_io", "tf-token"},
                       {"TF_VAR_db_password", "hunter2"},
                       {"NV_SECRET", "x"},
                       {"CONDA_CHANNEL_TOKEN", "tok"},
                       {"HF_TOKEN", "hf_abc"},
                       {"AWS_SECRET_ACCESS_KEY", "aws"}});
  EXPECT_TRUE(f.env.empty()) << "kept " << f.env.begin()->first;
}

TEST(ProbeEnv, KeepsWhatTheRulesRead) {
  Facts f = env_facts({{"CUDA_VISIBLE_DEVICES", "0,1"},
                       {"CUDA_DEVICE_ORDER", "PCI_BUS_ID"},
                       {"NVIDIA_VISIBLE_DEVICES", "all"},
                       {"NVIDIA_DRIVER_CAPABILITIES", "compute,utility"},
                       {"NVIDIA_REQUIRE_CUDA", "cuda>=13.0"},
                       {"LD_LIBRARY_PATH", "/usr/local/cuda/lib64"},
                       {"PATH", "/usr/bin"},
                       {"TORCH_CUDA_ARCH_LIST", "9.0"},
                       {"JAX_PLATFORMS", "cuda"},
                       {"NCCL_SOCKET_IFNAME", "eth0"},
                       {"CONDA_PREFIX", "/opt/conda"},
                       {"SHELL", "/bin/bash"}});
  EXPECT_EQ(f.env.size(), 11u);
  EXPECT_EQ(f.env.at("CUDA_VISIBLE_DEVICES"), "0,1");
  EXPECT_EQ(f.env.at("NCCL_SOCKET_IFNAME"), "eth0");
  EXPECT_EQ(f.env.count("SHELL"), 0u);
}

TEST(ProbeEnv, RedactsCredentialsInKeptVariables) {
  Facts f = env_facts({{"CUDA_DOCTOR_API_TOKEN", "abc"},  // CUDA_ family, secret name
                       {"NCCL_IB_PKEY", "0x8001"},
                       {"CONDARC", "https://user:pa55@conda.example.com/t/xy-1234/main"},
                       {"PATH", "/home/t/bin:/usr/bin"}});
  EXPECT_EQ(f.env.at("CUDA_DOCTOR_API_TOKEN"), "<redacted>");
  EXPECT_EQ(f.env.at("NCCL_IB_PKEY"), "<redacted>");
  EXPECT_EQ(f.env.at("CONDARC"), "https://<redacted>@conda.example.com/t/<redacted>/main");
  EXPECT_EQ(f.env.at("PATH"), "/home/t/bin:/usr/bin");  // "/t/" outside a URL is a path
}

TEST(ProbeEnv, RequiresDistDirectReferencesLoseTheirCredentials) {
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / ("cd_redact_" + std::to_string(::getpid()));
  fs::create_directories(dir / "sp/vllm-0.11.0.dist-info");
  std::ofstream(dir / "sp/vllm-0.11.0.dist-info/METADATA")
      << "Metadata-Version: 2.1\nName: vllm\nVersion: 0.11.0\n"
         "Requires-Dist: torch @ https://deploy:s3cret@pypi.example.com/torch-2.9.0.whl\n\n";
  auto pkgs = scan_site_packages(Root(dir.string()), "/sp");
  fs::remove_all(dir);
  ASSERT_EQ(pkgs.size(), 1u);
  ASSERT_EQ(pkgs[0].requires_dist.size(), 1u);
  EXPECT_EQ(pkgs[0].requires_dist[0], "torch @ https://<redacted>@pypi.example.com/torch-2.9.0.whl");
}

}  // namespace
}  // namespace cd
