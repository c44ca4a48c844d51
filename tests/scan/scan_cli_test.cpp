// End to end: the built cuda-doctor on real nvcc-built fixtures.
#include <sys/wait.h>

#include <cstdio>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include <gtest/gtest.h>

#include <regex>
#include <nlohmann/json.hpp>

#include "binary/nvcc_fixtures.hpp"

namespace {

struct Result {
  int rc = -1;
  std::string out;
};

Result run(const std::string& args) {
  Result r;
  std::string cmd = std::string(CD_BINARY) + " " + args + " 2>/dev/null";
  FILE* p = popen(cmd.c_str(), "r");
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
  int status = pclose(p);
  r.rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

#define NEED_NVCC()                                \
  do {                                             \
    if (!fx::have_nvcc()) {                        \
      GTEST_SKIP() << "no nvcc at " << fx::kNvcc; \
    }                                              \
  } while (0)

}  // namespace

TEST(ScanCli, Sm75ExtensionHasNoKernelImageForH200) {
  NEED_NVCC();
  std::string so = fx::shared("libk75", "-gencode arch=compute_75,code=sm_75");
  Result r = run("scan --no-color " + so + " --gpu H200 --driver 580.159.04");
  EXPECT_EQ(r.rc, 2) << r.out;
  EXPECT_NE(r.out.find("sm_90 no_kernel_image"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("arch.no_kernel_image"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("nvcc -gencode arch=compute_90,code=sm_90"), std::string::npos) << r.out;
}

TEST(ScanCli, SameExtensionRunsOnTuringAndJitsNowhere) {
  NEED_NVCC();
  std::string so = fx::shared("libk75", "-gencode arch=compute_75,code=sm_75");
  Result r = run("scan --no-color " + so + " --gpu \"RTX 2080\"");
  EXPECT_EQ(r.rc, 0) << r.out;
  EXPECT_NE(r.out.find("sm_75 native"), std::string::npos) << r.out;
}

TEST(ScanCli, PtxOnlyIsJitAndAWarning) {
  NEED_NVCC();
  std::string o = fx::object("ptx80", "-gencode arch=compute_80,code=compute_80");
  Result r = run("scan --no-color " + o + " --gpu sm_90 --driver 13.0");
  EXPECT_EQ(r.rc, 0) << r.out;
  EXPECT_NE(r.out.find("arch.jit_only"), std::string::npos) << r.out;
  EXPECT_EQ(run("scan --strict " + o + " --gpu sm_90 --driver 13.0").rc, 1);
  // A driver too old for PTX ISA 9.0 (CUDA 13.0) cannot JIT it: error 222.
  Result old = run("scan --no-color " + o + " --gpu sm_90 --driver 550.54.14");
  EXPECT_EQ(old.rc, 2) << old.out;
  EXPECT_NE(old.out.find("arch.ptx_unsupported"), std::string::npos) << old.out;
  // The fix names the branch and this machine's distribution's command for it (derive/distro.cpp).
  EXPECT_NE(old.out.find("# install NVIDIA driver branch 580 or newer (CUDA 13.0):"), std::string::npos) << old.out;
  EXPECT_TRUE(std::regex_search(old.out, std::regex("install[^\n]*580[^\n]*\n"))) << old.out;
}

TEST(ScanCli, ZstdOnAnOldDriver) {
  NEED_NVCC();
  std::string o = fx::object("compress_size", "-gencode arch=compute_80,code=[sm_80,compute_80] -compress-mode=size");
  Result r = run("scan --no-color " + o + " --gpu A100 --driver 535.104.05");
  EXPECT_EQ(r.rc, 2) << r.out;
  EXPECT_NE(r.out.find("arch.compression_unsupported"), std::string::npos) << r.out;
  // The floor comes from data/arch_rules.toml [[compression]], the command from the distribution.
  EXPECT_NE(r.out.find("# upgrade the NVIDIA driver to 550.54.14 or newer (zstd-compressed kernel images):"), std::string::npos) << r.out;
  EXPECT_TRUE(std::regex_search(r.out, std::regex("install[^\n]*550[^\n]*\n"))) << r.out;
  EXPECT_EQ(run("scan " + o + " --gpu A100 --driver 550.54").rc, 0);
}

TEST(ScanCli, JsonHasImagesVerdictsAndKernels) {
  NEED_NVCC();
  std::string so = fx::shared("libk75", "-gencode arch=compute_75,code=sm_75");
  Result r = run("scan --json --kernels " + so + " --gpu sm_89 --gpu 7.5");
  ASSERT_EQ(r.rc, 2) << r.out;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["schema"], "cuda-doctor/scan/v1");
  ASSERT_EQ(j["binaries"].size(), 1u);
  const auto& b = j["binaries"][0];
  EXPECT_EQ(b["images"][0]["arch"], 75);
  EXPECT_EQ(b["images"][0]["kind"], "sass");
  ASSERT_EQ(b["verdicts"].size(), 2u);
  EXPECT_EQ(b["verdicts"][0]["verdict"], "no_kernel_image");
  EXPECT_EQ(b["verdicts"][1]["verdict"], "native");
  EXPECT_EQ(b["verdicts"][0]["kernels_failing"], nlohmann::json({"_Z6kern_aPf", "_Z6kern_bPi"}));
}

TEST(ScanCli, MalformedFileIsANoteAndTheScanGoesOn) {
  NEED_NVCC();
  std::string fatbin = fx::build("k.fatbin", std::string(fx::kNvcc) +
                                                 " -fatbin k.cu -o \"$OUT\" -gencode arch=compute_89,code=sm_89 "
                                                 "-gencode arch=compute_120,code=compute_120");
  std::string so = fx::shared("libk75", "-gencode arch=compute_75,code=sm_75");
  std::string bad = fx::dir() + "/truncated.fatbin";
  {
    std::ifstream in(fatbin, std::ios::binary);
    std::string data((std::istreambuf_iterator<char>(in)), {});
    std::ofstream(bad, std::ios::binary) << data.substr(0, data.size() / 2);
  }
  Result r = run("scan --no-color " + bad + " " + so + " --gpu sm_75");
  EXPECT_EQ(r.rc, 0) << r.out;
  EXPECT_NE(r.out.find("malformed fatbin in " + bad + " at offset 0x"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("libk75.so"), std::string::npos) << r.out;
}

TEST(ScanCli, BadGpuOrMissingPathCannotRun) {
  EXPECT_EQ(run("scan /dev/null --gpu 'Voodoo 3'").rc, 3);
  EXPECT_EQ(run("scan /nonexistent/lib.so --gpu sm_90").rc, 3);
}

TEST(ScanCli, DirectoryOfRealToolkitLibraries) {
  if (access("/usr/local/cuda/lib64/libcublasLt.so.13", R_OK) != 0) GTEST_SKIP() << "no CUDA 13 toolkit";
  Result r = run("scan --json /usr/local/cuda/lib64 --gpu H200 --driver 580.159.04");
  EXPECT_EQ(r.rc, 0) << "NVIDIA's libraries all serve an H200";
  auto j = nlohmann::json::parse(r.out);
  std::map<std::string, int> containers;
  for (const auto& b : j["binaries"]) containers[b["path"].get<std::string>()] = b["containers"].get<int>();
  // Counts measured with cuobjdump --list-elf of CUDA 13.0 (2782 wrappers in cuBLASLt).
  EXPECT_EQ(containers["/usr/local/cuda/lib64/libcublasLt.so.13"], 2782);
  EXPECT_EQ(containers["/usr/local/cuda/lib64/libcudnn_engines_precompiled.so.9"], 1379);
  EXPECT_FALSE(containers.count("/usr/local/cuda/lib64/libcublasLt.so")) << "symlink deduplicated";
}

// A link that sorts before its file (libbad.so -> libbad.so.1) is not what a note names: the
// walk keeps the real name, and the file is read under it.
TEST(ScanCli, NotesNameTheFileNotALinkToIt) {
  NEED_NVCC();
  std::string so = fx::shared("libk80", "-gencode arch=compute_80,code=sm_80");
  std::ifstream in(so, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string magic("\x50\xed\x55\xba\x01\x00\x10\x00", 8);
  size_t at = bytes.find(magic);
  ASSERT_NE(at, std::string::npos);
  bytes[at + 13] = '\x01';  // the container's size: 2^40 bytes, past the end of the file
  std::string dir = fx::dir() + "/linkfirst." + std::to_string(getpid());
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/libbad.so.1", std::ios::binary) << bytes;
  std::filesystem::create_symlink("libbad.so.1", dir + "/libbad.so");
  Result r = run("scan -v --no-color " + dir + " --gpu H100");
  EXPECT_NE(r.out.find("malformed fatbin in " + dir + "/libbad.so.1 at offset"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find(dir + "/libbad.so "), std::string::npos) << r.out;
  std::filesystem::remove_all(dir);
}

// cuFFT's one ordinary container has SASS sm_75 only; sm_90 is served by its own kernel table
// (.ldata), and the text shows that table beside the verdict it explains.
TEST(ScanCli, TextShowsTheKernelTableAVerdictRestsOn) {
  const char* cufft = "/usr/local/cuda/lib64/libcufft.so.12";
  if (access(cufft, R_OK) != 0) GTEST_SKIP() << "no CUDA 13 toolkit";
  Result r = run(std::string("scan --no-color ") + cufft + " --gpu H100");
  EXPECT_EQ(r.rc, 0) << r.out;
  EXPECT_NE(r.out.find("SASS sm_75  PTX -  → sm_90 native"), std::string::npos) << r.out;
  size_t table = r.out.find("ctr in its own kernel table");
  ASSERT_NE(table, std::string::npos) << r.out;
  std::string line = r.out.substr(table, r.out.find('\n', table) - table);
  EXPECT_NE(line.find(" sm_90 "), std::string::npos) << line;
  EXPECT_NE(line.find("PTX compute_75"), std::string::npos) << line;
}

// Copies of one build (the same size and GNU build-id: a toolkit beside pip's wheels) are read
// once and answered alike; a rebuild of the same size (another build-id) is read.
TEST(ScanCli, CopiesOfOneBuildAreReadOnce) {
  NEED_NVCC();
  fx::big_source();
  std::string link = std::string(fx::kNvcc) +
                     " -shared -Xcompiler -fPIC big.cu -o \"$OUT\" -gencode arch=compute_75,code=sm_75 -gencode "
                     "arch=compute_80,code=sm_80 -gencode arch=compute_86,code=sm_86 -gencode arch=compute_90,code=sm_90 "
                     "-gencode arch=compute_120,code=sm_120 -Xlinker --build-id=0x";
  std::string first = fx::build("libbig_a.so", link + std::string(40, 'a'));
  std::string rebuilt = fx::build("libbig_b.so", link + std::string(40, 'b'));
  ASSERT_FALSE(first.empty());
  ASSERT_FALSE(rebuilt.empty());
  ASSERT_EQ(std::filesystem::file_size(first), std::filesystem::file_size(rebuilt));
  ASSERT_GE(std::filesystem::file_size(first), 1u << 20) << "copies under 1 MiB are read anyway";
  std::string dups = fx::dir() + "/dups." + std::to_string(getpid());
  for (const char* d : {"a", "b", "c"}) std::filesystem::create_directories(dups + "/" + d);
  std::filesystem::copy_file(first, dups + "/a/libbig.so", std::filesystem::copy_options::overwrite_existing);
  std::filesystem::copy_file(first, dups + "/b/libbig.so", std::filesystem::copy_options::overwrite_existing);
  std::filesystem::copy_file(rebuilt, dups + "/c/libbig.so", std::filesystem::copy_options::overwrite_existing);

  Result r = run("scan --json " + dups + " --gpu H100");
  auto j = nlohmann::json::parse(r.out);
  std::map<std::string, nlohmann::json> by;
  for (const auto& b : j["binaries"]) by[b["path"].get<std::string>()] = b;
  ASSERT_EQ(by.size(), 3u) << r.out;
  ASSERT_GE(by[dups + "/a/libbig.so"]["images"].size(), 5u) << r.out;
  EXPECT_EQ(by[dups + "/a/libbig.so"]["same_build_as"], "");
  EXPECT_EQ(by[dups + "/b/libbig.so"]["same_build_as"], dups + "/a/libbig.so");
  EXPECT_EQ(by[dups + "/c/libbig.so"]["same_build_as"], "") << "another build-id is read";
  for (const char* d : {"b", "c"}) {
    EXPECT_EQ(by[dups + "/" + d + "/libbig.so"]["images"], by[dups + "/a/libbig.so"]["images"]) << d;
    EXPECT_EQ(by[dups + "/" + d + "/libbig.so"]["containers"], by[dups + "/a/libbig.so"]["containers"]) << d;
  }
  Result v = run("scan -v --no-color " + dups + " --gpu H100");
  EXPECT_NE(v.out.find("not read: the same build (size, GNU build-id) as " + dups + "/a/libbig.so"), std::string::npos)
      << v.out;
  std::filesystem::remove_all(dups);
}
