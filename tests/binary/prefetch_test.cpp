// binary/prefetch on real CUDA libraries (the machine's CUDA 13.0 wheels): the containers
// .nvFatBinSegment registers are containers the sequential walk finds, the read-ahead
// brings their pages into memory from a cold state, and a scan with the read-ahead gives
// exactly the answer of a scan without it. Hostile wrapper tables stay bounded.
#include "binary/prefetch.hpp"

#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "binary/fatbin.hpp"
#include "binary/file_scan.hpp"
#include "binary/mapped_file.hpp"
#include "page_cache.hpp"

namespace cd::bin {
namespace {

const std::string kLib = "/usr/local/cuda/lib64/libcudnn_engines_runtime_compiled.so.9";

struct Sections {
  GElf_Shdr fatbin{}, segment{};
  bool ok = false;
};

// The two sections, found with libelf independently of the scanner.
Sections sections_of(const std::string& path) {
  Sections out;
  elf_version(EV_CURRENT);
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return out;
  Elf* e = elf_begin(fd, ELF_C_READ, nullptr);
  size_t strndx = 0;
  bool f = false, s = false;
  if (e && elf_getshdrstrndx(e, &strndx) == 0)
    for (Elf_Scn* scn = nullptr; (scn = elf_nextscn(e, scn));) {
      GElf_Shdr sh;
      if (!gelf_getshdr(scn, &sh)) continue;
      const char* n = elf_strptr(e, strndx, sh.sh_name);
      if (n && std::strcmp(n, ".nv_fatbin") == 0) out.fatbin = sh, f = true;
      if (n && std::strcmp(n, ".nvFatBinSegment") == 0) out.segment = sh, s = true;
    }
  if (e) elf_end(e);
  close(fd);
  out.ok = f && s;
  return out;
}

TEST(Prefetch, RegisteredContainersAreWhereTheWalkFindsThem) {
  Sections sec = sections_of(kLib);
  if (!sec.ok) GTEST_SKIP() << kLib << " missing or without .nvFatBinSegment";
  MappedFile file(kLib);
  ASSERT_TRUE(file.ok());
  Bytes section = file.bytes().subspan(sec.fatbin.sh_offset, sec.fatbin.sh_size);
  auto offsets = registered_containers(file.bytes().subspan(sec.segment.sh_offset, sec.segment.sh_size),
                                       sec.fatbin.sh_addr, sec.fatbin.sh_size);
  FatbinParse walk = parse_fatbin(section, sec.fatbin.sh_offset);
  ASSERT_GT(offsets.size(), 16u);
  std::vector<uint64_t> walked;
  for (const auto& c : walk.containers) walked.push_back(c.offset);
  for (uint64_t off : offsets)
    EXPECT_TRUE(std::binary_search(walked.begin(), walked.end(), off)) << "registered container at " << off;
  // Nearly every container is registered (a library may hold a few it loads by hand).
  EXPECT_GE(offsets.size() * 10, walked.size() * 9) << offsets.size() << " of " << walked.size();
}

TEST(Prefetch, ReadsEvictedPagesAndIsANoOpWhenResident) {
  Sections sec = sections_of(kLib);
  if (!sec.ok) GTEST_SKIP() << kLib << " missing or without .nvFatBinSegment";
  pc::evict(kLib);
  MappedFile file(kLib);
  ASSERT_TRUE(file.ok());
  advise(file.bytes(), MADV_RANDOM);
  Bytes section = file.bytes().subspan(sec.fatbin.sh_offset, sec.fatbin.sh_size);
  auto offsets = registered_containers(file.bytes().subspan(sec.segment.sh_offset, sec.segment.sh_size),
                                       sec.fatbin.sh_addr, sec.fatbin.sh_size);
  Prefetch first = prefetch_containers(section, offsets, 8);
  if (first.resident) GTEST_SKIP() << "the pages stayed in memory (another process maps " << kLib << ")";
  EXPECT_GE(first.headers, offsets.size() * 2) << "a container header and at least one entry header each";
  Prefetch second = prefetch_containers(section, offsets, 8);
  EXPECT_TRUE(second.resident);
  EXPECT_EQ(second.headers, 0u);
}

// MADV_WILLNEED over a range longer than the kernel's read-ahead window reads all of it (one
// call alone reads the first window: a table asked for whole was read 8 MiB, then by faults).
TEST(Prefetch, WillNeedReadsAllOfALongRange) {
  const std::string lib = "/usr/local/cuda/lib64/libcublasLt.so.13";
  if (access(lib.c_str(), R_OK) != 0) GTEST_SKIP() << lib << " missing";
  pc::evict(lib);
  MappedFile file(lib);
  ASSERT_TRUE(file.ok());
  ASSERT_GT(file.bytes().size(), 64u << 20);
  advise(file.bytes(), MADV_RANDOM);
  Bytes range = file.bytes().subspan(16 << 20, 32 << 20);  // 32 MiB: four 8 MiB windows, 256 of 128 KiB
  using pc::resident;
  if (resident(range) > range.size() / 4) GTEST_SKIP() << "the pages stayed in memory (another process maps " << lib << ")";
  advise(range, MADV_WILLNEED);
  Bytes last = range.subspan(range.size() - (1 << 20));  // the last MiB: past any one window
  for (int i = 0; i < 200 && resident(last) < last.size(); ++i) usleep(10000);  // the reads are asynchronous
  EXPECT_EQ(resident(last), last.size());
  EXPECT_GE(resident(range), range.size() * 9 / 10);
}

// The scan of a mapped file (with read-ahead) and of the same bytes in memory (without)
// find the same containers and entries.
TEST(Prefetch, ScanWithReadAheadGivesTheSameAnswer) {
  if (access(kLib.c_str(), R_OK) != 0) GTEST_SKIP() << kLib << " missing";
  FileScan mapped = scan_path(kLib, false);
  std::ifstream in(kLib, std::ios::binary);
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  FileScan memory = scan_bytes(Bytes(bytes.data(), bytes.size()), kLib, false);
  ASSERT_GT(mapped.containers.size(), 16u);
  ASSERT_EQ(mapped.containers.size(), memory.containers.size());
  for (size_t i = 0; i < mapped.containers.size(); ++i) {
    ASSERT_EQ(mapped.containers[i].file_offset, memory.containers[i].file_offset);
    ASSERT_EQ(mapped.containers[i].entries.size(), memory.containers[i].entries.size());
  }
  EXPECT_EQ(mapped.notes, memory.notes);
  EXPECT_EQ(mapped.format, memory.format);
}

// Wrapper tables are untrusted: other magic numbers and pointers outside the section are
// ignored, duplicates read once, and a container's chain is cut at 4096 entries.
TEST(Prefetch, HostileWrapperTablesStayBounded) {
  std::vector<uint8_t> seg(24 * 5, 0);
  auto wrapper = [&](int i, uint32_t magic, uint64_t addr) {
    std::memcpy(&seg[24 * i], &magic, 4);
    std::memcpy(&seg[24 * i + 8], &addr, 8);
  };
  wrapper(0, kWrapperMagic, 0x1000);
  wrapper(1, kWrapperMagic, 0x1000);       // duplicate
  wrapper(2, 0x12345678u, 0x1008);         // not a wrapper
  wrapper(3, kWrapperMagic, 0x1000 + 64);  // inside
  wrapper(4, kWrapperMagic, 0x9000);       // outside the section
  auto offsets = registered_containers(Bytes(seg.data(), seg.size()), 0x1000, 4096);
  EXPECT_EQ(offsets, (std::vector<uint64_t>{0, 64}));

  // One container whose body is 100,000 empty 64-byte entries.
  const uint64_t entries = 100000;
  std::vector<uint8_t> section(16 + entries * 64, 0);
  uint32_t magic = kFatbinMagic;
  uint16_t header = 16;
  uint64_t body = entries * 64;
  std::memcpy(&section[0], &magic, 4);
  std::memcpy(&section[6], &header, 2);
  std::memcpy(&section[8], &body, 8);
  for (uint64_t i = 0; i < entries; ++i) {
    uint32_t eh = 64;
    std::memcpy(&section[16 + i * 64 + 4], &eh, 4);
  }
  Prefetch p = prefetch_containers(Bytes(section.data(), section.size()), {0}, 2, false);
  EXPECT_EQ(p.headers, 4097u);  // the container header and 4096 entries

  // Where the walk will stop (check's question settled after 3 entries), the read-ahead stops too.
  Enough after_three = [](const std::vector<FatbinEntry>& seen) { return seen.size() == 3; };
  Prefetch cut = prefetch_containers(Bytes(section.data(), section.size()), {0}, 2, false, &after_three);
  EXPECT_EQ(cut.headers, 4u);  // the container header and 3 entries
  FatbinParse parse = parse_fatbin(Bytes(section.data(), section.size()), 0, kMaxParseNotes, &after_three);
  ASSERT_EQ(parse.containers.size(), 1u);
  EXPECT_EQ(parse.containers[0].entries.size(), 3u);
  EXPECT_TRUE(parse.containers[0].cut);
}

}  // namespace
}  // namespace cd::bin
