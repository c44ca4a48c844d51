// util/term progress_line: the file name shown on stderr while scanning is escaped and the
// line is cut at a character boundary (issue 12 #7).
#include <gtest/gtest.h>

#include "../injection_checks.hpp"
#include "util/term.hpp"

using cdtest::kHostile;
using cdtest::kHostileShown;

TEST(ProgressLine, FileNameIsEscaped) {
  std::string line = cd::progress_line("scanning", 3, 10, kHostile + ".so", 200);
  EXPECT_EQ(line, "scanning 3/10 " + kHostileShown + ".so");
  EXPECT_TRUE(cdtest::no_injection(line));
  EXPECT_EQ(cd::progress_line("verify", 0, 0, "PTX JIT"), "verify PTX JIT");
}

TEST(ProgressLine, CutsAtACharacterNeverInsideOne) {
  std::string line = cd::progress_line("scanning", 1, 2, "ééééé", 16);  // "scanning 1/2 " is 13 columns
  EXPECT_EQ(line, "scanning 1/2 ééé");
  EXPECT_EQ(cd::display_width(cd::progress_line("x", 1, 2, std::string(300, 'a'))), 100u);
}
