// Hostile input must stay cheap (issue 12): notes bounded per file and per run (#1),
// decompression checked before allocating and budgeted per file, per run and across
// threads (#6), files opened without blocking and mapped read-only (#4, #15), corrupt
// ELF / archive / PTX input counted and described (#10).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <future>
#include <sstream>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "binary/budget.hpp"
#include "binary/decompress.hpp"
#include "binary/fatbin.hpp"
#include "binary/file_scan.hpp"
#include "binary/mapped_file.hpp"
#include "binary/nvcc_fixtures.hpp"

using namespace cd::bin;

namespace {

template <class T>
void put(std::vector<uint8_t>& b, size_t off, T v) {
  if (b.size() < off + sizeof v) b.resize(off + sizeof v);
  std::memcpy(b.data() + off, &v, sizeof v);
}

// A container holding one entry: header fields of binary/fatbin.hpp, then `payload`.
std::vector<uint8_t> container_with(uint16_t kind, uint64_t flags, const std::vector<uint8_t>& payload,
                                    uint64_t uncompressed, uint32_t header_size = 64) {
  std::vector<uint8_t> c(16, 0);
  put<uint32_t>(c, 0, kFatbinMagic);
  put<uint16_t>(c, 4, 1);
  put<uint16_t>(c, 6, 16);
  uint64_t padded = (payload.size() + 7) & ~uint64_t{7};
  put<uint64_t>(c, 8, 64 + padded);
  std::vector<uint8_t> e(64, 0);
  put<uint16_t>(e, 0x00, kind);
  put<uint32_t>(e, 0x04, header_size);
  put<uint64_t>(e, 0x08, padded);
  put<uint32_t>(e, 0x10, static_cast<uint32_t>(payload.size()));
  put<uint16_t>(e, 0x1A, 1);
  put<uint32_t>(e, 0x1C, 90);
  put<uint64_t>(e, 0x28, flags);
  put<uint64_t>(e, 0x38, uncompressed);
  c.insert(c.end(), e.begin(), e.end());
  c.insert(c.end(), payload.begin(), payload.end());
  c.resize(16 + 64 + padded, 0);
  return c;
}

constexpr uint64_t kZstd = 0x8000 | 0x11, kLz4 = 0x2000 | 0x11;

std::vector<uint8_t> zstd_of(const std::vector<uint8_t>& plain) {
  std::vector<uint8_t> out(ZSTD_compressBound(plain.size()));
  size_t n = ZSTD_compress(out.data(), out.size(), plain.data(), plain.size(), 3);
  out.resize(n);
  return out;
}

std::string temp_path(const std::string& name) {
  return std::string(CD_BUILD_DIR) + "/hostile-" + std::to_string(getpid()) + "-" + name;
}

}  // namespace

// #1: 1 MiB of repeated magic with a bad header at every 8-byte position (131072 of
// them) is one region and one note, not one note each.
TEST(HostileNotes, RepeatedMagicIsOneNoteForTheWholeRun) {
  std::vector<uint8_t> amp;
  for (size_t i = 0; i < (1u << 17); ++i) {
    put<uint32_t>(amp, i * 8, kFatbinMagic);
    put<uint16_t>(amp, i * 8 + 4, 1);
    put<uint16_t>(amp, i * 8 + 6, 0);
  }
  FatbinParse p = parse_fatbin(amp);
  ASSERT_EQ(p.notes.size(), 1u);
  EXPECT_EQ(p.notes_dropped, 0u);
  EXPECT_NE(p.notes[0].message.find("131070 more fatbin magic numbers with bad headers follow at 8-byte steps (1048568 bytes skipped)"), std::string::npos) << p.notes[0].message;
  FileScan s = scan_bytes(amp, "amp.so", false);
  EXPECT_EQ(s.notes.size(), 1u);
  EXPECT_EQ(s.problems, 1u);
}

// #1: a thousand distinct bad containers are all counted, but a file keeps 16 notes and
// one line for the rest.
TEST(HostileNotes, CappedPerFileWithOneLineForTheRest) {
  std::vector<uint8_t> all;
  for (int i = 0; i < 1000; ++i) {
    auto c = container_with(2, 0x11, std::vector<uint8_t>(8, 0), 0, 8);  // entry header size 8 < 64
    all.insert(all.end(), c.begin(), c.end());
  }
  FileScan s = scan_bytes(all, "many.fatbin", false);
  EXPECT_EQ(s.problems, 1000u);
  ASSERT_EQ(s.notes.size(), ScanLimits{}.notes_per_file + 1);
  EXPECT_EQ(s.notes.back(), "984 more problems in many.fatbin not shown (at most 16 notes per file, 1000 per run)");
  EXPECT_TRUE(s.containers.empty());  // a container whose only entry is bad holds nothing
}

// #1: the run's budget is shared by its files.
TEST(HostileNotes, CappedPerRun) {
  std::vector<uint8_t> all;
  for (int i = 0; i < 10; ++i) {
    auto c = container_with(2, 0x11, std::vector<uint8_t>(8, 0), 0, 8);
    all.insert(all.end(), c.begin(), c.end());
  }
  ScanLimits l;
  l.notes_per_run = 12;
  RunBudget run(l);
  FileScan a = scan_bytes(all, "a.fatbin", false, &run);
  FileScan b = scan_bytes(all, "b.fatbin", false, &run);
  EXPECT_EQ(a.notes.size(), 10u);
  ASSERT_EQ(b.notes.size(), 3u);  // 2 of the run's budget left, then the summary line
  EXPECT_EQ(b.notes.back().rfind("8 more problems in b.fatbin", 0), 0u) << b.notes.back();
  EXPECT_EQ(b.problems, 10u);
}

// #1: containers without entries (16 bytes each) are notes, not containers.
TEST(HostileNotes, EmptyContainersAreNotKept) {
  std::vector<uint8_t> all;
  for (size_t i = 0; i < 4096; ++i) {
    put<uint32_t>(all, i * 16, kFatbinMagic);
    put<uint16_t>(all, i * 16 + 4, 1);
    put<uint16_t>(all, i * 16 + 6, 16);
    put<uint64_t>(all, i * 16 + 8, 0);
  }
  FatbinParse p = parse_fatbin(all);
  EXPECT_TRUE(p.containers.empty());
  EXPECT_EQ(p.notes.size(), kMaxParseNotes);
  EXPECT_EQ(p.notes_dropped, 4096u - kMaxParseNotes);
}

// #6: a zstd entry whose header claims 512 MiB but whose frame holds 64 bytes is refused
// before anything is allocated (main allocated and zero-filled the 512 MiB first).
TEST(HostileDecompress, ZstdFrameSizeMustMatchTheHeader) {
  auto c = container_with(2, kZstd, zstd_of(std::vector<uint8_t>(64, 7)), kMaxImageBytes);
  FatbinParse p = parse_fatbin(c);
  ASSERT_EQ(p.containers.size(), 1u);
  std::string error;
  EXPECT_FALSE(entry_payload(c, p.containers[0].entries[0], error));
  EXPECT_NE(error.find("zstd frame holds 64 bytes"), std::string::npos) << error;
}

TEST(HostileDecompress, Lz4RatioMustBePlausible) {
  auto c = container_with(2, kLz4, std::vector<uint8_t>(100, 0x1f), kMaxImageBytes);
  FatbinParse p = parse_fatbin(c);
  ASSERT_EQ(p.containers.size(), 1u);
  std::string error;
  EXPECT_FALSE(entry_payload(c, p.containers[0].entries[0], error));
  EXPECT_NE(error.find("more than LZ4 can make of 100 bytes"), std::string::npos) << error;
}

TEST(HostileDecompress, HonestZstdStillDecompresses) {
  std::vector<uint8_t> plain(1000);
  for (size_t i = 0; i < plain.size(); ++i) plain[i] = static_cast<uint8_t>(i * 7);
  auto c = container_with(2, kZstd, zstd_of(plain), plain.size());
  FatbinParse p = parse_fatbin(c);
  ASSERT_EQ(p.containers.size(), 1u);
  std::string error;
  auto payload = entry_payload(c, p.containers[0].entries[0], error);
  ASSERT_TRUE(payload) << error;
  EXPECT_EQ(std::vector<uint8_t>(payload->bytes.begin(), payload->bytes.end()), plain);
}

// #6: 40 honest zstd images of 1 MiB each (a few hundred bytes in the file): --kernels
// stops at the file's budget and says so once.
TEST(HostileDecompress, BudgetPerFileAndPerRun) {
  auto one = container_with(2, kZstd, zstd_of(std::vector<uint8_t>(1 << 20, 0)), 1 << 20);
  std::vector<uint8_t> all;
  for (int i = 0; i < 40; ++i) all.insert(all.end(), one.begin(), one.end());
  ScanLimits l;
  l.decompressed_per_file = 8 << 20;
  l.decompressed_per_run = 12 << 20;
  RunBudget run(l);
  FileScan a = scan_bytes(all, "a.fatbin", true, &run);
  EXPECT_EQ(run.decompressed(), 8u << 20);
  EXPECT_EQ(a.containers.size(), 40u);
  ASSERT_FALSE(a.notes.empty());
  EXPECT_NE(a.notes.back().find("kernels not named beyond 8 MiB decompressed per file"), std::string::npos)
      << a.notes.back();
  FileScan b = scan_bytes(all, "b.fatbin", true, &run);
  EXPECT_EQ(run.decompressed(), 12u << 20);
  ASSERT_FALSE(b.notes.empty());
  EXPECT_NE(b.notes.back().find("beyond 12 MiB decompressed per run"), std::string::npos) << b.notes.back();
}

// #6: threads together hold at most decompressed_at_once (one bigger request runs alone).
TEST(HostileDecompress, BytesHeldAtOnceAcrossThreads) {
  ScanLimits l;
  l.decompressed_at_once = 1000;
  RunBudget run(l);
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < 50; ++i) {
        ASSERT_TRUE(run.acquire(400));
        std::this_thread::yield();
        run.release(400);
      }
    });
  for (auto& t : threads) t.join();
  EXPECT_LE(run.peak_held(), 1000u);
  EXPECT_EQ(run.decompressed(), 8u * 50 * 400);
}

// #15: the mapping is read-only (main mapped PROT_READ|PROT_WRITE).
TEST(MappedFileHostile, MapsReadOnly) {
  std::string path = temp_path("ro.bin");
  std::ofstream(path) << std::string(8192, 'x');
  MappedFile m(path);
  ASSERT_TRUE(m.ok()) << m.error();
  auto addr = reinterpret_cast<uintptr_t>(m.bytes().data());
  std::ifstream maps("/proc/self/maps");
  std::string line, perms;
  while (std::getline(maps, line)) {
    unsigned long lo = 0, hi = 0;
    char p[5] = {};
    if (std::sscanf(line.c_str(), "%lx-%lx %4s", &lo, &hi, p) == 3 && addr >= lo && addr < hi) perms = p;
  }
  EXPECT_EQ(perms.substr(0, 3), "r--");
  unlink(path.c_str());
}

// #15: a 100 GB sparse file maps (a writable private map counts against the commit limit).
TEST(MappedFileHostile, HugeSparseFileMaps) {
  std::string path = temp_path("sparse.bin");
  int fd = open(path.c_str(), O_CREAT | O_WRONLY | O_TRUNC, 0644);
  ASSERT_GE(fd, 0);
  if (ftruncate(fd, 100ll << 30) != 0) {
    close(fd);
    unlink(path.c_str());
    GTEST_SKIP() << "this filesystem has no 100 GB sparse files";
  }
  close(fd);
  MappedFile m(path);
  EXPECT_TRUE(m.ok()) << m.error();
  EXPECT_EQ(m.bytes().size(), 100ull << 30);
  unlink(path.c_str());
}

// #4: a FIFO is refused at once, never waited on (main's open blocked until a writer came).
TEST(MappedFileHostile, FifoIsAnErrorNotAHang) {
  std::string path = temp_path("fifo");
  ASSERT_EQ(mkfifo(path.c_str(), 0644), 0);
  auto done = std::make_shared<std::promise<std::string>>();
  auto result = done->get_future();
  std::thread([done, path] {
    MappedFile m(path);
    done->set_value(m.ok() ? "ok" : m.error());
  }).detach();  // on a hang the thread stays blocked; the test fails below, the process still exits
  ASSERT_EQ(result.wait_for(std::chrono::seconds(10)), std::future_status::ready) << "open blocked on a FIFO";
  EXPECT_EQ(result.get(), "not a regular file (a FIFO)");
  FileScan s = scan_path(path, false);
  EXPECT_EQ(s.error, path + ": not a regular file (a FIFO)");
  unlink(path.c_str());
}

// #10: a truncated library, a bad archive member header and a bogus PTX .version are
// problems with notes saying where, not "no CUDA kernels" in silence.
TEST(HostileCorrupt, TruncatedElfIsCounted) {
  if (!fx::have_nvcc()) GTEST_SKIP() << "no nvcc";
  std::string so = fx::shared("libk80", "-gencode arch=compute_80,code=sm_80");
  std::ifstream in(so, std::ios::binary);
  std::string data((std::istreambuf_iterator<char>(in)), {});
  std::vector<uint8_t> cut(data.begin(), data.begin() + static_cast<long>(data.size() / 2));
  FileScan s = scan_bytes(cut, "cut.so", false);
  EXPECT_GT(s.problems, 0u);
  ASSERT_FALSE(s.notes.empty());
  EXPECT_EQ(s.notes[0].rfind("malformed ELF in cut.so at offset 0x", 0), 0u) << s.notes[0];
  EXPECT_NE(s.notes[0].find("truncated"), std::string::npos) << s.notes[0];
}

TEST(HostileCorrupt, BadArchiveMemberHeaderIsCounted) {
  if (!fx::have_nvcc()) GTEST_SKIP() << "no nvcc";
  std::string o = fx::object("k80", "-gencode arch=compute_80,code=sm_80");
  std::string d = temp_path("ar");
  std::string a = d + "/lib.a";
  std::string cmd = "rm -rf " + d + " && mkdir " + d + " && cd " + d + " && cp " + o + " m1.o && cp " + o +
                    " m2.o && ar rcS lib.a m1.o m2.o";
  ASSERT_EQ(std::system(cmd.c_str()), 0);
  std::ifstream in(a, std::ios::binary);
  std::string data((std::istreambuf_iterator<char>(in)), {});
  FileScan good = scan_bytes(std::vector<uint8_t>(data.begin(), data.end()), "lib.a", false);
  ASSERT_EQ(good.containers.size(), 2u);
  EXPECT_EQ(good.problems, 0u);
  // The second member's header: its size field (10 bytes at 48) gets garbage.
  size_t first_size = std::stoul(data.substr(8 + 48, 10));
  size_t second = 8 + 60 + first_size + (first_size & 1);
  data.replace(second + 48, 10, "zz!!zz!!zz");
  FileScan bad = scan_bytes(std::vector<uint8_t>(data.begin(), data.end()), "lib.a", false);
  EXPECT_EQ(bad.containers.size(), 1u);
  EXPECT_GT(bad.problems, 0u);
  ASSERT_FALSE(bad.notes.empty());
  std::ostringstream want;
  want << "malformed archive in lib.a at offset " << std::hex << "0x" << second << ": bad member header";
  EXPECT_EQ(bad.notes[0].rfind(want.str(), 0), 0u) << bad.notes[0] << "\n" << want.str();
  ASSERT_EQ(std::system(("rm -rf " + d).c_str()), 0);
}

TEST(HostileCorrupt, BogusPtxVersionIsCounted) {
  std::string ptx = ".version 9.x\n.target sm_90\n.address_size 64\n";
  FileScan s = scan_bytes(std::vector<uint8_t>(ptx.begin(), ptx.end()), "k.ptx", false);
  EXPECT_TRUE(s.containers.empty());
  EXPECT_EQ(s.problems, 1u);
  ASSERT_EQ(s.notes.size(), 1u);
  EXPECT_EQ(s.notes[0], "malformed PTX in k.ptx at offset 0x0: bad .version \"9.x\" (expected major.minor)");
}
