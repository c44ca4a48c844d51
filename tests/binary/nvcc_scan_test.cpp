// Real fixtures built by the local nvcc 13.0: the scan must find exactly the
// architectures, kinds and compressions the test asked nvcc for.
#include <unistd.h>

#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "binary/scan.hpp"
#include "binary/verdict.hpp"
#include "kb/arch.hpp"
#include "kb/kb.hpp"
#include "binary/nvcc_fixtures.hpp"

using namespace cd;

namespace {

#define NEED_NVCC()                                \
  do {                                             \
    if (!fx::have_nvcc()) {                        \
      GTEST_SKIP() << "no nvcc at " << fx::kNvcc; \
    }                                              \
  } while (0)

// "sm_90a", "compute_90" … of a scan.
std::set<std::string> archs(const BinaryScan& s) {
  std::set<std::string> out;
  for (const auto& i : s.images) out.insert(i.name());
  return out;
}

std::string compression_of(const BinaryScan& s, const std::string& name) {
  for (const auto& i : s.images)
    if (i.name() == name) return i.compression;
  return "?";
}

}  // namespace

TEST(NvccScan, GencodeSetWithArchAndFamilyTargets) {
  NEED_NVCC();
  std::string o = fx::object("multi", "-gencode arch=compute_75,code=sm_75 -gencode arch=compute_90a,code=sm_90a "
                                      "-gencode arch=compute_100f,code=sm_100f -gencode arch=compute_90,code=compute_90");
  BinaryScan s = scan_binary(o, false);
  EXPECT_EQ(s.format, "object");
  EXPECT_TRUE(s.notes.empty()) << s.notes.at(0);
  EXPECT_EQ(s.containers, 1);
  EXPECT_EQ(archs(s), (std::set<std::string>{"sm_75", "sm_90a", "sm_100f", "compute_90"}));
  for (const auto& i : s.images)
    if (i.kind == "ptx") {
      EXPECT_EQ(i.ptx_major * 10 + i.ptx_minor, 90) << "nvcc 13.0 emits PTX ISA 9.0";
    }
}

TEST(NvccScan, PtxOnly) {
  NEED_NVCC();
  std::string o = fx::object("ptx80", "-gencode arch=compute_80,code=compute_80");
  BinaryScan s = scan_binary(o, false);
  EXPECT_EQ(archs(s), (std::set<std::string>{"compute_80"}));
}

// nvcc -compress-mode, measured on 13.0: none: nothing; speed: PTX LZ4;
// size: everything zstd; default: PTX zstd, cubins raw.
TEST(NvccScan, EveryCompressMode) {
  NEED_NVCC();
  struct Case {
    std::string mode, sass, ptx;
  };
  for (const Case& c : {Case{"none", "none", "none"}, Case{"speed", "none", "lz4"}, Case{"size", "zstd", "zstd"},
                        Case{"default", "none", "zstd"}}) {
    std::string o = fx::object("compress_" + c.mode,
                               "-gencode arch=compute_80,code=[sm_80,compute_80] -compress-mode=" + c.mode);
    BinaryScan s = scan_binary(o, true);
    EXPECT_EQ(archs(s), (std::set<std::string>{"sm_80", "compute_80"})) << c.mode;
    EXPECT_EQ(compression_of(s, "sm_80"), c.sass) << c.mode;
    EXPECT_EQ(compression_of(s, "compute_80"), c.ptx) << c.mode;
    // --kernels decompresses one image per container and reads its symbols.
    ASSERT_EQ(s.groups.size(), 1u);
    EXPECT_EQ(s.groups[0].kernels, (std::vector<std::string>{"_Z6kern_aPf", "_Z6kern_bPi"})) << c.mode;
    EXPECT_TRUE(s.notes.empty()) << c.mode << ": " << s.notes.at(0);
  }
}

TEST(NvccScan, KernelsFromPtxWhenNoSass) {
  NEED_NVCC();
  std::string o = fx::object("ptx80", "-gencode arch=compute_80,code=compute_80");
  BinaryScan s = scan_binary(o, true);
  ASSERT_EQ(s.groups.size(), 1u);
  EXPECT_EQ(s.groups[0].kernels, (std::vector<std::string>{"_Z6kern_aPf", "_Z6kern_bPi"}));
}

TEST(NvccScan, RdcObjectAndStaticArchive) {
  NEED_NVCC();
  std::string rdc = fx::object("rdc", "-rdc=true -gencode arch=compute_86,code=sm_86");
  BinaryScan s = scan_binary(rdc, false);
  EXPECT_EQ(archs(s), (std::set<std::string>{"sm_86"})) << "__nv_relfatbin section";
  std::string plain = fx::object("plain89", "-gencode arch=compute_89,code=sm_89");
  ASSERT_FALSE(plain.empty());
  std::string lib = fx::build("libk.a", "ar rcs \"$OUT\" rdc.o plain89.o");
  BinaryScan a = scan_binary(lib, false);
  EXPECT_EQ(a.format, "archive");
  EXPECT_EQ(a.containers, 2);
  EXPECT_EQ(archs(a), (std::set<std::string>{"sm_86", "sm_89"}));
}

TEST(NvccScan, ExecutableAndSharedLibrary) {
  NEED_NVCC();
  std::string exe = fx::build("kexe", std::string(fx::kNvcc) + " -DWITH_MAIN k.cu -o \"$OUT\" -gencode arch=compute_120,code=sm_120");
  BinaryScan e = scan_binary(exe, false);
  EXPECT_EQ(archs(e), (std::set<std::string>{"sm_120"}));
  EXPECT_NE(e.format, "object");
  std::string so = fx::shared("libk75", "-gencode arch=compute_75,code=sm_75");
  BinaryScan l = scan_binary(so, false);
  EXPECT_EQ(l.format, "shared library");
  EXPECT_EQ(archs(l), (std::set<std::string>{"sm_75"}));
}

// check reads a container only until its verdict for the local GPUs is settled (ReadFocus):
// the verdicts are the ones a full read gives, with fewer entries read.
TEST(NvccScan, CheckReadsAContainerOnlyUntilTheGpusSassIsFound) {
  NEED_NVCC();
  std::string so = fx::shared("libk4", "-gencode arch=compute_75,code=sm_75 -gencode arch=compute_90,code=sm_90 "
                                       "-gencode arch=compute_100,code=sm_100 -gencode arch=compute_100,code=compute_100");
  const ArchRules& rules = arch_rules(Kb::get());
  DriverTarget driver{13000, "580.159.04"};
  auto scan_for = [&](const std::vector<GpuTarget>& gpus, bool asked) {
    bin::ReadFocus focus;
    if (asked) focus.set({{}, native_on_all(gpus, driver, rules)});
    ScanOptions o;
    o.focus = &focus;
    auto found = scan_paths({so}, o);
    return found.size() == 1 ? found[0] : BinaryScan{};
  };
  BinaryScan full = scan_binary(so, false);
  ASSERT_EQ(archs(full), (std::set<std::string>{"sm_75", "sm_90", "sm_100", "compute_100"}));
  EXPECT_EQ(full.containers_cut, 0);

  // An H200: SASS sm_90 settles it; the entries after it are not read.
  std::vector<GpuTarget> h200{{90, "NVIDIA H200"}};
  BinaryScan cut = scan_for(h200, true);
  EXPECT_EQ(cut.containers, full.containers);
  EXPECT_EQ(cut.containers_cut, full.containers);
  EXPECT_TRUE(archs(cut).count("sm_90"));
  EXPECT_LT(archs(cut).size(), archs(full).size()) << "read beyond sm_90";
  EXPECT_EQ(judge_binary(cut, h200[0], driver, rules).verdict, judge_binary(full, h200[0], driver, rules).verdict);

  // A GPU nothing here runs natively (sm_120: only PTX JIT) settles nothing: all is read.
  std::vector<GpuTarget> b{{120, ""}};
  BinaryScan all = scan_for(b, true);
  EXPECT_EQ(all.containers_cut, 0);
  EXPECT_EQ(archs(all), archs(full));
  EXPECT_EQ(judge_binary(all, b[0], driver, rules).verdict, Verdict::jit);

  // Both GPUs in one machine: the walk stops only where both are served (never, here).
  std::vector<GpuTarget> both{{90, ""}, {120, ""}};
  EXPECT_EQ(scan_for(both, true).containers_cut, 0);

  // The question not asked yet (the driver child has not answered): everything is read.
  BinaryScan early = scan_for(h200, false);
  EXPECT_EQ(early.containers_cut, 0);
  EXPECT_EQ(archs(early), archs(full));
}

// cuFFT keeps its kernels in its own table in .ldata (23,983 containers in 13.0's, sm_90 SASS
// first at container 10,899): any container there that serves the GPU settles the library's
// verdict, so check probes the table for one and walks from there. The real library of this
// machine's toolkit.
TEST(NvccScan, CheckStopsALibrarysOwnKernelTableAtTheFirstContainerForTheGpu) {
  const std::string cufft = "/usr/local/cuda/lib64/libcufft.so.12";
  if (access(cufft.c_str(), R_OK) != 0) GTEST_SKIP() << "no " << cufft;
  const ArchRules& rules = arch_rules(Kb::get());
  DriverTarget driver{13000, "580.159.04"};
  GpuTarget h200{90, "NVIDIA H200"};
  // check's scan of one file, asked about one GPU.
  auto scan_for = [&](const std::string& path, const GpuTarget& gpu) {
    bin::ReadFocus focus;
    focus.set({{gpu.sm}, native_on_all({gpu}, driver, rules)});
    ScanOptions o;
    o.focus = &focus;
    return scan_paths({path}, o);
  };
  auto found = scan_for(cufft, h200);
  ASSERT_EQ(found.size(), 1u);
  BinaryScan full = scan_binary(cufft, false);
  ASSERT_GT(full.dispatch_containers, 1000) << "cuFFT's table moved: this test needs another library";
  EXPECT_FALSE(full.dispatch_cut);
  EXPECT_TRUE(found[0].dispatch_cut);
  EXPECT_LT(found[0].dispatch_containers, full.dispatch_containers);
  EXPECT_EQ(found[0].cut_for, std::vector<int>{90});
  EXPECT_EQ(judge_binary(found[0], h200, driver, rules).verdict, judge_binary(full, h200, driver, rules).verdict);
  EXPECT_EQ(judge_binary(found[0], h200, driver, rules).verdict, Verdict::native);
  // Its sm_90 run lies 162 MiB in: a probe lands in it, so the walk reads one container, not 10,900.
  EXPECT_EQ(found[0].dispatch_containers, 1);

  // A GPU no container serves natively (sm_60): no probe answers, the whole table is walked,
  // and the verdict is the full read's.
  GpuTarget p100{60, "Tesla P100"};
  auto old_found = scan_for(cufft, p100);
  ASSERT_EQ(old_found.size(), 1u);
  EXPECT_EQ(old_found[0].dispatch_containers, full.dispatch_containers);
  EXPECT_EQ(judge_binary(old_found[0], p100, driver, rules).verdict, judge_binary(full, p100, driver, rules).verdict);

  // cuBLASLt's modules serve sm_90 natively: its 106 MiB of .ldata/.lrodata (no container in them)
  // is not searched at all, and its verdict is the full read's.
  const std::string lt = "/usr/local/cuda/lib64/libcublasLt.so.13";
  if (access(lt.c_str(), R_OK) != 0) return;
  auto lt_found = scan_for(lt, h200);
  ASSERT_EQ(lt_found.size(), 1u);
  BinaryScan lt_full = scan_binary(lt, false);
  EXPECT_TRUE(lt_found[0].dispatch_cut);
  EXPECT_EQ(lt_found[0].dispatch_containers, lt_full.dispatch_containers);
  EXPECT_EQ(lt_found[0].containers, lt_full.containers);
  EXPECT_EQ(judge_binary(lt_found[0], h200, driver, rules).verdict, judge_binary(lt_full, h200, driver, rules).verdict);
  EXPECT_EQ(judge_binary(lt_found[0], h200, driver, rules).detail, judge_binary(lt_full, h200, driver, rules).detail);
}

// check opens only what the loader maps: objects and archives are never read.
TEST(NvccScan, LoadableOnlySkipsObjectsAndArchives) {
  NEED_NVCC();
  std::string so = fx::shared("libk75", "-gencode arch=compute_75,code=sm_75");
  std::string o = fx::object("plain89", "-gencode arch=compute_89,code=sm_89");
  ScanOptions all, loadable;
  loadable.loadable_only = true;
  std::string dir = fx::dir();
  auto names = [](const std::vector<BinaryScan>& v) {
    std::set<std::string> out;
    for (const auto& b : v) out.insert(b.path.substr(b.path.rfind('/') + 1));
    return out;
  };
  auto every = names(scan_paths({dir}, all)), some = names(scan_paths({dir}, loadable));
  EXPECT_TRUE(every.count("plain89") || every.count("plain89.o")) << "the object is a candidate for scan";
  EXPECT_TRUE(some.count("libk75") || some.count("libk75.so"));
  for (const auto& n : some) EXPECT_TRUE(loadable_name(n, true)) << n;
  EXPECT_LT(some.size(), every.size());
}

TEST(NvccScan, BareCubinFatbinAndPtxFiles) {
  NEED_NVCC();
  std::string cubin = fx::build("k90a.cubin", std::string(fx::kNvcc) + " -cubin -arch=sm_90a k.cu -o \"$OUT\"");
  BinaryScan c = scan_binary(cubin, true);
  EXPECT_EQ(c.format, "cubin");
  EXPECT_EQ(archs(c), (std::set<std::string>{"sm_90a"})) << ".nv.compat attribute 9 marks 'a'";
  ASSERT_EQ(c.groups.size(), 1u);
  EXPECT_EQ(c.groups[0].kernels.size(), 2u);
  std::string cubin103 = fx::build("k103.cubin", std::string(fx::kNvcc) + " -cubin -arch=sm_103 k.cu -o \"$OUT\"");
  EXPECT_EQ(archs(scan_binary(cubin103, false)), (std::set<std::string>{"sm_103"}));

  std::string fatbin = fx::build("k.fatbin", std::string(fx::kNvcc) +
                                                 " -fatbin k.cu -o \"$OUT\" -gencode arch=compute_89,code=sm_89 "
                                                 "-gencode arch=compute_120,code=compute_120");
  BinaryScan f = scan_binary(fatbin, false);
  EXPECT_EQ(f.format, "fatbin");
  EXPECT_EQ(archs(f), (std::set<std::string>{"sm_89", "compute_120"}));

  std::string ptx = fx::build("k.ptx", std::string(fx::kNvcc) + " -ptx -arch=compute_90 k.cu -o \"$OUT\"");
  BinaryScan p = scan_binary(ptx, true);
  EXPECT_EQ(p.format, "ptx");
  EXPECT_EQ(archs(p), (std::set<std::string>{"compute_90"}));
}

TEST(NvccScan, DirectoryWalkDedupesSymlinksAndSurvivesLoops) {
  NEED_NVCC();
  std::string so = fx::shared("libk75", "-gencode arch=compute_75,code=sm_75");
  ASSERT_FALSE(so.empty());
  std::string d = fx::dir() + "/walk";
  std::system(("rm -rf '" + d + "' && mkdir -p '" + d + "/sub' && cp '" + so + "' '" + d + "/libk.so.1' && ln -s libk.so.1 '" +
               d + "/libk.so' && ln -s .. '" + d + "/sub/loop' && echo 'print(1)' > '" + d + "/x.py'")
                  .c_str());
  ScanStats stats;
  auto found = scan_paths({d}, ScanOptions{}, &stats);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].path, d + "/libk.so.1") << "the real name wins over the symlink";
  EXPECT_EQ(stats.files_examined, 1u) << "x.py is never opened";
}
