// Our scan of the real NVIDIA libraries in /usr/local/cuda/lib64 against the listing
// cuobjdump 13.0 printed for the same libraries on the H200 machine (the command is in
// tests/fixtures/cuobjdump/README.md). Per library: the multiset of (ELF|PTX, arch).
#include <unistd.h>

#include <cstdio>
#include <map>
#include <regex>
#include <string>

#include <gtest/gtest.h>

#include "binary/scan.hpp"
#include "util/root.hpp"

namespace {

using Counts = std::map<std::string, int>;  // "ELF sm_90a" -> n

std::map<std::string, Counts> read_listing() {
  std::string cmd = std::string("gzip -dc ") + CD_FIXTURES + "/cuobjdump/h200_cuobjdump_listing.txt.gz";
  FILE* p = popen(cmd.c_str(), "r");
  std::map<std::string, Counts> out;
  Counts* cur = nullptr;
  std::regex entry(R"(^(ELF|PTX) file\s+\d+: .*\.(sm_\d+[af]?)\.(cubin|ptx)$)");
  char line[4096];
  while (fgets(line, sizeof line, p)) {
    std::string s(line);
    if (!s.empty() && s.back() == '\n') s.pop_back();
    std::smatch m;
    if (s.rfind("== ", 0) == 0) cur = &out[s.substr(3)];
    else if (cur && std::regex_match(s, m, entry)) ++(*cur)[m[1].str() + " " + m[2].str()];
  }
  pclose(p);
  return out;
}

// cuobjdump's names drop the 'f' of ELF entries and keep 'a'; PTX keeps both.
Counts ours(const cd::BinaryScan& b) {
  Counts c;
  for (const auto& img : b.images) {
    if (img.kind == "sass") c["ELF sm_" + std::to_string(img.arch) + (img.suffix == "a" ? "a" : "")] += img.count;
    if (img.kind == "ptx") c["PTX sm_" + std::to_string(img.arch) + img.suffix] += img.count;
  }
  return c;
}

}  // namespace

TEST(CuobjdumpListing, ToolkitLibrariesAgreeWithCuobjdumpOnTheH200) {
  auto listing = read_listing();
  ASSERT_EQ(listing.size(), 56u) << "fixture: 56 libraries with .nv_fatbin on the H200 machine";
  cd::Root host;
  int compared = 0;
  for (const auto& name : host.list("/usr/local/cuda/lib64")) {
    std::string path = "/usr/local/cuda/lib64/" + name;
    if (host.is_symlink(path) || name.find(".so") == std::string::npos) continue;
    // The H200 machine names them libcublasLt.so.13.1.0.3 (toolkit) or libnccl.so.2.28.3 (system).
    std::vector<const Counts*> theirs;
    for (const auto& [p, counts] : listing) {
      std::string base = cd::path_basename(p);
      if (base == name || base.rfind(name + ".", 0) == 0) theirs.push_back(&counts);
    }
    if (theirs.empty()) continue;
    Counts mine = ours(cd::scan_binary(path, false));
    bool agrees = std::any_of(theirs.begin(), theirs.end(), [&](const Counts* t) { return *t == mine; });
    EXPECT_TRUE(agrees) << name << ": our counts differ from cuobjdump's";
    ++compared;
  }
  if (compared == 0) GTEST_SKIP() << "no CUDA 13 libraries in /usr/local/cuda/lib64";
  EXPECT_GE(compared, 14) << "cuBLAS, cuBLASLt, cuDNN, cuFFT, cuRAND, cuSOLVER, cuSPARSE, NCCL…";
}
