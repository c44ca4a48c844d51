// libs.* rules on hand-built facts shaped like the H200 machine (system cuDNN 9.14.0 /
// NCCL 2.28.3 in ld.so.cache, torch 2.11.0+cu130 loading the cu13 wheels through its
// DT_RPATH), one test per finding id plus the healthy baseline.
#include <gtest/gtest.h>

#include "derive/libs_view.hpp"
#include "rules/rules.hpp"
#include "rules/run_rule.hpp"

namespace cd {
namespace {

const std::string kVenv = "/opt/torch/.venv";
const std::string kSite = kVenv + "/lib/python3.12/site-packages";
const std::string kSys = "/usr/lib/x86_64-linux-gnu";
const std::string kTorch = "torch 2.11.0+cu130 (/opt/torch/.venv)";

LibraryCopy copy(std::string name, std::string soname, std::string path, std::string real, std::string version,
                 std::string origin, bool cached = false) {
  LibraryCopy c;
  c.name = std::move(name);
  c.soname = std::move(soname);
  c.path = std::move(path);
  c.realpath = std::move(real);
  c.version = std::move(version);
  c.version_source = "test";
  c.origin = std::move(origin);
  c.in_ld_cache = cached;
  return c;
}

LibraryResolution res(std::string consumer, std::string env, std::string name, std::string soname, std::string path,
                      std::string real, std::string via, std::string provided = "") {
  LibraryResolution r;
  r.consumer = std::move(consumer);
  r.env = std::move(env);
  r.requested_by = kSite + "/torch/lib/libtorch_cuda.so";
  r.name = std::move(name);
  r.soname = std::move(soname);
  r.path = std::move(path);
  r.realpath = std::move(real);
  r.via = via;
  r.detail = via;
  r.provided_by = std::move(provided);
  return r;
}

Facts h200() {
  Facts f;
  PythonEnv env;
  env.interpreter = kVenv + "/bin/python3";
  env.prefix = kVenv;
  env.site_packages = {kSite};
  env.torch.version = "2.11.0+cu130";
  env.torch.cuda = "13.0";
  f.pythons.push_back(env);
  f.libs.ld_library_path = {"/usr/local/nvidia/lib64", "/usr/local/nvidia/lib"};
  std::string wcudnn = kSite + "/nvidia/cudnn/lib/libcudnn.so.9", wnccl = kSite + "/nvidia/nccl/lib/libnccl.so.2",
              wrt = kSite + "/nvidia/cu13/lib/libcudart.so.13";
  f.libs.copies = {
      copy("cudnn", "libcudnn.so.9", kSys + "/libcudnn.so.9", kSys + "/libcudnn.so.9.14.0", "9.14.0", "system", true),
      copy("cudnn", "libcudnn_ops.so.9", kSys + "/libcudnn_ops.so.9", kSys + "/libcudnn_ops.so.9.14.0", "9.14.0", "system", true),
      copy("cudnn", "libcudnn.so.9", wcudnn, wcudnn, "9.19.0.56", "wheel:nvidia-cudnn-cu13 (/opt/torch/.venv)"),
      copy("nccl", "libnccl.so.2", kSys + "/libnccl.so.2", kSys + "/libnccl.so.2.28.3", "2.28.3", "system", true),
      copy("nccl", "libnccl.so.2", wnccl, wnccl, "2.28.9", "wheel:nvidia-nccl-cu13 (/opt/torch/.venv)"),
      copy("cudart", "libcudart.so.13", "/usr/local/cuda-13.0/targets/x86_64-linux/lib/libcudart.so.13",
           "/usr/local/cuda-13.0/targets/x86_64-linux/lib/libcudart.so.13.0.96", "13.0.96", "toolkit:/usr/local/cuda-13.0", true),
      copy("cudart", "libcudart.so.13", wrt, wrt, "13.0.96", "wheel:nvidia-cuda-runtime (/opt/torch/.venv)"),
  };
  std::string rp = kSite + "/torch/lib/../../nvidia/";
  f.libs.resolutions = {
      res(kTorch, kVenv, "cudnn", "libcudnn.so.9", rp + "cudnn/lib/libcudnn.so.9", wcudnn, "RPATH",
          "nvidia-cudnn-cu13==9.19.0.56; platform_system == \"Linux\""),
      res(kTorch, kVenv, "nccl", "libnccl.so.2", rp + "nccl/lib/libnccl.so.2", wnccl, "RPATH", "nvidia-nccl-cu13==2.28.9"),
      res(kTorch, kVenv, "cudart", "libcudart.so.13", rp + "cu13/lib/libcudart.so.13", wrt, "RPATH"),
      res("programs without RPATH", "", "cudnn", "libcudnn.so.9", kSys + "/libcudnn.so.9", kSys + "/libcudnn.so.9.14.0", "ld.so.cache"),
      res("programs without RPATH", "", "nccl", "libnccl.so.2", kSys + "/libnccl.so.2", kSys + "/libnccl.so.2.28.3", "ld.so.cache"),
  };
  return f;
}

Findings with_id(const Findings& all, const std::string& id) {
  Findings out;
  for (const auto& f : all)
    if (f.id == id) out.push_back(f);
  return out;
}

bool any_contains(const std::vector<std::string>& v, const std::string& s) {
  for (const auto& x : v)
    if (x.find(s) != std::string::npos) return true;
  return false;
}

bool evidence_contains(const Finding& f, const std::string& s) {
  for (const auto& e : f.evidence)
    if (e.fact.find(s) != std::string::npos) return true;
  return false;
}

TEST(LibsRules, DuplicateCopiesOnTheH200) {
  Findings all = cdtest::run_rule(cd::libs_rules, h200());
  Findings dup = with_id(all, "libs.duplicate_copies");
  ASSERT_EQ(dup.size(), 3u);  // cudnn, nccl (different versions) + one info line for same-version copies
  const Finding& cudnn = dup[0];
  EXPECT_EQ(cudnn.severity, Severity::info);  // torch loads its wheel; the system copy is only in ld.so.cache (policy)
  EXPECT_EQ(cudnn.layer, "libs");
  EXPECT_NE(cudnn.title.find("2 copies of cudnn (9.14.0, 9.19.0.56)"), std::string::npos) << cudnn.title;
  EXPECT_NE(cudnn.title.find(kTorch + " loads 9.19.0.56 from wheel:nvidia-cudnn-cu13"), std::string::npos) << cudnn.title;
  EXPECT_NE(cudnn.title.find("everything else gets 9.14.0 (ld.so.cache)"), std::string::npos) << cudnn.title;
  EXPECT_TRUE(evidence_contains(cudnn, "collect_env` reports cuDNN 9.14.0"));
  EXPECT_TRUE(any_contains(cudnn.fix, "export LD_LIBRARY_PATH=" + kSite + "/torch/lib/../../nvidia/cudnn/lib"));
  EXPECT_TRUE(any_contains(cudnn.fix, "dpkg -S " + kSys + "/libcudnn.so.9.14.0"));
  EXPECT_FALSE(cudnn.explanation.empty());
  EXPECT_NE(dup[1].title.find("nccl (2.28.3, 2.28.9)"), std::string::npos) << dup[1].title;
  EXPECT_EQ(dup[1].severity, Severity::info);
  EXPECT_EQ(dup[2].severity, Severity::info);
  EXPECT_TRUE(evidence_contains(dup[2], "cudart 13.0.96"));
  // Healthy otherwise: torch gets the cuDNN it pins, everything resolves.
  EXPECT_TRUE(with_id(all, "libs.cudnn_mismatch").empty());
  EXPECT_TRUE(with_id(all, "libs.not_found").empty());
  EXPECT_TRUE(with_id(all, "libs.symbol_conflict").empty());
}

TEST(LibsRules, ToolkitNextToWheelsIsOnlyInfo) {
  Facts f = h200();
  f.libs.copies[5].version = "13.0.48";  // toolkit cudart older than the wheel's
  f.libs.resolutions.push_back(res("programs without RPATH", "", "cudart", "libcudart.so.13", f.libs.copies[5].path,
                                   f.libs.copies[5].realpath, "ld.so.cache"));
  Findings dup = with_id(cdtest::run_rule(cd::libs_rules, f), "libs.duplicate_copies");
  ASSERT_EQ(dup.size(), 3u);
  EXPECT_NE(dup[2].title.find("2 copies of cudart (13.0.48, 13.0.96)"), std::string::npos) << dup[2].title;
  EXPECT_EQ(dup[2].severity, Severity::info);
}

// The toolkit's lib dir on LD_LIBRARY_PATH ahead of the wheel's cudart that torch's RUNPATH
// names: check's duplicate-copies finding says LD_LIBRARY_PATH shadows it and how to undo it.
TEST(LibsRules, ToolkitOnLdLibraryPathShadowingTheWheelIsNamed) {
  Facts f = h200();
  f.libs.copies[5].version = "13.0.48";
  f.libs.copies[5].on_ld_library_path = true;
  f.libs.ld_library_path = {"/usr/local/cuda-13.0/targets/x86_64-linux/lib"};
  LibraryResolution& rt = f.libs.resolutions[2];
  rt.path = f.libs.copies[5].path;
  rt.realpath = f.libs.copies[5].realpath;
  rt.via = rt.detail = "LD_LIBRARY_PATH";
  rt.shadowed = kSite + "/torch/lib/../../nvidia/cu13/lib/libcudart.so.13";
  rt.shadowed_via = "RUNPATH of libtorch_cuda.so ($ORIGIN/../../nvidia/cu13/lib)";
  Findings dup = with_id(cdtest::run_rule(cd::libs_rules, f), "libs.duplicate_copies");
  const Finding* cudart = nullptr;
  for (const auto& x : dup)
    if (x.title.find("copies of cudart") != std::string::npos) cudart = &x;
  ASSERT_NE(cudart, nullptr);
  EXPECT_EQ(cudart->severity, Severity::warning);
  EXPECT_NE(cudart->title.find("LD_LIBRARY_PATH's /usr/local/cuda-13.0/targets/x86_64-linux/lib shadows the copy its RUNPATH of "
                               "libtorch_cuda.so ($ORIGIN/../../nvidia/cu13/lib) names"),
            std::string::npos)
      << cudart->title;
  EXPECT_TRUE(evidence_contains(*cudart, "with LD_LIBRARY_PATH unset " + kTorch + " gets " + rt.shadowed));
  EXPECT_TRUE(any_contains(cudart->fix, "unset LD_LIBRARY_PATH"));
  Facts back = facts_from_json_text(facts_to_json_text(f), "test");
  EXPECT_EQ(back.libs.resolutions[2].shadowed, rt.shadowed);
  EXPECT_EQ(back.libs.resolutions[2].shadowed_via, rt.shadowed_via);
}

TEST(LibsRules, SingleCopiesAreQuiet) {
  Facts f = h200();
  f.libs.copies.erase(f.libs.copies.begin(), f.libs.copies.begin() + 2);  // no system cuDNN
  f.libs.copies.erase(f.libs.copies.begin() + 1);                         // no system NCCL
  f.libs.copies.pop_back();                                               // one cudart
  EXPECT_TRUE(with_id(cdtest::run_rule(cd::libs_rules, f), "libs.duplicate_copies").empty());
}

TEST(LibsRules, CudnnMismatchWhenTorchFallsBackToTheSystemCopy) {
  Facts f = h200();
  auto& r = f.libs.resolutions[0];  // the wheel is gone: ld.so.cache gives the system 9.14.0
  r.path = kSys + "/libcudnn.so.9";
  r.realpath = kSys + "/libcudnn.so.9.14.0";
  r.via = r.detail = "ld.so.cache";
  Findings m = with_id(cdtest::run_rule(cd::libs_rules, f), "libs.cudnn_mismatch");
  ASSERT_EQ(m.size(), 1u);
  EXPECT_EQ(m[0].severity, Severity::error);  // older minor than built for
  EXPECT_EQ(m[0].subject, kTorch);
  EXPECT_NE(m[0].title.find("gets cuDNN 9.14.0 but expects 9.19.0.56"), std::string::npos) << m[0].title;
  EXPECT_TRUE(evidence_contains(m[0], "expects cuDNN 9.19.0.56"));
  EXPECT_EQ(m[0].fix.front(), kVenv + "/bin/python3 -m pip install 'nvidia-cudnn-cu13==9.19.0.56'");
}

TEST(LibsRules, CudnnMismatchUsesTheDeepVersionWhenItRan) {
  Facts f = h200();
  f.pythons[0].deep.ran = true;
  f.pythons[0].deep.cudnn_version = "91900";
  EXPECT_TRUE(with_id(cdtest::run_rule(cd::libs_rules, f), "libs.cudnn_mismatch").empty());
  f.pythons[0].deep.cudnn_version = "8907";  // cuDNN 8.9.7 (MAJOR*1000 + MINOR*100 + PATCH): another major
  Findings m = with_id(cdtest::run_rule(cd::libs_rules, f), "libs.cudnn_mismatch");
  ASSERT_EQ(m.size(), 1u);
  EXPECT_EQ(m[0].severity, Severity::error);
  EXPECT_NE(m[0].title.find("cuDNN 8.9.7"), std::string::npos) << m[0].title;
}

// The review bug: LD_LIBRARY_PATH names the system lib dir. torch's libcudnn.so.9 still comes
// from its wheel (DT_RPATH), but the sub-libraries that shim dlopens are searched
// LD_LIBRARY_PATH first, so cudnnGetVersion answers 9.14.0 (tests/loader/cudnn_test.cpp
// shows it with the real libcudnn.so.9).
TEST(LibsRules, SystemCudnnSubLibrariesOnLdLibraryPathBreakTheWheelsShim) {
  Facts f = h200();
  f.libs.ld_library_path = {kSys};
  std::string wgraph = kSite + "/nvidia/cudnn/lib/libcudnn_graph.so.9";
  f.libs.copies.push_back(copy("cudnn", "libcudnn_graph.so.9", kSys + "/libcudnn_graph.so.9", kSys + "/libcudnn_graph.so.9.14.0",
                               "9.14.0", "system", true));
  f.libs.copies.push_back(copy("cudnn", "libcudnn_graph.so.9", wgraph, wgraph, "9.19.0.56", "wheel:nvidia-cudnn-cu13 (/opt/torch/.venv)"));
  LibraryResolution g = res(kTorch, kVenv, "cudnn", "libcudnn_graph.so.9", kSys + "/libcudnn_graph.so.9",
                            kSys + "/libcudnn_graph.so.9.14.0", "LD_LIBRARY_PATH");
  g.requested_by = kSite + "/nvidia/cudnn/lib/libcudnn.so.9";
  f.libs.resolutions.push_back(g);
  Findings m = with_id(cdtest::run_rule(cd::libs_rules, f), "libs.cudnn_mismatch");
  ASSERT_EQ(m.size(), 1u);
  EXPECT_EQ(m[0].severity, Severity::error);
  EXPECT_NE(m[0].title.find("loads cuDNN 9.19.0.56"), std::string::npos) << m[0].title;
  EXPECT_NE(m[0].title.find("sub-libraries 9.14.0 (" + kSys + " via LD_LIBRARY_PATH)"), std::string::npos) << m[0].title;
  EXPECT_TRUE(evidence_contains(m[0], "libcudnn.so.9 dlopens libcudnn_graph.so.9"));
  EXPECT_EQ(m[0].fix.front(), "unset LD_LIBRARY_PATH");
  // The wheel's own graph library next to the shim: healthy again.
  f.libs.resolutions.back().path = f.libs.resolutions.back().realpath = wgraph;
  f.libs.resolutions.back().via = "RUNPATH";
  EXPECT_TRUE(with_id(cdtest::run_rule(cd::libs_rules, f), "libs.cudnn_mismatch").empty());
}

TEST(LibsRules, NotFoundNamesTheWheelToReinstall) {
  Facts f = h200();
  auto& r = f.libs.resolutions[1];
  r.path = r.realpath = "";
  r.via = "not found";
  r.detail = "libnccl.so.2: cannot open shared object file: No such file or directory";
  r.tried = {kSite + "/torch/lib/../../nvidia/nccl/lib/libnccl.so.2"};
  f.libs.copies.erase(f.libs.copies.begin() + 3, f.libs.copies.begin() + 5);
  Findings nf = with_id(cdtest::run_rule(cd::libs_rules, f), "libs.not_found");
  ASSERT_EQ(nf.size(), 1u);
  EXPECT_EQ(nf[0].severity, Severity::error);
  EXPECT_NE(nf[0].title.find("libnccl.so.2 cannot be loaded"), std::string::npos);
  EXPECT_TRUE(evidence_contains(nf[0], "cannot open shared object file"));
  EXPECT_TRUE(evidence_contains(nf[0], "tried " + kSite));
  EXPECT_EQ(nf[0].fix.front(), kVenv + "/bin/python3 -m pip install --force-reinstall 'nvidia-nccl-cu13==2.28.9'");
}

TEST(LibsRules, SymbolConflictFromAnOlderCopyOnLdLibraryPath) {
  // pytorch#111469 in the cu13 layout: the wheel's libcusparse gets an older toolkit
  // libnvJitLink through LD_LIBRARY_PATH although its own directory has the matching one.
  Facts f = h200();
  std::string wdir = kSite + "/nvidia/cu13/lib";
  f.libs.ld_library_path = {"/usr/local/cuda-13.0/lib64", "/usr/local/nvidia/lib64"};
  f.libs.copies.push_back(copy("nvJitLink", "libnvJitLink.so.13", wdir + "/libnvJitLink.so.13", wdir + "/libnvJitLink.so.13",
                               "13.0.88", "wheel:nvidia-nvjitlink (/opt/torch/.venv)"));
  f.libs.copies.push_back(copy("nvJitLink", "libnvJitLink.so.13", "/usr/local/cuda-13.0/lib64/libnvJitLink.so.13",
                               "/usr/local/cuda-13.0/lib64/libnvJitLink.so.13.0.39", "13.0.39", "toolkit:/usr/local/cuda-13.0"));
  LibraryResolution r = res(kTorch, kVenv, "nvJitLink", "libnvJitLink.so.13", "/usr/local/cuda-13.0/lib64/libnvJitLink.so.13",
                            "/usr/local/cuda-13.0/lib64/libnvJitLink.so.13.0.39", "LD_LIBRARY_PATH");
  r.requested_by = wdir + "/libcusparse.so.12";
  f.libs.resolutions.push_back(r);
  Findings sc = with_id(cdtest::run_rule(cd::libs_rules, f), "libs.symbol_conflict");
  ASSERT_EQ(sc.size(), 1u);
  EXPECT_EQ(sc[0].severity, Severity::warning);
  EXPECT_NE(sc[0].title.find("libcusparse.so.12 needs libnvJitLink.so.13 13.0.88"), std::string::npos) << sc[0].title;
  EXPECT_EQ(sc[0].fix.front(), "export LD_LIBRARY_PATH=/usr/local/nvidia/lib64");
  // The same copy from its own directory is fine.
  f.libs.resolutions.back().realpath = wdir + "/libnvJitLink.so.13";
  f.libs.resolutions.back().path = wdir + "/libnvJitLink.so.13";
  EXPECT_TRUE(with_id(cdtest::run_rule(cd::libs_rules, f), "libs.symbol_conflict").empty());
}

TEST(LibsRules, SymbolConflictFromMissingVersionedSymbols) {
  Facts f = h200();
  LibraryResolution r = res(kTorch, kVenv, "nvJitLink", "libnvJitLink.so.12", "/usr/local/cuda-12.1/lib64/libnvJitLink.so.12",
                            "/usr/local/cuda-12.1/lib64/libnvJitLink.so.12.1.105", "LD_LIBRARY_PATH");
  r.requested_by = kSite + "/nvidia/cusparse/lib/libcusparse.so.12";
  r.missing_symbols = {"__nvJitLinkComplete_12_4", "__nvJitLinkCreate_12_4"};
  f.libs.ld_library_path = {"/usr/local/cuda-12.1/lib64"};
  f.libs.resolutions.push_back(r);
  Findings sc = with_id(cdtest::run_rule(cd::libs_rules, f), "libs.symbol_conflict");
  ASSERT_EQ(sc.size(), 1u);
  EXPECT_EQ(sc[0].severity, Severity::error);
  EXPECT_TRUE(evidence_contains(sc[0], "undefined: __nvJitLinkComplete_12_4, __nvJitLinkCreate_12_4 (version libnvJitLink.so.12)"));
  EXPECT_EQ(sc[0].fix.front(), "unset LD_LIBRARY_PATH");
}

TEST(LibsRules, TwoCopiesMappedInOneProcessIsAnError) {
  Facts f = h200();
  f.pythons[0].deep.ran = true;
  f.pythons[0].deep.loaded_libraries = {kSite + "/nvidia/nccl/lib/libnccl.so.2", kSys + "/libnccl.so.2.28.3"};
  Findings dup = with_id(cdtest::run_rule(cd::libs_rules, f), "libs.duplicate_copies");
  ASSERT_FALSE(dup.empty());
  EXPECT_EQ(dup[0].severity, Severity::error);
  EXPECT_NE(dup[0].title.find("2 copies of nccl are loaded in one python process"), std::string::npos) << dup[0].title;
  f.pythons[0].deep.loaded_libraries.pop_back();  // the healthy H200 baseline: one copy each
  Findings healthy = with_id(cdtest::run_rule(cd::libs_rules, f), "libs.duplicate_copies");
  for (const auto& x : healthy) EXPECT_NE(x.severity, Severity::error);
  ASSERT_GE(healthy.size(), 2u);
  EXPECT_TRUE(evidence_contains(healthy[1], kSite + "/nvidia/nccl/lib/libnccl.so.2 is mapped in the process"));
}

// --pid: the files come from /proc/PID/maps, which says what is mapped and not which rule found
// it, so the finding names the directories and no empty "via" (as on the H200, 2026-12-06).
TEST(LibsRules, CudnnMismatchInALiveProcessSaysNoEmptyVia) {
  ProcessLibs p;
  p.subject = "pid 4242 (python3)";
  p.kind = "pid";
  auto mapped = [](std::string path, std::string soname, std::string version) {
    LoadedLibrary l;
    l.path = l.realpath = std::move(path);
    l.soname = std::move(soname);
    l.family = "cudnn";
    l.version = std::move(version);
    return l;
  };
  p.mapped = {mapped(kSite + "/nvidia/cudnn/lib/libcudnn.so.9", "libcudnn.so.9", "9.19.0.56"),
              mapped(kSys + "/libcudnn_graph.so.9.14.0", "libcudnn_graph.so.9", "9.14.0")};
  Facts f;
  ProcessView v = derive_libs_view(p, f);
  Findings m = with_id(libs_process_rules(v), "libs.cudnn_mismatch");
  ASSERT_EQ(m.size(), 1u);
  EXPECT_NE(m[0].title.find("are 9.14.0 (" + kSys + "): the first cuDNN call fails"), std::string::npos) << m[0].title;
  for (const auto& e : m[0].evidence) EXPECT_EQ(e.fact.find(" via"), std::string::npos) << e.fact;
}

TEST(LibsRules, FactsRoundTripKeepsEveryLibsField) {
  Facts f = h200();
  f.libs.copies[0].also_at = {"/lib/x86_64-linux-gnu"};
  f.libs.resolutions[0].tried = {"/x/libcudnn.so.9"};
  Facts back = facts_from_json_text(facts_to_json_text(f), "test");
  EXPECT_EQ(back.libs.copies[0].also_at, f.libs.copies[0].also_at);
  EXPECT_TRUE(back.libs.copies[0].in_ld_cache);
  EXPECT_EQ(back.libs.resolutions[0].provided_by, f.libs.resolutions[0].provided_by);
  EXPECT_EQ(back.libs.resolutions[0].tried, f.libs.resolutions[0].tried);
  EXPECT_EQ(back.libs.ld_library_path, f.libs.ld_library_path);
}

}  // namespace
}  // namespace cd
