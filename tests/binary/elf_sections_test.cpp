// list_sections on the real cuFFT of this machine's toolkit: a linked library with a module
// (.nv_fatbin), its registrations (.nvFatBinSegment) and its own kernel table (.ldata), read
// through libelf from the file's descriptor as the scan reads it.
#include "binary/elf_sections.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <set>
#include <vector>

#include "binary/elf_handle.hpp"
#include "binary/mapped_file.hpp"

namespace cd::bin {
namespace {

const std::string kLib = "/usr/local/cuda/lib64/libcufft.so.12";

std::set<std::string> names(const ElfSections& s) {
  std::set<std::string> out;
  for (const auto& f : s.fatbin) out.emplace(f.name);
  return out;
}

TEST(ElfSections, ListsTheFatbinSectionsAndTheLoadersRelocations) {
  if (access(kLib.c_str(), R_OK) != 0) GTEST_SKIP() << "no " << kLib;
  ASSERT_NE(elf_version(EV_CURRENT), EV_NONE);
  MappedFile file(kLib);
  ASSERT_TRUE(file.ok());
  ElfPtr elf(elf_begin(file.fd(), ELF_C_READ, nullptr));
  ASSERT_TRUE(elf);

  ElfSections linked = list_sections(elf.get(), file.bytes(), true);
  EXPECT_TRUE(linked.error.empty()) << linked.error;
  EXPECT_FALSE(linked.cut);
  EXPECT_TRUE(names(linked).count(".nv_fatbin"));
  EXPECT_TRUE(names(linked).count(".ldata"));
  EXPECT_FALSE(names(linked).count(".text")) << "code is never named";
  EXPECT_FALSE(names(linked).count(".rodata"));
  EXPECT_FALSE(linked.relas.empty()) << ".rela.dyn";
  EXPECT_TRUE(list_sections(elf.get(), file.bytes(), false).relas.empty()) << "an object's relocations are not the loader's";

  // No room for the section name table: an error, nothing listed.
  ElfSections none = list_sections(elf.get(), file.bytes().subspan(0, 4096), true);
  EXPECT_FALSE(none.error.empty());
  EXPECT_TRUE(none.fatbin.empty());
}

// A section whose size runs past the image is named in `cut` and not listed; the rest are.
TEST(ElfSections, ASectionPastTheEndIsCutNotListed) {
  const std::string lib = "/usr/local/cuda/lib64/libcufftw.so.12";
  if (access(lib.c_str(), R_OK) != 0) GTEST_SKIP() << "no " << lib;
  ASSERT_NE(elf_version(EV_CURRENT), EV_NONE);
  MappedFile file(lib);
  ASSERT_TRUE(file.ok());
  std::vector<char> copy(file.bytes().begin(), file.bytes().end());
  ElfPtr elf(elf_memory(copy.data(), copy.size()));
  ASSERT_TRUE(elf);
  Bytes image(reinterpret_cast<const uint8_t*>(copy.data()), copy.size());
  ElfSections whole = list_sections(elf.get(), image, true);
  ASSERT_TRUE(names(whole).count(".nv_fatbin")) << "libcufftw moved its module: this test needs another library";
  EXPECT_FALSE(whole.cut);

  // Its module's header made to lie: .nv_fatbin now runs past the end of the file.
  uint64_t at = 0;
  for (const auto& f : whole.fatbin)
    if (f.name == ".nv_fatbin") at = f.sh.sh_offset;
  Elf_Scn* scn = nullptr;
  while ((scn = elf_nextscn(elf.get(), scn))) {
    GElf_Shdr sh;
    if (gelf_getshdr(scn, &sh) && sh.sh_offset == at && sh.sh_type == SHT_PROGBITS) {
      sh.sh_size = copy.size();  // lies: runs past the end
      ASSERT_TRUE(gelf_update_shdr(scn, &sh));
    }
  }
  ElfSections cut = list_sections(elf.get(), image, true);
  ASSERT_TRUE(cut.cut);
  EXPECT_EQ(cut.cut->name, ".nv_fatbin");
  EXPECT_FALSE(names(cut).count(".nv_fatbin"));
}

}  // namespace
}  // namespace cd::bin
