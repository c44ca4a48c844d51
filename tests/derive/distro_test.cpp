// derive/distro.cpp: which data/plan.toml [[driver_install]] row os-release picks and the
// commands it gives — Debian's own archive where it carries the branch (bookworm: R535,
// packages.debian.org), NVIDIA's repository for a newer one, the repository's sbsa directory
// on aarch64, the default row in a container (the os-release there is the image's), and
// snapshots recorded before the ID fields matched by PRETTY_NAME.
#include <gtest/gtest.h>

#include "derive/derive_parts.hpp"
#include "kb/kb.hpp"

namespace cd {
namespace {

Facts debian12() {
  Facts f;
  f.host.os = "Debian GNU/Linux 12 (bookworm)";
  f.host.os_id = "debian", f.host.os_version = "12", f.host.os_codename = "bookworm";
  f.host.arch = "x86_64";
  return f;
}

std::string joined(const std::vector<std::string>& lines) {
  std::string s;
  for (const auto& l : lines) s += l + "\n";
  return s;
}

TEST(Distro, DebianArchiveWhenItCarriesTheBranchElseNvidiasRepository) {
  const Kb& kb = Kb::get();
  Facts f = debian12();
  DistroModel d = derive_distro(f, kb);
  ASSERT_NE(d.row, nullptr);
  EXPECT_TRUE(d.host_known);
  EXPECT_EQ(d.label, "Debian 12");
  EXPECT_EQ(d.pm(), "apt");
  // R535 is bookworm's own: the Debian way, with the components it needs named.
  auto archive = driver_install_commands(kb, d, "x86_64", 535, driver_package(kb, 535, {75}));
  ASSERT_EQ(archive.size(), 1u);
  EXPECT_EQ(archive[0].rfind("sudo apt install nvidia-driver firmware-misc-nonfree && sudo reboot   # Debian's own R535", 0), 0u) << archive[0];
  EXPECT_NE(archive[0].find("contrib non-free non-free-firmware"), std::string::npos);
  // R580 is not in bookworm: NVIDIA's repository, the open or the proprietary module's package.
  auto repo = driver_install_commands(kb, d, "x86_64", 580, driver_package(kb, 580, {90}));
  EXPECT_EQ(joined(repo),
            "wget https://developer.download.nvidia.com/compute/cuda/repos/debian12/x86_64/cuda-keyring_1.1-1_all.deb\n"
            "sudo dpkg -i cuda-keyring_1.1-1_all.deb && sudo apt update\n"
            "sudo apt install nvidia-open-580 && sudo reboot\n");
  DriverPackage volta = driver_package(kb, 580, {70});
  EXPECT_EQ(driver_install_commands(kb, d, "aarch64", 580, volta).back(),
            "sudo apt install cuda-drivers-580 && sudo reboot   # " + volta.note);
  EXPECT_NE(driver_install_commands(kb, d, "aarch64", 580, volta)[0].find("/debian12/sbsa/"), std::string::npos);
}

TEST(Distro, ContainerUsesTheDefaultRowAndOldSnapshotsMatchByPrettyName) {
  const Kb& kb = Kb::get();
  Facts f = debian12();
  f.platform.container = "docker";
  DistroModel d = derive_distro(f, kb);
  EXPECT_FALSE(d.host_known);  // the image is Debian; the host's driver is not installed by its apt
  EXPECT_EQ(driver_install_commands(kb, d, "x86_64", 580, driver_package(kb, 580, {90})),
            std::vector<std::string>{"sudo apt install nvidia-driver-580-open && sudo reboot   # Ubuntu"});
  EXPECT_EQ(d.pm(), "apt");

  Facts old;  // recorded before os_id existed
  old.host.os = "Debian GNU/Linux 12 (bookworm)";
  DistroModel o = derive_distro(old, kb);
  EXPECT_EQ(o.label, "Debian 12");
  EXPECT_EQ(o.major, 12);
  EXPECT_EQ(o.codename, "bookworm");
  old.host.os = "Rocky Linux 9.4 (Blue Onyx)";
  o = derive_distro(old, kb);
  EXPECT_EQ(o.pm(), "dnf");
  EXPECT_EQ(o.major, 9);
  old.host.os = "Gentoo Linux";
  o = derive_distro(old, kb);
  EXPECT_TRUE(o.unlisted);
  EXPECT_EQ(install_row(kb, o), nullptr);
}

TEST(Distro, IdLikeFallsBackInOrder) {
  const Kb& kb = Kb::get();
  Facts f;
  f.host.os_id = "almalinux-derivative", f.host.os_like = "rhel centos fedora", f.host.os_version = "9.4";
  DistroModel d = derive_distro(f, kb);
  ASSERT_NE(d.row, nullptr);
  EXPECT_EQ(d.row->family, "RHEL");  // the first ID_LIKE word a row answers to, not Fedora
  EXPECT_EQ(d.label, "RHEL 9.4");
  f.host.os_id = "linuxmint", f.host.os_like = "ubuntu debian";
  EXPECT_EQ(derive_distro(f, kb).row->family, "Ubuntu");
  // os-release belongs to someone else: only a version number reaches a fix line.
  f.host.os_version = "24.04\x1b]0;pwned\x07";
  DistroModel hostile = derive_distro(f, kb);
  EXPECT_EQ(hostile.label, "Ubuntu");
  EXPECT_EQ(hostile.major, 0);
}

}  // namespace
}  // namespace cd
