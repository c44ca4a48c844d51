// binary/prefetch's archive read-ahead on real archives: `ar` builds them from nvcc objects
// here, and CUDA's own libcudart_static.a; libelf's elf_getarsym is the oracle for the
// symbol table's member offsets. From a cold page cache the read-ahead brings in each
// member's headers and fatbin header chains and not its images, and the scan of the
// archive that follows gives exactly the answer of a scan of the same bytes in memory.
// Hostile symbol tables stay bounded.
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

#include "binary/file_scan.hpp"
#include "binary/mapped_file.hpp"
#include "binary/prefetch.hpp"
#include "nvcc_fixtures.hpp"
#include "page_cache.hpp"

namespace cd::bin {
namespace {

// The member offsets of every symbol in the archive's table, as libelf reads them.
std::vector<uint64_t> libelf_armap(const std::string& path) {
  std::vector<uint64_t> out;
  elf_version(EV_CURRENT);
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return out;
  if (Elf* ar = elf_begin(fd, ELF_C_READ, nullptr)) {
    size_t n = 0;
    Elf_Arsym* s = elf_getarsym(ar, &n);
    for (size_t i = 0; s && i < n; ++i)
      if (s[i].as_name) out.push_back(s[i].as_off);  // the last entry is a terminator without a name
    elf_end(ar);
  }
  close(fd);
  return out;
}

std::vector<uint8_t> read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// An archive of four objects of big.cu (fx::big_source), each for three GPUs.
std::string big_archive() {
  fx::big_source();
  return fx::build("libbig.a", std::string(fx::kNvcc) +
                                   " -c big.cu -o big0.o -gencode arch=compute_75,code=sm_75 -gencode "
                                   "arch=compute_80,code=sm_80 -gencode arch=compute_90,code=sm_90 && "
                                   "cp big0.o big1.o && cp big0.o big2.o && cp big0.o big3.o && "
                                   "rm -f \"$OUT\" && ar rcs \"$OUT\" big0.o big1.o big2.o big3.o");
}

TEST(ArchivePrefetch, SymbolTableOffsetsAreLibelfs) {
  std::vector<std::string> archives{"/usr/local/cuda/lib64/libcudart_static.a"};
  if (fx::have_nvcc()) archives.push_back(big_archive());
  int checked = 0;
  for (const auto& path : archives) {
    if (path.empty() || access(path.c_str(), R_OK) != 0) continue;
    MappedFile file(path);
    ASSERT_TRUE(file.ok()) << path;
    std::vector<uint64_t> want = libelf_armap(path);
    ASSERT_FALSE(want.empty()) << path;
    EXPECT_EQ(armap_members(file.bytes()), want) << path;
    ++checked;
  }
  if (checked == 0) GTEST_SKIP() << "no archive: neither libcudart_static.a nor nvcc";
}

TEST(ArchivePrefetch, ReadsHeadersNotImagesAndIsANoOpWhenResident) {
  if (!fx::have_nvcc()) GTEST_SKIP() << "no nvcc at " << fx::kNvcc;
  std::string path = big_archive();
  ASSERT_FALSE(path.empty());
  FileScan warm = scan_path(path, false);
  ASSERT_EQ(warm.containers.size(), 4u);
  pc::evict(path);
  MappedFile file(path);
  ASSERT_TRUE(file.ok());
  advise(file.bytes(), MADV_RANDOM);
  if (pc::resident(file.bytes()) > pc::page()) GTEST_SKIP() << "the pages stayed in memory (another process maps it)";
  ArchivePrefetch first = prefetch_archive(file.bytes(), file.fd(), 4);
  EXPECT_FALSE(first.resident);
  EXPECT_EQ(first.members, 4u);
  EXPECT_EQ(first.headers, 4u * 4) << "each member: a container header and three entry headers";
  for (const auto& c : warm.containers) {
    EXPECT_TRUE(pc::page_resident(file.bytes(), c.file_offset)) << "container at " << c.file_offset;
    for (const auto& e : c.entries) EXPECT_TRUE(pc::page_resident(file.bytes(), c.file_offset + 16 + (e.offset - c.entries[0].offset)));
  }
  size_t in = pc::resident(file.bytes()), all = file.bytes().size();
  EXPECT_LT(in * 5, all) << in << " of " << all << " bytes read: the images too";
  ArchivePrefetch second = prefetch_archive(file.bytes(), file.fd(), 4);
  EXPECT_TRUE(second.resident);
  EXPECT_EQ(second.members, 0u);
}

// A cold scan (with the read-ahead, mapped) and a scan of the bytes in memory (without) agree.
TEST(ArchivePrefetch, ColdScanGivesTheAnswerOfTheBytes) {
  if (!fx::have_nvcc()) GTEST_SKIP() << "no nvcc at " << fx::kNvcc;
  std::string path = big_archive();
  ASSERT_FALSE(path.empty());
  pc::evict(path);
  FileScan mapped = scan_path(path, false);
  std::vector<uint8_t> bytes = read_all(path);
  FileScan memory = scan_bytes(Bytes(bytes.data(), bytes.size()), path, false);
  ASSERT_EQ(mapped.containers.size(), 4u);
  ASSERT_EQ(mapped.containers.size(), memory.containers.size());
  for (size_t i = 0; i < mapped.containers.size(); ++i) {
    EXPECT_EQ(mapped.containers[i].file_offset, memory.containers[i].file_offset);
    ASSERT_EQ(mapped.containers[i].entries.size(), 3u);
    for (size_t k = 0; k < 3; ++k) EXPECT_EQ(mapped.containers[i].entries[k].arch, memory.containers[i].entries[k].arch);
  }
  EXPECT_EQ(mapped.format, "archive");
  EXPECT_EQ(mapped.notes, memory.notes);
}

// "!<arch>\n" and a symbol table member named `name` holding `table`, then `tail`.
std::vector<uint8_t> archive_with(const std::string& name, const std::vector<uint8_t>& table, size_t tail = 0,
                                  std::string size_field = "") {
  std::string header = name;
  header.resize(48, ' ');
  if (size_field.empty()) size_field = std::to_string(table.size());
  size_field.resize(10, ' ');
  header += size_field + "`\n";
  std::vector<uint8_t> out{'!', '<', 'a', 'r', 'c', 'h', '>', '\n'};
  out.insert(out.end(), header.begin(), header.end());
  out.insert(out.end(), table.begin(), table.end());
  out.resize(out.size() + tail, 0);
  return out;
}

std::vector<uint8_t> big_endian(std::vector<uint64_t> values, int width) {
  std::vector<uint8_t> out;
  for (uint64_t v : values)
    for (int i = width - 1; i >= 0; --i) out.push_back(static_cast<uint8_t>(v >> (8 * i)));
  return out;
}

TEST(ArchivePrefetch, HostileSymbolTablesStayBounded) {
  auto offsets = [](const std::vector<uint8_t>& a) { return armap_members(Bytes(a.data(), a.size())); };
  // 32-bit and 64-bit tables; an offset past the end of the file is dropped.
  EXPECT_EQ(offsets(archive_with("/", big_endian({2, 100, 999999}, 4), 200)), (std::vector<uint64_t>{100}));
  EXPECT_EQ(offsets(archive_with("/SYM64/", big_endian({2, 100, 120}, 8), 200)), (std::vector<uint64_t>{100, 120}));
  // A count the table cannot hold, a size past the end, a size that is not a number, no table.
  EXPECT_TRUE(offsets(archive_with("/", big_endian({0xffffffff, 100}, 4), 200)).empty());
  EXPECT_TRUE(offsets(archive_with("/", big_endian({1, 100}, 4), 200, "99999999")).empty());
  EXPECT_TRUE(offsets(archive_with("/", big_endian({1, 100}, 4), 200, "x")).empty());
  EXPECT_TRUE(offsets(archive_with("//", big_endian({1, 100}, 4), 200)).empty());
  EXPECT_TRUE(offsets(std::vector<uint8_t>{'!', '<', 'a', 'r', 'c', 'h', '>', '\n', '/'}).empty());
}

}  // namespace
}  // namespace cd::bin
