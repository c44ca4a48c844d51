// Binaries clang built (tests/fixtures/clang, README there): clang writes the host side of CUDA
// itself, so these check what the scanner assumes of nvcc's layout. The fatbin sections are
// found (whole-program and relocatable device code), no fatbin is in a COMDAT group (the walk
// skips grouped sections: may_hold_fatbin), .nvFatBinSegment registers every container (the
// read-ahead's source), and the images and kernel names are what clang was asked for.
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "binary/fatbin.hpp"
#include "binary/mapped_file.hpp"
#include "binary/prefetch.hpp"
#include "binary/scan.hpp"
#include "elf_list.hpp"

namespace cd {
namespace {

const std::string kDir = std::string(CD_FIXTURES) + "/clang/";

std::set<std::string> names(const BinaryScan& s) {
  std::set<std::string> out;
  for (const auto& i : s.images) out.insert(i.name());
  return out;
}

TEST(ClangScan, EveryBinaryHasTheImagesClangWasAskedFor) {
  const std::set<std::string> asked{"sm_80", "sm_86", "compute_80", "compute_86"};
  for (auto [file, format, containers] : {std::tuple{"k.o", "object", 1}, std::tuple{"krdc.o", "object", 1},
                                          std::tuple{"libk2.so", "shared library", 2}}) {
    SCOPED_TRACE(file);
    BinaryScan s = scan_binary(kDir + file, false);
    EXPECT_EQ(s.error, "");
    EXPECT_TRUE(s.notes.empty()) << s.notes.at(0);
    EXPECT_EQ(s.format, format);
    EXPECT_EQ(s.containers, containers);
    EXPECT_EQ(names(s), asked);
    for (const auto& i : s.images)
      if (i.kind == "ptx") {
        EXPECT_EQ(i.ptx_major * 10 + i.ptx_minor, 75) << "clang 14 writes PTX ISA 7.5";
      }
  }
}

TEST(ClangScan, FatbinsSitOutsideComdatGroupsWhereHostStubsSitInThem) {
  for (auto [file, section] : {std::pair{"k.o", ".nv_fatbin"}, std::pair{"krdc.o", "__nv_relfatbin"}}) {
    SCOPED_TRACE(file);
    auto all = fx::elf_sections_of(kDir + file);
    const GElf_Shdr* fatbin = fx::find_section(all, section);
    ASSERT_NE(fatbin, nullptr);
    EXPECT_TRUE(bin::may_hold_fatbin(fatbin->sh_type, fatbin->sh_flags));
    // The template kernel's host stub is in a group: the fixture has groups for the rule to skip.
    bool grouped_text = false;
    for (const auto& s : all) grouped_text |= s.name.starts_with(".text.") && (s.sh.sh_flags & SHF_GROUP);
    EXPECT_TRUE(grouped_text);
  }
}

TEST(ClangScan, NvFatBinSegmentRegistersEveryContainerOfTheLibrary) {
  std::string path = kDir + "libk2.so";
  auto all = fx::elf_sections_of(path);
  const GElf_Shdr* fatbin = fx::find_section(all, ".nv_fatbin");
  const GElf_Shdr* segment = fx::find_section(all, ".nvFatBinSegment");
  ASSERT_TRUE(fatbin && segment);
  bin::MappedFile file(path);
  ASSERT_TRUE(file.ok());
  std::vector<bin::Bytes> relas;
  for (const auto& s : all)
    if (s.sh.sh_type == SHT_RELA && (s.sh.sh_flags & SHF_ALLOC)) relas.push_back(file.bytes().subspan(s.sh.sh_offset, s.sh.sh_size));
  auto offsets = bin::registered_containers(file.bytes().subspan(segment->sh_offset, segment->sh_size), fatbin->sh_addr,
                                            fatbin->sh_size, segment->sh_addr, relas);
  bin::FatbinParse walk = bin::parse_fatbin(file.bytes().subspan(fatbin->sh_offset, fatbin->sh_size), fatbin->sh_offset);
  std::vector<uint64_t> walked;
  for (const auto& c : walk.containers) walked.push_back(c.offset);
  EXPECT_EQ(walked.size(), 2u);
  EXPECT_EQ(offsets, walked);
}

TEST(ClangScan, KernelsNamesBothTranslationUnitsKernels) {
  BinaryScan s = scan_binary(kDir + "libk2.so", true);
  std::set<std::string> kernels;
  for (const auto& g : s.groups) kernels.insert(g.kernels.begin(), g.kernels.end());
  EXPECT_EQ(kernels, (std::set<std::string>{"_Z3addPff", "_Z2tkIiEvPT_", "_Z4add2Pff", "_Z3tk2IiEvPT_"}));
}

}  // namespace
}  // namespace cd
