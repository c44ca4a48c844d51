#include <gtest/gtest.h>

#include "explain/clean.hpp"

namespace cd {
namespace {

TEST(Clean, StripsCsiOscAndTwoByteEscapes) {
  std::string out;
  strip_ansi("\x1b[1;31mERROR\x1b[0m: x \x1b]0;title\x07y \x1b" "cz", out);
  EXPECT_EQ(out, "ERROR: x y z");
  strip_ansi("\x1b]8;;http://a\x1b\\link\x1b]8;;\x1b\\", out);
  EXPECT_EQ(out, "link");
  strip_ansi("dangling \x1b[", out);
  EXPECT_EQ(out, "dangling ");
}

TEST(Clean, SplitsRankPrefixes) {
  std::string_view rank;
  EXPECT_EQ(split_rank_prefix("[rank12]: RuntimeError: x", rank), "RuntimeError: x");
  EXPECT_EQ(rank, "12");
  EXPECT_EQ(split_rank_prefix("[default3]:NCCL WARN", rank), "NCCL WARN");
  EXPECT_EQ(rank, "3");
  EXPECT_EQ(split_rank_prefix("[1,7]<stderr>:ncclUnhandledCudaError", rank), "ncclUnhandledCudaError");
  EXPECT_EQ(rank, "7");
  EXPECT_EQ(split_rank_prefix("[W1130 10:00:00] not a rank", rank), "[W1130 10:00:00] not a rank");
  EXPECT_TRUE(rank.empty());
  EXPECT_EQ(split_rank_prefix("[rank]: no number", rank), "[rank]: no number");
}

TEST(Clean, CleanLineCombinesBoth) {
  std::string storage;
  CleanLine c = clean_line("\x1b[31m[rank2]: CUDA error\x1b[0m", storage);
  // The escape comes first, so the prefix is found after stripping.
  EXPECT_EQ(c.text, "CUDA error");
  EXPECT_EQ(c.rank, "2");
}

TEST(Clean, TracebackFrameFile) {
  EXPECT_EQ(traceback_frame_file("  File \"/x/site-packages/torch/a.py\", line 3, in f"), "/x/site-packages/torch/a.py");
  EXPECT_EQ(traceback_frame_file("File \"<string>\", line 1"), "<string>");
  EXPECT_EQ(traceback_frame_file("  Filed \"x\""), "");
  EXPECT_EQ(traceback_frame_file("  File \"unterminated"), "");
}

TEST(Clean, Utf8IsRepairedAndBounded) {
  EXPECT_EQ(to_valid_utf8("ok \xff\xfe end", 100), "ok ?? end");
  EXPECT_EQ(to_valid_utf8("caf\xc3\xa9", 100), "caf\xc3\xa9");
  EXPECT_EQ(to_valid_utf8("\xc0\xaf", 100), "??");          // overlong '/'
  EXPECT_EQ(to_valid_utf8("\xed\xa0\x80", 100), "???");     // UTF-16 surrogate
  EXPECT_EQ(to_valid_utf8("\xe2\x82", 100), "??");          // truncated sequence
  EXPECT_EQ(to_valid_utf8("a\x01z", 100), "a z");           // control bytes
  EXPECT_EQ(to_valid_utf8("abcdef", 3), "abc");
  EXPECT_EQ(to_valid_utf8("ab\xc3\xa9", 3), "ab");          // never splits a character
}

}  // namespace
}  // namespace cd
