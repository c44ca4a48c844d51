// The container/entry walker on hand-made bytes: layouts of binary/fatbin.hpp,
// and hostile input (truncated, lying sizes) that must give notes, never a crash.
#include <algorithm>
#include <cstring>
#include <vector>

#include <gtest/gtest.h>

#include "binary/fatbin.hpp"
#include "binary/file_scan.hpp"
#include "binary/ptx.hpp"

using namespace cd::bin;

namespace {

template <class T>
void put(std::vector<uint8_t>& b, size_t off, T v) {
  if (b.size() < off + sizeof v) b.resize(off + sizeof v);
  std::memcpy(b.data() + off, &v, sizeof v);
}

// One entry header (64 bytes) + payload of `payload` bytes.
std::vector<uint8_t> entry(uint16_t kind, uint32_t arch, uint16_t major, uint16_t minor, uint64_t flags,
                           uint64_t payload) {
  std::vector<uint8_t> e(64 + payload, 0);
  put<uint16_t>(e, 0x00, kind);
  put<uint16_t>(e, 0x02, 0x0101);
  put<uint32_t>(e, 0x04, 64);
  put<uint64_t>(e, 0x08, payload);
  put<uint16_t>(e, 0x18, minor);
  put<uint16_t>(e, 0x1A, major);
  put<uint32_t>(e, 0x1C, arch);
  put<uint64_t>(e, 0x28, flags);
  return e;
}

std::vector<uint8_t> container(const std::vector<std::vector<uint8_t>>& entries) {
  std::vector<uint8_t> body;
  for (const auto& e : entries) body.insert(body.end(), e.begin(), e.end());
  std::vector<uint8_t> c(16, 0);
  put<uint32_t>(c, 0, kFatbinMagic);
  put<uint16_t>(c, 4, 1);
  put<uint16_t>(c, 6, 16);
  put<uint64_t>(c, 8, body.size());
  c.insert(c.end(), body.begin(), body.end());
  return c;
}

}  // namespace

TEST(Fatbin, ReadsEntriesWithSuffixAndCompression) {
  auto c = container({entry(2, 90, 1, 8, 0x100011, 8),      // sm_90a
                      entry(1, 100, 9, 0, 0x208011, 16),    // compute_100f, zstd
                      entry(2, 120, 1, 8, 0x1002011, 0)});  // sm_120, lz4
  FatbinParse p = parse_fatbin(c);
  ASSERT_EQ(p.containers.size(), 1u);
  EXPECT_TRUE(p.notes.empty());
  const auto& e = p.containers[0].entries;
  ASSERT_EQ(e.size(), 3u);
  EXPECT_EQ(entry_arch_name(e[0]), "sm_90a");
  EXPECT_EQ(e[0].compression, Compression::none);
  EXPECT_EQ(entry_arch_name(e[1]), "compute_100f");
  EXPECT_EQ(e[1].kind, EntryKind::ptx);
  EXPECT_EQ(e[1].major, 9);
  EXPECT_EQ(e[1].compression, Compression::zstd);
  EXPECT_EQ(entry_arch_name(e[2]), "sm_120");
  EXPECT_EQ(e[2].compression, Compression::lz4);
}

TEST(Fatbin, SkipsPaddingBetweenContainers) {
  auto a = container({entry(2, 75, 1, 8, 0x11, 8)});
  auto b = container({entry(2, 80, 1, 8, 0x11, 8)});
  std::vector<uint8_t> all = a;
  all.resize(all.size() + 24, 0);  // alignment padding
  all.insert(all.end(), b.begin(), b.end());
  FatbinParse p = parse_fatbin(all);
  ASSERT_EQ(p.containers.size(), 2u);
  EXPECT_EQ(p.containers[1].offset, a.size() + 24);
  EXPECT_EQ(p.containers[1].entries.at(0).arch, 80);
}

// The walk says how far it has come: at its start, at each container, and at each MiB of a
// search between containers (a table is read a window ahead of it), always forward.
TEST(Fatbin, ReachedFollowsTheWalk) {
  auto a = container({entry(2, 75, 1, 8, 0x11, 8)});
  auto b = container({entry(2, 80, 1, 8, 0x11, 8)});
  std::vector<uint8_t> all = a;
  all.resize(all.size() + (3 << 20), 0);  // 3 MiB without a container
  uint64_t second = all.size();
  all.insert(all.end(), b.begin(), b.end());
  std::vector<uint64_t> told;
  Reached reached = [&](uint64_t at) { told.push_back(at); };
  FatbinParse p = parse_fatbin(all, 0, kMaxParseNotes, nullptr, false, &reached);
  ASSERT_EQ(p.containers.size(), 2u);
  ASSERT_GE(told.size(), 2u + 3u);
  EXPECT_EQ(told.front(), 0u);
  EXPECT_EQ(told.back(), second) << "the last container";
  EXPECT_TRUE(std::is_sorted(told.begin(), told.end()));
  for (size_t i = 1; i < told.size(); ++i) EXPECT_LE(told[i] - told[i - 1], (1u << 20) + 64) << "a MiB searched unsaid";
}

// A table in runs by architecture, as cuFFT's: the probes find a container of the asked run far
// from the start; a magic number inside a payload, with a header that does not hold, is not one.
TEST(Fatbin, ProbeFindsASoundContainerThatAnswersAndNothingElse) {
  std::vector<uint8_t> table;
  auto add = [&](uint32_t arch, size_t n) {
    for (size_t i = 0; i < n; ++i) {
      auto c = container({entry(2, arch, 1, 8, 0x11, 4000)});
      table.insert(table.end(), c.begin(), c.end());
    }
  };
  add(75, 600);  // ~2.4 MB of sm_75
  add(90, 40);
  add(80, 600);
  Enough sm90 = [](const std::vector<FatbinEntry>& es) { return es.back().kind == EntryKind::sass && es.back().arch == 90; };
  auto points = probe_points(table.size(), 64);
  ASSERT_EQ(points.size(), 64u);
  auto hit = probe_fatbin(table, 0, points, 16 << 10, sm90);
  ASSERT_TRUE(hit.has_value());
  FatbinParse from = parse_fatbin(Bytes(table).subspan(*hit), *hit, kMaxParseNotes, &sm90, true);
  ASSERT_FALSE(from.containers.empty());
  EXPECT_EQ(from.containers[0].offset, 0u) << "the walk from a probe's hit starts at a container";
  EXPECT_EQ(from.containers[0].entries.at(0).arch, 90);
  EXPECT_TRUE(from.stopped);
  // Nothing serves sm_120: no probe answers (the caller walks from the start).
  Enough sm120 = [](const std::vector<FatbinEntry>& es) { return es.back().arch == 120; };
  EXPECT_FALSE(probe_fatbin(table, 0, points, 16 << 10, sm120).has_value());

  // A payload holding a magic number and an sm_120 "entry" whose sizes run past its container:
  // a probe landing there must not take it.
  std::vector<uint8_t> fake = container({entry(2, 120, 1, 8, 0x11, 64)});
  put<uint64_t>(fake, 8, 1 << 20);  // the container claims a MiB
  std::vector<uint8_t> host = container({entry(2, 75, 1, 8, 0x11, 4096)});
  std::copy(fake.begin(), fake.end(), host.begin() + 16 + 64 + 8);
  EXPECT_FALSE(probe_fatbin(host, 0, {8}, 4096, sm120).has_value());
  EXPECT_EQ(parse_fatbin(host).containers.size(), 1u) << "the walk never looks inside a payload";
}

// Probes of a hostile table (containers of 1,000 empty entries each, 64 KB apiece) read a bounded
// number of entries per container they land on, not each container's whole walk again.
TEST(Fatbin, ProbesOfAHostileTableStayBounded) {
  std::vector<std::vector<uint8_t>> many(1000, entry(2, 75, 1, 8, 0x11, 0));
  std::vector<uint8_t> one = container(many), table;
  for (int i = 0; i < 200; ++i) table.insert(table.end(), one.begin(), one.end());
  size_t asked = 0;
  Enough count = [&](const std::vector<FatbinEntry>&) { ++asked; return false; };
  auto points = probe_points(table.size(), 256);
  EXPECT_FALSE(probe_fatbin(table, 0, points, 64 << 10, count).has_value());
  EXPECT_GT(asked, 0u);
  EXPECT_LE(asked, 2u * 256u * 256u) << "a 64 KiB window holds at most two of these containers' starts";
}

TEST(Fatbin, TruncatedContainerKeepsCompleteEntriesAndNotes) {
  auto c = container({entry(2, 75, 1, 8, 0x11, 8), entry(2, 86, 1, 8, 0x11, 64)});
  c.resize(c.size() - 40);  // cut into the second entry's payload
  FatbinParse p = parse_fatbin(c);
  ASSERT_EQ(p.containers.size(), 1u);
  ASSERT_EQ(p.containers[0].entries.size(), 1u);
  EXPECT_EQ(p.containers[0].entries[0].arch, 75);
  ASSERT_GE(p.notes.size(), 1u);
  EXPECT_NE(p.notes[0].message.find("runs past"), std::string::npos);
}

TEST(Fatbin, LyingSizesGiveNotesNotCrashes) {
  auto c = container({entry(2, 75, 1, 8, 0x11, 8)});
  put<uint32_t>(c, 16 + 4, 8);             // entry header size below 64
  EXPECT_FALSE(parse_fatbin(c).notes.empty());
  put<uint32_t>(c, 16 + 4, 64);
  put<uint64_t>(c, 16 + 8, ~uint64_t{0});  // payload size overflows
  EXPECT_FALSE(parse_fatbin(c).notes.empty());
  put<uint64_t>(c, 8, ~uint64_t{0} - 3);   // container size overflows
  FatbinParse p = parse_fatbin(c);
  EXPECT_FALSE(p.notes.empty());
}

TEST(Fatbin, FileNotesNameTheFileAndOffset) {
  auto c = container({entry(2, 75, 1, 8, 0x11, 8)});
  put<uint32_t>(c, 16 + 4, 8);
  FileScan s = scan_bytes(c, "bad.fatbin", false);
  EXPECT_EQ(s.format, "fatbin");
  ASSERT_EQ(s.notes.size(), 1u);
  EXPECT_EQ(s.notes[0].rfind("malformed fatbin in bad.fatbin at offset 0x10: ", 0), 0u) << s.notes[0];
}

TEST(Fatbin, NonCudaBytesAreIgnoredAtOnce) {
  std::vector<uint8_t> text = {'#', '!', '/', 'b', 'i', 'n', '/', 's', 'h', '\n'};
  FileScan s = scan_bytes(text, "script", false);
  EXPECT_EQ(s.format, "");
  EXPECT_TRUE(s.containers.empty());
  EXPECT_TRUE(s.notes.empty());
}

TEST(Fatbin, GarbageElfIsAnErrorNotACrash) {
  std::vector<uint8_t> elf = {0x7f, 'E', 'L', 'F', 2, 1, 1, 0};
  elf.resize(40, 0xff);
  FileScan s = scan_bytes(elf, "broken.so", false);
  EXPECT_TRUE(s.containers.empty());
  EXPECT_FALSE(s.error.empty() && s.notes.empty());
}

TEST(Ptx, HeaderAndEntries) {
  std::string text = "//\n// Generated by NVIDIA NVVM Compiler\n.version 9.1\n.target sm_100f\n.address_size 64\n\n"
                     ".visible .entry _Z1kPf(\n.param .u64 p)\n{\n ret;\n}\n.entry second()\n{}\n";
  PtxInfo info = parse_ptx(text, true);
  EXPECT_EQ(info.major, 9);
  EXPECT_EQ(info.minor, 1);
  EXPECT_EQ(info.arch, 100);
  EXPECT_EQ(info.suffix, 'f');
  EXPECT_EQ(info.entries, (std::vector<std::string>{"_Z1kPf", "second"}));
  EXPECT_TRUE(parse_ptx(text, false).entries.empty());
}
