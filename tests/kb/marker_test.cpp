// PEP 508 markers decide which Requires-Dist lines apply; a wrong answer here makes
// framework.pins_conflict invent missing wheels (seen with cuda-toolkit's extras on the H200).
#include <gtest/gtest.h>

#include "kb/ecosystem.hpp"

using cd::marker_applies;

TEST(Marker, ExtrasInsideOrClausesNeedTheExtra) {
  const std::string m = "(sys_platform == 'linux' or sys_platform == 'win32') and extra == 'all'";
  EXPECT_FALSE(marker_applies(m, "x86_64", {"cublas", "cudart"}));
  EXPECT_TRUE(marker_applies(m, "x86_64", {"all"}));
}

TEST(Marker, PlatformClauses) {
  EXPECT_TRUE(marker_applies("platform_system == \"Linux\"", "x86_64", {}));
  EXPECT_FALSE(marker_applies("platform_system == \"Windows\"", "x86_64", {}));
  EXPECT_TRUE(marker_applies("platform_system == 'Linux' and platform_machine == 'x86_64'", "x86_64", {}));
  EXPECT_FALSE(marker_applies("platform_system == 'Linux' and platform_machine == 'x86_64'", "aarch64", {}));
  EXPECT_TRUE(marker_applies("sys_platform != 'win32'", "x86_64", {}));
  EXPECT_TRUE(marker_applies("sys_platform == 'darwin' or platform_machine == 'x86_64'", "x86_64", {}));
}

TEST(Marker, UnknownVariablesNeverHideARequirement) {
  EXPECT_TRUE(marker_applies("python_version >= \"3.9\"", "x86_64", {}));
  EXPECT_TRUE(marker_applies("python_version < '3.13' and platform_system == 'Linux'", "x86_64", {}));
  EXPECT_TRUE(marker_applies("", "x86_64", {}));
}

// Found by check_inputs_fuzz: a marker ending where an operator should be read past the
// end; deep nesting must not exhaust the stack.
TEST(Marker, TruncatedAndHostileMarkersAreSafe) {
  EXPECT_NO_THROW(cd::marker_applies("a", "x86_64", {}));
  EXPECT_NO_THROW(cd::marker_applies("platform_machine ! ", "x86_64", {}));
  EXPECT_TRUE(cd::marker_applies(std::string(100000, '('), "x86_64", {}));
  EXPECT_FALSE(cd::marker_applies("((platform_machine == \"aarch64\"))", "x86_64", {}));
}
