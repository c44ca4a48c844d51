// Issue 12 #7 in `scan`: hostile file and directory names, GPU names, driver versions and
// notes are escaped in the text report (plain, --no-color, colours, --markdown) and on stderr.
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>

#include "../injection_checks.hpp"
#include "report/scan_report.hpp"

using cdtest::kHostile;
using cdtest::kHostileShown;
using cdtest::no_injection;

namespace {

// DIR/<hostile>/<hostile>.ptx (a valid PTX file: one line of the report) and
// DIR/<hostile>/bad.ptx (malformed: a note naming its path).
std::string hostile_tree() {
  std::string d = std::string(CD_BUILD_DIR) + "/escape-scan-" + std::to_string(getpid());
  std::system(("rm -rf '" + d + "'").c_str());
  mkdir(d.c_str(), 0755);
  std::string sub = d + "/" + kHostile;
  mkdir(sub.c_str(), 0755);
  std::ofstream(sub + "/" + kHostile + ".ptx") << ".version 9.0\n.target sm_90\n.visible .entry k()\n{\n ret;\n}\n";
  std::ofstream(sub + "/bad.ptx") << ".version 9.x\n.target sm_90\n";
  return d;
}

}  // namespace

TEST(ScanEscape, HostileNamesAreEscapedInEveryTextMode) {
  std::string dir = hostile_tree();
  for (const auto& mode : cdtest::text_modes()) {
    std::vector<std::string> args{"scan", dir, "--gpu", "H100", "-v"};
    args.insert(args.end(), mode.args.begin(), mode.args.end());
    cdtest::Output r = cdtest::run_doctor(args, mode.env);
    EXPECT_EQ(r.code, 0) << mode.name << r.err;
    EXPECT_TRUE(no_injection(r.out)) << mode.name;
    EXPECT_NE(r.out.find(kHostileShown + ".ptx"), std::string::npos) << mode.name << "\n" << r.out;
    EXPECT_NE(r.out.find("malformed PTX in " + dir + "/" + kHostileShown + "/bad.ptx"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find(dir + "/" + kHostileShown), std::string::npos) << mode.name << "\n" << r.out;  // the heading
  }
  // Named directly, and a missing hostile path: the stderr line is escaped too.
  cdtest::Output one = cdtest::run_doctor({"scan", "--gpu=H100", dir + "/" + kHostile + "/" + kHostile + ".ptx"});
  EXPECT_EQ(one.code, 0) << one.err;
  EXPECT_TRUE(no_injection(one.out));
  cdtest::Output missing = cdtest::run_doctor({"scan", dir + "/" + kHostile + "/nope", "--gpu", "H100"});
  EXPECT_EQ(missing.code, 3);
  EXPECT_TRUE(no_injection(missing.err)) << missing.err;
  EXPECT_NE(missing.err.find(kHostileShown + "/nope"), std::string::npos) << missing.err;
  std::system(("rm -rf '" + dir + "'").c_str());
}

// Facts that reach the scan report from elsewhere: the live GPU's name, the driver version,
// a package name, a binary's error and notes, the run's notes.
TEST(ScanEscape, RendererEscapesEveryInputString) {
  cd::ScanReport r;
  r.targets.gpus = {{90, kHostile}};
  r.targets.gpu_source = "this machine";
  r.targets.driver = {13000, kHostile};
  r.targets.driver_source = "this machine";
  r.notes = {kHostile};
  cd::BinaryScan unreadable;
  unreadable.path = "/x/" + kHostile + ".so";
  unreadable.error = kHostile;
  cd::BinaryScan listed;
  listed.path = "/y/" + kHostile + ".so";
  listed.package = kHostile;
  listed.format = kHostile;
  listed.containers = 1;
  listed.notes = {kHostile};
  r.binaries = {unreadable, listed};
  r.verdicts = {{}, {}};
  for (bool colours : {false, true}) {
    cd::ReportOptions o;
    o.style = cd::Style(colours);
    o.verbose = 1;
    std::string out = cd::render_scan_text(r, {}, o);
    EXPECT_TRUE(no_injection(out)) << colours;
    EXPECT_NE(out.find(kHostileShown + " (CUDA 13.0)"), std::string::npos) << out;
    EXPECT_NE(out.find("note: " + kHostileShown), std::string::npos) << out;
  }
}
