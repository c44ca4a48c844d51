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

namespace cd {
namespace {

TEST(Clean, TypographicAndFullWidthPunctuationBecomesAscii) {
  std::string out;
  ASSERT_TRUE(normalize_punctuation("NVIDIA-SMI has failed because it couldn\xe2\x80\x98t communicate", out));
  EXPECT_EQ(out, "NVIDIA-SMI has failed because it couldn't communicate");
  ASSERT_TRUE(normalize_punctuation("cc1plus: Fatal error\xef\xbc\x9a cuda_runtime.h\xef\xbc\x9aNo such file", out));
  EXPECT_EQ(out, "cc1plus: Fatal error: cuda_runtime.h:No such file");
  // Other multi-byte text (a progress bar, CJK) is left alone.
  EXPECT_FALSE(normalize_punctuation("100%|\xe2\x96\x88\xe2\x96\x88| 4/4 \xe5\xb7\xb2\xe6\x94\xbe\xe5\xbc\x83", out));
  EXPECT_FALSE(normalize_punctuation("plain ascii", out));
  // A lead byte at the very end is kept as it is.
  ASSERT_TRUE(normalize_punctuation("a\xc2\xa0" "b\xe2", out));
  EXPECT_EQ(out, "a b\xe2");
  std::string storage;
  EXPECT_EQ(clean_line("[rank1]: it couldn\xe2\x80\x99t", storage).text, "it couldn't");
}

TEST(Clean, ContinuationLines) {
  EXPECT_EQ(continuation_of("CMake Error at CMakeLists.txt:3 (project):", "  No CMAKE_CUDA_COMPILER could be found.", 0),
            Continuation::spaced);
  EXPECT_EQ(continuation_of("[ 1843.308145] NVRM: The NVIDIA GPU 0000:b3:00.0",
                            "               NVRM: (PCI ID: 10de:26b5) installed in this system has", 0),
            Continuation::spaced);
  EXPECT_EQ(continuation_text("               NVRM: fallen off the bus", "[ 1.0] NVRM: x"), "fallen off the bus");
  // Traceback frames and their source lines are not one message.
  EXPECT_EQ(continuation_of("Traceback (most recent call last):", "  File \"a.py\", line 1, in <module>", 0),
            Continuation::none);
  EXPECT_EQ(continuation_of("  File \"a.py\", line 1, in <module>", "    main()", 0), Continuation::none);
  // A terminal wrap: cut at a common width, or at the width of the line before.
  std::string w136(136, 'x'), w70(70, 'y');
  EXPECT_EQ(continuation_of(w136, "tion: cuda >= 9.0", 10), Continuation::glued);
  EXPECT_EQ(continuation_of(w70, "next", 70), Continuation::glued);
  EXPECT_EQ(continuation_of(w70, "next", 12), Continuation::none);
  // Records of equal length are not a wrap unless the cut falls inside a word.
  std::string nccl = "gpu-node:4242:4301 [1] NCCL INFO comm 0x55d1c0 rank 1 nRanks 8 nNodes 1 localRanks 8 localRank 1 MNNVL 0";
  EXPECT_EQ(continuation_of(nccl, nccl, nccl.size()), Continuation::none);
  EXPECT_EQ(continuation_of(w136, "INFO next record", 136), Continuation::none);
  EXPECT_EQ(continuation_of(std::string(135, 'x') + " ", "of memory while trying to allocate", 136), Continuation::glued);
  EXPECT_EQ(continuation_of("short line", "next line", 10), Continuation::none);
  EXPECT_EQ(continuation_of("", "  indented", 0), Continuation::none);
}

}  // namespace
}  // namespace cd

namespace cd {
namespace {

TEST(Clean, AggregatorPrefixesAreSplitOff) {
  std::string_view source;
  EXPECT_EQ(split_aggregator_prefix("vllm-1  | ERROR 11-18 engine.py:366] boom", source), "ERROR 11-18 engine.py:366] boom");
  EXPECT_EQ(source, "vllm-1");
  EXPECT_EQ(split_aggregator_prefix("Oct 04 13:19:39 llm sd-webui-forge-start[394]: NVIDIA GeForce RTX 5090", source),
            "NVIDIA GeForce RTX 5090");
  EXPECT_EQ(source, "sd-webui-forge-start[394]:");
  EXPECT_EQ(split_aggregator_prefix("Apr  9 19:24:11 EVE kernel: NVRM: Xid (PCI:0000:01:00): 79", source),
            "NVRM: Xid (PCI:0000:01:00): 79");
  EXPECT_EQ(split_aggregator_prefix("kernel: NVRM: Xid (PCI:0000:dc:00): 45", source), "NVRM: Xid (PCI:0000:dc:00): 45");
  EXPECT_EQ(source, "kernel:");  // the same unit as in a journald line
  // Not prefixes: a table row, a progress bar, a plain record, a line too short for syslog.
  for (std::string_view line : {"|   0  Tesla K80   Off  |", "Epoch 3:  5%|###  | 5/100", "Loading weights: 100%|####|",
                                "INFO 2026-12-02 10:00:00 trainer.py:1] x", "2024-04-27 10:13:05 | ERROR | stderr |", "Oct 04"}) {
    EXPECT_EQ(split_aggregator_prefix(line, source), line) << line;
    EXPECT_TRUE(source.empty()) << line;
  }
}

}  // namespace
}  // namespace cd
