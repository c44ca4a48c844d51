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
#include "elf_list.hpp"
#include "nvcc_fixtures.hpp"
#include "page_cache.hpp"

namespace cd::bin {
namespace {

const std::string kLib = "/usr/local/cuda/lib64/libcudnn_engines_runtime_compiled.so.9";

struct Sections {
  GElf_Shdr fatbin{}, segment{};
  std::vector<GElf_Shdr> relas;  // SHT_RELA the loader applies
  bool ok = false;
};

// The two sections, found with libelf independently of the scanner.
Sections sections_of(const std::string& path) {
  Sections out;
  auto all = fx::elf_sections_of(path);
  const GElf_Shdr* f = fx::find_section(all, ".nv_fatbin");
  const GElf_Shdr* s = fx::find_section(all, ".nvFatBinSegment");
  if (f) out.fatbin = *f;
  if (s) out.segment = *s;
  for (const auto& sec : all)
    if (sec.sh.sh_type == SHT_RELA && (sec.sh.sh_flags & SHF_ALLOC)) out.relas.push_back(sec.sh);
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

// LLVM's lld leaves each wrapper's data pointer 0 and sets it by a RELATIVE relocation (JAX's
// XLA plugin: no container read ahead, 238 header faults one after another in a cold check).
// Four nvcc objects linked by lld: the pointers are 0, the relocations name every container.
TEST(Prefetch, LldLinkedLibrariesRegisterThroughRelocations) {
  if (!fx::have_nvcc() || access("/usr/bin/ld.lld", X_OK) != 0) GTEST_SKIP() << "no nvcc or ld.lld";
  std::string so = fx::build("liblld.so",
                             "for i in 1 2 3 4; do sed \"s/kern_/kern${i}_/g; s/launch/launch$i/\" k.cu > lld$i.cu && " +
                                 std::string(fx::kNvcc) +
                                 " -c -Xcompiler -fPIC lld$i.cu -o lld$i.o -gencode arch=compute_80,code=sm_80 "
                                 "-gencode arch=compute_90,code=sm_90 || exit 1; done && "
                                 "g++ -shared -fuse-ld=lld lld1.o lld2.o lld3.o lld4.o -o \"$OUT\"");
  ASSERT_FALSE(so.empty());
  Sections sec = sections_of(so);
  ASSERT_TRUE(sec.ok);
  ASSERT_FALSE(sec.relas.empty());
  MappedFile file(so);
  ASSERT_TRUE(file.ok());
  Bytes segment = file.bytes().subspan(sec.segment.sh_offset, sec.segment.sh_size);
  EXPECT_TRUE(registered_containers(segment, sec.fatbin.sh_addr, sec.fatbin.sh_size).empty())
      << "lld wrote the pointers: this fixture no longer tests the relocations";
  std::vector<Bytes> relas;
  for (const auto& r : sec.relas) relas.push_back(file.bytes().subspan(r.sh_offset, r.sh_size));
  auto offsets = registered_containers(segment, sec.fatbin.sh_addr, sec.fatbin.sh_size, sec.segment.sh_addr, relas);
  FatbinParse walk = parse_fatbin(file.bytes().subspan(sec.fatbin.sh_offset, sec.fatbin.sh_size), sec.fatbin.sh_offset);
  std::vector<uint64_t> walked;
  for (const auto& c : walk.containers) walked.push_back(c.offset);
  EXPECT_EQ(walked.size(), 4u);
  EXPECT_EQ(offsets, walked);
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

  // Pointers left to relocations (lld): only a symbol-0 relocation at a zero pointer field of a
  // wrapper counts, and only an address inside the section.
  std::vector<uint8_t> lld(24 * 4, 0);
  for (int i = 0; i < 4; ++i) std::memcpy(&lld[24 * i], &kWrapperMagic, 4);
  uint64_t nonzero = 0x1000 + 128;
  std::memcpy(&lld[24 * 3 + 8], &nonzero, 8);  // written in place: kept as written
  std::vector<uint8_t> rela;
  auto reloc = [&](uint64_t where, uint64_t info, uint64_t addend) {
    for (uint64_t v : {where, info, addend})
      for (int b = 0; b < 8; ++b) rela.push_back(static_cast<uint8_t>(v >> (8 * b)));
  };
  const uint64_t seg_addr = 0x50000;
  reloc(seg_addr + 8, 8, 0x1000 + 256);              // wrapper 0: R_X86_64_RELATIVE
  reloc(seg_addr + 24 + 8, (uint64_t{5} << 32) | 1, 0x1000 + 512);  // wrapper 1: a symbol's: not an address
  reloc(seg_addr + 48 + 4, 8, 0x1000 + 768);         // inside wrapper 2, not its pointer
  reloc(seg_addr + 72 + 8, 8, 0x1000 + 1024);        // wrapper 3's pointer is written: ignored
  reloc(seg_addr + 96 + 8, 8, 0x1000 + 8);           // past the table
  reloc(seg_addr + 48 + 8, 8, 0x9000);               // wrapper 2: outside the section
  rela.resize(rela.size() + 7, 0xff);                // a torn last entry
  offsets = registered_containers(Bytes(lld.data(), lld.size()), 0x1000, 4096, seg_addr,
                                  {Bytes(rela.data(), rela.size())});
  EXPECT_EQ(offsets, (std::vector<uint64_t>{128, 256}));

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
