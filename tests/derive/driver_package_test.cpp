// derive/driver.cpp driver_package: which Ubuntu/Debian package installs a driver branch for
// the GPUs at hand, from data/plan.toml [open_kernel_module] — NVIDIA's open kernel modules
// (the -open packages) exist from R515 on (driver 515.43.04 README, "Open Linux Kernel
// Modules") and drive Turing (sm_75) and newer only (open-gpu-kernel-modules README). A V100
// (sm_70) on branch 440 once got "nvidia-driver-440-open", a package that never existed.
#include <gtest/gtest.h>

#include "derive/derive_parts.hpp"
#include "kb/kb.hpp"

namespace cd {
namespace {

TEST(DriverPackage, OpenModulesOnlyFromR515AndForTuringAndNewer) {
  const Kb& kb = Kb::get();
  DriverPackage volta_440 = driver_package(kb, 440, {70, 70});
  EXPECT_EQ(volta_440.name, "nvidia-driver-440");
  EXPECT_FALSE(volta_440.open);
  EXPECT_NE(volta_440.note.find("R515"), std::string::npos) << volta_440.note;
  EXPECT_NE(volta_440.source.find("515.43.04"), std::string::npos) << volta_440.source;

  DriverPackage volta_550 = driver_package(kb, 550, {70});  // the branch has -open, the GPU is too old for it
  EXPECT_EQ(volta_550.name, "nvidia-driver-550");
  EXPECT_NE(volta_550.note.find("sm_70"), std::string::npos) << volta_550.note;
  EXPECT_NE(volta_550.source.find("open-gpu-kernel-modules"), std::string::npos) << volta_550.source;

  DriverPackage turing_470 = driver_package(kb, 470, {75});  // a Turing GPU, but no open modules before 515
  EXPECT_EQ(turing_470.name, "nvidia-driver-470");

  DriverPackage mixed = driver_package(kb, 580, {90, 61});  // one Pascal GPU keeps the machine on the proprietary module
  EXPECT_EQ(mixed.name, "nvidia-driver-580");
  EXPECT_NE(mixed.note.find("sm_61"), std::string::npos) << mixed.note;

  DriverPackage hopper = driver_package(kb, 580, {90});
  EXPECT_EQ(hopper.name, "nvidia-driver-580-open");
  EXPECT_TRUE(hopper.open);
  EXPECT_TRUE(hopper.note.empty());
  EXPECT_EQ(driver_package(kb, 580, {}).name, "nvidia-driver-580-open");  // no GPU known: the branch decides
  EXPECT_EQ(driver_package(kb, 535, {86}, "nvidia-dkms").name, "nvidia-dkms-535-open");
  EXPECT_EQ(driver_package(kb, 418, {}, "nvidia-dkms").name, "nvidia-dkms-418");

  // A host nothing is known of gets the default row's (Ubuntu's) command, saying whose it is.
  DistroModel unknown;
  EXPECT_EQ(driver_install_commands(kb, unknown, "x86_64", 440, volta_440),
            std::vector<std::string>{"sudo apt install nvidia-driver-440 && sudo reboot   # Ubuntu; " + volta_440.note});
  EXPECT_EQ(driver_install_commands(kb, unknown, "x86_64", 580, hopper, "on the host"),
            std::vector<std::string>{"sudo apt install nvidia-driver-580-open && sudo reboot   # Ubuntu; on the host"});
}

}  // namespace
}  // namespace cd
