// check on --root trees that hold only a real distribution's /etc/os-release
// (tests/fixtures/os-release): the probe reads ID, ID_LIKE, VERSION_ID and VERSION_CODENAME,
// and driver.missing's fix is that distribution's way to install the driver — NVIDIA's CUDA
// repository on Debian (its own archive's R535 is older than the branch asked for), dnf module
// streams on RHEL-likes, zypper on SUSE, ubuntu-drivers on Ubuntu and its derivatives, and
// NVIDIA's guide where no command is recorded rather than another distribution's command.
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cli/cli_helpers.hpp"

namespace {

using cdtest::doctor;

std::string fixture(const std::string& name) {
  std::ifstream in(std::string(CD_FIXTURES) + "/os-release/" + name);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

struct Checked {
  nlohmann::json host;
  std::string fix;  // driver.missing's fix lines
};

Checked check_root_with(const std::string& os_release) {
  std::string root = cdtest::temp_dir("distro-" + os_release);
  cdtest::write_file(root + "/etc/os-release", fixture(os_release));
  auto r = doctor({"check", "--json", "--no-scan", "--root", root});
  EXPECT_TRUE(r.code == 1 || r.code == 2) << r.err;
  auto j = nlohmann::json::parse(r.out);
  Checked c{j["facts"]["host"], ""};
  for (const auto& f : j["findings"])
    if (f["id"] == "driver.missing")
      for (const auto& line : f["fix"]) c.fix += line.get<std::string>() + "\n";
  return c;
}

bool has(const std::string& text, const std::string& pattern) { return std::regex_search(text, std::regex(pattern)); }

std::string repo_arch(const Checked& c) { return c.host["arch"] == "aarch64" ? "sbsa" : "x86_64"; }

TEST(DistroCli, DebianGetsNvidiasRepositoryForABranchItsArchiveLacks) {
  Checked c = check_root_with("debian-12");
  EXPECT_EQ(c.host["os_id"], "debian");
  EXPECT_EQ(c.host["os_version"], "12");
  EXPECT_EQ(c.host["os_codename"], "bookworm");
  EXPECT_EQ(c.host["os"], "Debian GNU/Linux 12 (bookworm)");
  EXPECT_NE(c.fix.find("https://developer.download.nvidia.com/compute/cuda/repos/debian12/" + repo_arch(c) +
                       "/cuda-keyring_1.1-1_all.deb"), std::string::npos) << c.fix;
  EXPECT_TRUE(has(c.fix, "sudo apt install nvidia-open-5[6-9][0-9] && sudo reboot")) << c.fix;
  EXPECT_FALSE(has(c.fix, "ubuntu-drivers|nvidia-driver-[0-9]")) << c.fix;  // Ubuntu's tool and package names
}

TEST(DistroCli, UbuntuAndItsDerivativesGetUbuntuDrivers) {
  for (const char* os : {"ubuntu-24.04", "pop-22.04"}) {
    Checked c = check_root_with(os);
    EXPECT_TRUE(has(c.fix, "sudo ubuntu-drivers install   # or: sudo apt install nvidia-driver-[0-9]+-open")) << os << "\n" << c.fix;
  }
  EXPECT_EQ(check_root_with("pop-22.04").host["os_like"], "ubuntu debian");
}

TEST(DistroCli, RhelLikesGetDnfModuleStreamsFromTheirRepository) {
  Checked c = check_root_with("rocky-9.4");
  EXPECT_EQ(c.host["os_id"], "rocky");  // quoted in the file
  EXPECT_NE(c.fix.find("sudo dnf config-manager --add-repo https://developer.download.nvidia.com/compute/cuda/repos/rhel9/" +
                       repo_arch(c) + "/cuda-rhel9.repo"), std::string::npos) << c.fix;
  EXPECT_TRUE(has(c.fix, "sudo dnf module install nvidia-driver:[0-9]+-open && sudo reboot")) << c.fix;
}

TEST(DistroCli, SuseGetsZypper) {
  Checked c = check_root_with("opensuse-leap-15.6");
  EXPECT_TRUE(has(c.fix, "sudo zypper install nvidia-open-[0-9]+ && sudo reboot")) << c.fix;
}

TEST(DistroCli, NoRecordedCommandMeansNvidiasGuideNotAnotherDistributionsCommand) {
  for (const char* os : {"arch", "amzn-2023"}) {
    Checked c = check_root_with(os);
    EXPECT_NE(c.fix.find("https://docs.nvidia.com/datacenter/tesla/driver-installation-guide/"), std::string::npos) << os << "\n" << c.fix;
    EXPECT_FALSE(has(c.fix, "apt install|dnf module|ubuntu-drivers")) << os << "\n" << c.fix;
    // Only comments then: the one-screen report must not offer `nvidia-smi` as if it were the fix.
    EXPECT_EQ(c.fix.find("nvidia-smi"), std::string::npos) << os << "\n" << c.fix;
  }
}

}  // namespace
