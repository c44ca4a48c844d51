// The streaming scanner: line handling, cleaning, limits and hostile input.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <utility>

#include "explain_helpers.hpp"

namespace cd {
namespace {

using test::kb_matcher;

const std::string kOom = "RuntimeError: CUDA error: out of memory";
const std::string k209 = "RuntimeError: CUDA error: no kernel image is available for execution on the device";

TEST(Scanner, FindsSignatureWithLineAndRank) {
  LogFacts f = scan_text("ok\nok\n[rank3]: " + k209 + "\n", kb_matcher());
  ASSERT_EQ(f.events.size(), 1u);
  EXPECT_EQ(f.events[0].id, "arch.no_kernel_image");
  EXPECT_EQ(f.events[0].line, 3u);
  EXPECT_EQ(f.events[0].rank, "3");
  EXPECT_EQ(f.lines, 3u);
  EXPECT_EQ(f.ranks, std::vector<std::string>{"3"});
}

TEST(Scanner, ChunkBoundariesDoNotMatter) {
  std::string log = "a\r\n\x1b[31m" + k209 + "\x1b[0m\r\nb\n" + kOom + "\nlast line without newline " + kOom;
  LogFacts whole = scan_text(log, kb_matcher());
  LogScanner s(kb_matcher());
  for (char c : log) s.feed(std::string_view(&c, 1));
  s.finish();
  const LogFacts& bytes = s.facts();
  ASSERT_EQ(whole.events.size(), bytes.events.size());
  for (size_t i = 0; i < whole.events.size(); ++i) {
    EXPECT_EQ(whole.events[i].signature, bytes.events[i].signature);
    EXPECT_EQ(whole.events[i].line, bytes.events[i].line);
    EXPECT_EQ(whole.events[i].text, bytes.events[i].text);
  }
  EXPECT_EQ(whole.lines, 5u);
  EXPECT_EQ(bytes.bytes, log.size());
}

TEST(Scanner, CrlfAndAnsiAreCleaned) {
  LogFacts f = scan_text("\x1b[1;31m" + k209 + "\x1b[0m\r\n", kb_matcher());
  ASSERT_EQ(f.events.size(), 1u);
  EXPECT_EQ(f.events[0].text, k209);
}

TEST(Scanner, CarriageReturnSegmentsAreMatchedSeparately) {
  // A progress bar redrawn with \r, then the error on the same physical line.
  LogFacts f = scan_text(" 10%|#   |\r 20%|##  |\r" + kOom + "\n", kb_matcher());
  ASSERT_EQ(f.events.size(), 1u);
  EXPECT_EQ(f.events[0].text, kOom);
  EXPECT_EQ(f.events[0].line, 1u);
}

TEST(Scanner, TracebackFrameIsAttached) {
  LogFacts f = scan_text("Traceback (most recent call last):\n  File \"/v/site-packages/flash_attn/x.py\", line 9, in f\n" + k209 +
                             "\n",
                         kb_matcher());
  ASSERT_EQ(f.events.size(), 1u);
  EXPECT_EQ(f.events[0].frame, "/v/site-packages/flash_attn/x.py");
  // A new traceback resets the frame.
  f = scan_text("  File \"/a.py\", line 1\nTraceback (most recent call last):\n" + k209 + "\n", kb_matcher());
  ASSERT_EQ(f.events.size(), 1u);
  EXPECT_EQ(f.events[0].frame, "");
}

TEST(Scanner, EventsAreCappedButCounted) {
  std::string log;
  for (int i = 0; i < 10000; ++i) log += "[rank" + std::to_string(i % 8) + "]: " + kOom + "\n";
  LogFacts f = scan_text(log, kb_matcher());
  EXPECT_EQ(f.counts.at("cuda_out_of_memory"), 10000u);
  EXPECT_LE(f.events.size(), 3u);
  EXPECT_EQ(f.events_dropped, 10000u - f.events.size());
  EXPECT_EQ(f.ranks.size(), 8u);
}

TEST(Scanner, TenMegabyteSingleLineKeepsHeadAndTail) {
  std::string line = k209 + std::string(10u << 20, 'x') + kOom;
  LogFacts f = scan_text(line + "\nafter\n", kb_matcher());
  EXPECT_EQ(f.lines, 2u);
  EXPECT_EQ(f.long_lines, 1u);
  auto ids = test::event_ids(f);
  EXPECT_NE(std::find(ids.begin(), ids.end(), "arch.no_kernel_image"), ids.end());
  EXPECT_NE(std::find(ids.begin(), ids.end(), "memory.oom"), ids.end());
  for (const auto& e : f.events) EXPECT_LE(e.text.size(), 400u);
}

TEST(Scanner, TenMegabyteLineInSmallChunksStaysBounded) {
  LogScanner s(kb_matcher());
  s.feed(k209);
  std::string chunk(4096, 'y');
  for (int i = 0; i < 2560; ++i) s.feed(chunk);  // 10 MiB, no newline
  s.feed(kOom + "\n");
  s.finish();
  EXPECT_EQ(s.facts().long_lines, 1u);
  EXPECT_EQ(s.facts().events.size(), 2u);
}

TEST(Scanner, BinaryGarbageAndInvalidUtf8AreSafe) {
  std::mt19937 rng(42);
  std::string junk(1u << 20, '\0');
  for (auto& c : junk) c = static_cast<char>(rng());
  std::string log = junk + "\n\xff\xfe" + kOom + "\xc3\n" + junk;
  LogFacts f = scan_text(log, kb_matcher());
  bool found = false;
  for (const auto& e : f.events) {
    found |= e.id == "memory.oom";
    // Every string kept is valid UTF-8 (JSON output must not throw).
    EXPECT_NO_THROW((void)nlohmann::json(e).dump());
  }
  EXPECT_TRUE(found);
  EXPECT_EQ(f.bytes, log.size());
}

TEST(Scanner, TwoStreamsKeepTheirOwnPartialLines) {
  LogScanner s(kb_matcher());
  s.feed("RuntimeError: CUDA error: ", 0);
  s.feed("progress 1\n", 1);
  s.feed("out of memory\n", 0);
  s.finish();
  ASSERT_EQ(s.facts().events.size(), 1u);
  EXPECT_EQ(s.facts().events[0].text, kOom);
  EXPECT_TRUE(s.found_error());
}

TEST(Scanner, NothingMatchesInAQuietLog) {
  std::string log;
  for (int i = 0; i < 20000; ++i) log += "step " + std::to_string(i) + " loss 0.123 error rate 0.1\n";
  LogFacts f = scan_text(log, kb_matcher());
  EXPECT_TRUE(f.events.empty());
  EXPECT_EQ(f.lines, 20000u);
}

TEST(Scanner, GenericSignatureYieldsToSpecificOnSameLine) {
  LogFacts f = scan_text("ImportError: libcudart.so.12: cannot open shared object file: No such file or directory\n", kb_matcher());
  ASSERT_EQ(f.events.size(), 1u);  // not also the generic ImportError / loader signature
  EXPECT_EQ(f.events[0].signature, "loader_cannot_open");
  EXPECT_EQ(f.events[0].captures.at("lib"), "libcudart.so.12");
}

TEST(Scanner, RepeatCapturesAreJoined) {
  LogFacts f = scan_text(
      "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 1 has a total capacity of 79.19 GiB of which "
      "1.06 GiB is free. Process 42 has 40.00 GiB memory in use. Process 51 has 38.10 GiB memory in use. Including non-PyTorch "
      "memory, this process has 38.10 GiB memory in use. Of the allocated memory 35.50 GiB is allocated by PyTorch, and 1.97 GiB "
      "is reserved by PyTorch but unallocated.\n",
      kb_matcher());
  ASSERT_EQ(f.events.size(), 1u);
  const auto& c = f.events[0].captures;
  EXPECT_EQ(c.at("gpu"), "1");
  EXPECT_EQ(c.at("tried"), "2.00 GiB");
  EXPECT_EQ(c.at("reserved_unallocated"), "1.97 GiB");
  EXPECT_EQ(c.at("other_pids"), "42 has 40.00 GiB, 51 has 38.10 GiB");
}

}  // namespace
}  // namespace cd

namespace cd {
namespace {

using test::kb_matcher;

TEST(ScannerJoin, MessageWrappedAtTheTerminalWidthIsMatchedAsOne) {
  // nvidia-container-cli's requirement error cut at 136 columns (NVIDIA/nvidia-docker#543).
  std::string a(136 - 27, 'x');
  std::string l1 = a + "requirement error: unsatisfied condi";
  std::string l0 = "$ docker run --runtime=nvidia --rm nvidia/cuda nvidia-smi";
  l1 = l1.substr(l1.size() - 136);
  LogFacts f = scan_text(l0 + "\n" + l1 + "\ntion: cuda >= 9.0\nnext\n", kb_matcher());
  ASSERT_EQ(f.events.size(), 1u);
  EXPECT_EQ(f.events[0].id, "container.driver_below_image");
  EXPECT_EQ(f.events[0].line, 2u);  // where the message starts
  EXPECT_EQ(f.lines, 4u);
}

TEST(ScannerJoin, IndentedAndKernelContinuationsJoin) {
  LogFacts f = scan_text(
      "     Ignoring gpu device (device: 0, name: GRID K520, pci bus id: 0000:00:03.0) \n"
      "    with Cuda compute capability 3.0. The minimum required Cuda capability is 3.5.\n",
      kb_matcher());
  ASSERT_EQ(f.events.size(), 1u);
  EXPECT_EQ(f.events[0].id, "arch.unsupported_by_framework");
  EXPECT_EQ(f.events[0].captures.at("cc"), "3.0");
}

TEST(ScannerJoin, JoinedLineDoesNotRepeatWhatItsPartsMatched) {
  // The first line matches on its own; the indented continuation must not report it again.
  LogFacts f = scan_text("RuntimeError: CUDA error: out of memory\n    while allocating\n", kb_matcher());
  ASSERT_EQ(f.events.size(), 1u);
  EXPECT_EQ(f.counts.at(f.events[0].signature), 1u);
  // Lines of different ranks never join.
  LogFacts g = scan_text("[rank0]: Ignoring gpu device (device: 0) \n[rank1]:     with Cuda compute capability 3.0. "
                         "The minimum required Cuda capability is 3.5.\n",
                         kb_matcher());
  EXPECT_TRUE(g.events.empty());
}

TEST(ScannerJoin, CaseAndPunctuationVariantsMatch) {
  LogFacts f = scan_text("Failed to initialize NVML: Driver/Library version mismatch\n", kb_matcher());
  ASSERT_EQ(f.events.size(), 1u);
  EXPECT_EQ(f.events[0].id, "driver.library_mismatch");
  LogFacts g = scan_text("NVIDIA-SMI has failed because it couldn\xe2\x80\x98t communicate with the NVIDIA driver.\n", kb_matcher());
  ASSERT_EQ(g.events.size(), 1u);
  EXPECT_EQ(g.events[0].id, "driver.missing");
}

// The same cause in the words of other producers: nvidia-container-cli, the nvidia-docker 1.0
// plugin, pynvml, nvitop; TensorFlow's dso_loader across 0.x / 1.14 / 2.x; JAX >= 0.4.31.
TEST(ScannerJoin, ProducerWordingVariantsMatch) {
  const std::pair<const char*, const char*> cases[] = {
      {"stderr: nvidia-container-cli: initialization error: nvml error: driver/library version mismatch: unknown.",
       "driver.library_mismatch"},
      {"nvidia-docker | 2016/12/17 05:23:46 Error: nvml: Driver/library version mismatch", "driver.library_mismatch"},
      {"pynvml.nvml.NVMLError_LibRmVersionMismatch: RM has detected an NVML/RM version mismatch.",
       "driver.library_mismatch"},
      {"nvidia-container-cli: initialization error: nvml error: driver not loaded: unknown", "driver.missing"},
      {"NVML ERROR: Driver Not Loaded", "driver.missing"},
      {"I tensorflow/stream_executor/dso_loader.cc:126] Couldn't open CUDA library libcudnn.so.5. LD_LIBRARY_PATH: "
       "/usr/local/cuda-8.0/lib64",
       "libs.not_found"},
      {"I tensorflow/stream_executor/cuda/cuda_dnn.cc:3517] Unable to load cuDNN DSO", "libs.not_found"},
      {"I tensorflow/stream_executor/platform/default/dso_loader.cc:53] Could not dlopen library 'libcudart.so.10.0'; "
       "dlerror: libcudart.so.10.0: cannot open shared object file: No such file or directory",
       "libs.not_found"},
      {"Outdated cuDNN installation found.", "libs.cudnn_mismatch"},
  };
  for (const auto& [line, id] : cases) {
    LogFacts f = scan_text(std::string(line) + "\n", kb_matcher());
    ASSERT_FALSE(f.events.empty()) << line;
    EXPECT_EQ(f.events[0].id, id) << line;
  }
  // The first of these names the library; the title leaves no placeholder behind.
  LogFacts t = scan_text("Couldn't open CUDA library libcudnn.so. LD_LIBRARY_PATH: \n", kb_matcher());
  ASSERT_FALSE(t.events.empty());
  EXPECT_EQ(t.events[0].captures["lib"], "libcudnn.so");
}

}  // namespace
}  // namespace cd

namespace cd {
namespace {

TEST(ScannerJoin, AggregatorPrefixesAreStrippedAndServicesKeptApart) {
  // A compose service's indented continuation joins; another service's line does not.
  LogFacts f = scan_text(
      "trainer-1  | RuntimeError:\n"
      "trainer-1  |     The detected CUDA version (12.1) mismatches the version that was used to compile\n"
      "trainer-1  |     PyTorch (11.8). Please make sure to use the same CUDA versions.\n",
      kb_matcher());
  ASSERT_FALSE(f.events.empty());
  EXPECT_EQ(f.events[0].id, "toolkit.version_mismatch");
  LogFacts g = scan_text("a-1  | Ignoring gpu device (device: 0) \nb-1  |     with Cuda compute capability 3.0. "
                         "The minimum required Cuda capability is 3.5.\n",
                         kb_matcher());
  EXPECT_TRUE(g.events.empty());
  // journald: the anchored ImportError signature sees the line start after the prefix.
  LogFacts h = scan_text("Oct 04 13:19:39 llm app[394]: ImportError: libcudart.so.12: cannot open shared object file\n",
                         kb_matcher());
  ASSERT_FALSE(h.events.empty());
  EXPECT_EQ(h.events[0].text, "ImportError: libcudart.so.12: cannot open shared object file");
}

}  // namespace
}  // namespace cd
