// Issue 12 #7 in `explain`: a hostile log file name, log line or command argument is escaped
// in the header and findings (plain, --no-color, colours, --markdown) and on stderr.
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>

#include "../injection_checks.hpp"

using cdtest::kHostile;
using cdtest::kHostileShown;
using cdtest::no_injection;

TEST(ExplainEscape, HostileLogNameAndLineAreEscapedInEveryMode) {
  std::string dir = std::string(CD_BUILD_DIR) + "/escape-explain-" + std::to_string(getpid());
  mkdir(dir.c_str(), 0755);
  std::string log = dir + "/" + kHostile + ".log";
  std::ofstream(log) << "RuntimeError: CUDA error: no kernel image is available for execution on the device " << kHostile
                     << "\n";
  for (const auto& mode : cdtest::text_modes()) {
    std::vector<std::string> args{"explain", log, "--no-probe"};
    args.insert(args.end(), mode.args.begin(), mode.args.end());
    cdtest::Output r = cdtest::run_doctor(args, mode.env);
    EXPECT_EQ(r.code, 2) << mode.name << r.out << r.err;
    EXPECT_TRUE(no_injection(r.out)) << mode.name;
    EXPECT_NE(r.out.find(kHostileShown + ".log"), std::string::npos) << mode.name << "\n" << r.out;
  }
  unlink(log.c_str());
  rmdir(dir.c_str());
}

TEST(ExplainEscape, HostileCommandIsEscapedInTheHeaderAndOnStderr) {
  // sh -c SCRIPT NAME: the hostile word is $0, shown in the header as part of the command.
  cdtest::Output r = cdtest::run_doctor(
      {"explain", "--no-probe", "--", "sh", "-c", "echo 'RuntimeError: CUDA error: out of memory'; exit 1", kHostile},
      {{"CLICOLOR_FORCE", "1"}});
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  EXPECT_TRUE(no_injection(r.out));
  EXPECT_NE(r.out.find(kHostileShown), std::string::npos) << r.out;
  cdtest::Output missing = cdtest::run_doctor({"explain", "--", "/nonexistent/" + kHostile});
  EXPECT_EQ(missing.code, 3);
  EXPECT_TRUE(no_injection(missing.err)) << missing.err;
  EXPECT_NE(missing.err.find(kHostileShown), std::string::npos) << missing.err;
}
