// Generated layouts against the real loader. From a seed, each layout places random
// copies of four libraries (each built with random DT_NEEDED, DT_RPATH and/or DT_RUNPATH
// made of $ORIGIN-relative and absolute directories) in random directories, glibc-hwcaps
// subdirectories and behind symlinks, picks an executable, an LD_LIBRARY_PATH and
// dlopen calls made by the executable or by a library (whose RPATH/RUNPATH then
// applies). The executable really runs; every file it maps (/proc/self/maps) and the
// outcome of every dlopen must equal the emulation's answer.
//   CD_LOADER_SEED=N CD_LOADER_LAYOUTS=M ctest -R Generated   (defaults 15, 200)
#include <gtest/gtest.h>

#include <random>
#include <set>
#include <sstream>

#include "loader/elf_fixtures.hpp"
#include "loader/loader.hpp"
#include "util/strings.hpp"

namespace cd {
namespace {

using namespace cd::testing;

const std::vector<std::string> kNames = {"A", "B", "C", "D"};
constexpr int kDirs = 5;     // d0 … d4 under the layout root
constexpr int kVariants = 4;  // builds per library

std::string canon(const std::string& p) {
  std::error_code ec;
  auto c = fs::canonical(p, ec);
  return ec ? p : c.string();
}

std::string env_or(const char* name, const std::string& fallback) {
  const char* v = getenv(name);
  return v && *v ? v : fallback;
}

// The subdirectories the real ld.so tries, from its own LD_DEBUG trace.
std::vector<std::string> real_subdirs() {
  auto r = sh("env -i LD_DEBUG=libs LD_LIBRARY_PATH=/nonexistent-cd-gen /bin/true");
  return subdirs_from_ld_debug(r.out, "/nonexistent-cd-gen");
}

class Generated : public ::testing::Test {
 protected:
  static inline TempDir* t = nullptr;
  static inline std::string layout;  // root of the current layout (wiped per layout)
  static inline std::map<std::string, std::vector<std::string>> pool;  // "A" → built variants
  static inline std::vector<std::string> exes;
  static inline std::vector<std::string> helpers;
  static inline std::string build_error;

  static std::string search_list(std::mt19937& rng) {
    std::vector<std::string> parts;
    int n = 1 + static_cast<int>(rng() % 2);
    for (int i = 0; i < n; ++i) {
      int d = static_cast<int>(rng() % kDirs);
      switch (rng() % 4) {
        case 0: parts.push_back("$ORIGIN"); break;
        case 1: parts.push_back("$ORIGIN/../d" + std::to_string(d)); break;
        case 2: parts.push_back("${ORIGIN}/../d" + std::to_string(d)); break;
        default: parts.push_back(layout + "/d" + std::to_string(d)); break;
      }
    }
    return join(parts);
  }
  static std::string join(const std::vector<std::string>& v) {
    std::string s;
    for (const auto& x : v) s += (s.empty() ? "" : ":") + x;
    return s;
  }
  // Random RPATH / RUNPATH / both / none as linker flags.
  static std::string paths(std::mt19937& rng) {
    switch (rng() % 4) {
      case 0: return "";
      case 1: return " -Wl,--disable-new-dtags,-rpath," + quote(search_list(rng));
      case 2: return " -Wl,--enable-new-dtags,-rpath," + quote(search_list(rng));
      default:  // RUNPATH and DF_1_NODEFLIB: no ld.so.cache, no default dirs for its dependencies
        return " -Wl,--enable-new-dtags,-rpath," + quote(search_list(rng)) + " -Wl,-z,nodefaultlib";
    }
  }
  static bool gcc(const std::string& cmd) {
    auto r = sh(cmd);
    if (r.rc != 0 && build_error.empty()) build_error = cmd + "\n" + r.out;
    return r.rc == 0;
  }

  static void SetUpTestSuite() {
    t = new TempDir;
    layout = *t / "L";
    std::mt19937 rng(4242);
    std::string stub = *t / "stub";
    fs::create_directories(stub);
    write_file(*t / "empty.c", "int cd_gen_empty;\n");
    for (const auto& n : kNames)
      gcc("gcc -shared -fPIC -o " + stub + "/lib" + n + ".so.1 " + *t / "empty.c" + " -Wl,-soname,lib" + n + ".so.1");
    write_file(*t / "src/h.c", "#include <dlfcn.h>\nvoid* h_dlopen(const char* n){return dlopen(n, RTLD_NOW);}\n");
    gcc("gcc -shared -fPIC -o " + stub + "/libH.so.1 " + *t / "src/h.c" + " -Wl,-soname,libH.so.1");
    // Libraries: X needs a random subset of the later names (no cycles, as in real trees).
    for (size_t i = 0; i < kNames.size(); ++i)
      for (int v = 0; v < kVariants; ++v) {
        std::string src = *t / ("src/" + kNames[i] + std::to_string(v) + ".c");
        write_file(src, "int cd_gen_" + kNames[i] + std::to_string(v) + "(void){return " + std::to_string(v) + ";}\n");
        std::string out = *t / ("pool/lib" + kNames[i] + ".so.1." + std::to_string(v));
        std::string cmd = "gcc -shared -fPIC -o " + out + " " + src + " -Wl,-soname,lib" + kNames[i] + ".so.1 -Wl,--no-as-needed";
        for (size_t j = i + 1; j < kNames.size(); ++j)
          if (rng() % 3 == 0) cmd += " " + stub + "/lib" + kNames[j] + ".so.1";
        cmd += paths(rng);
        fs::create_directories(*t / "pool");
        if (gcc(cmd)) pool[kNames[i]].push_back(out);
      }
    // libH: calls dlopen from its own code, so its RPATH/RUNPATH (or its loader chain) applies.
    for (int v = 0; v < 3; ++v) {
      std::string out = *t / ("pool/libH.so.1." + std::to_string(v));
      std::string cmd = "gcc -shared -fPIC -o " + out + " " + *t / "src/h.c" + " -Wl,-soname,libH.so.1 -Wl,--no-as-needed";
      if (v == 1) cmd += " " + stub + "/libB.so.1";
      cmd += v == 0 ? std::string() : paths(rng);
      if (gcc(cmd)) helpers.push_back(out);
    }
    write_file(*t / "src/main.c",
               "#include <dlfcn.h>\n#include <stdio.h>\n#include <string.h>\nextern void* h_dlopen(const char*);\n"
               "int main(int argc, char** argv) {\n"
               "  for (int i = 1; i < argc; ++i) {\n"
               "    void* h = argv[i][0] == '@' ? h_dlopen(argv[i] + 1) : dlopen(argv[i], RTLD_NOW);\n"
               "    printf(\"dlopen %s %s\\n\", argv[i], h ? \"ok\" : \"fail\");\n  }\n"
               "  FILE* f = fopen(\"/proc/self/maps\", \"r\"); char line[4096], last[4096] = \"\";\n"
               "  while (f && fgets(line, sizeof line, f)) { char* p = strchr(line, '/');\n"
               "    if (p && strcmp(p, last)) { printf(\"map %s\", p); strcpy(last, p); } }\n  return 0;\n}\n");
    for (int v = 0; v < 4; ++v) {
      std::string out = *t / ("pool/exe" + std::to_string(v));
      // $ORIGIN first finds libH next to the executable.
      std::string tag = v % 2 ? "--enable-new-dtags" : "--disable-new-dtags";
      std::string cmd = "gcc -o " + out + " " + *t / "src/main.c" + " -Wl,--no-as-needed " + stub + "/libH.so.1";
      for (const auto& n : kNames)
        if (rng() % 3 == 0) cmd += " " + stub + "/lib" + n + ".so.1";
      std::string extra = rng() % 2 ? ":" + search_list(rng) : "";
      cmd += " -Wl," + tag + ",-rpath," + quote("$ORIGIN" + extra);
      if (gcc(cmd)) exes.push_back(out);
    }
  }
  static void TearDownTestSuite() {
    delete t;
    t = nullptr;
  }
};

struct Outcome {
  bool started = true;
  std::vector<std::string> dlopens;  // "name ok|fail"
  std::set<std::string> mapped;      // canonical files under the layout root
  std::string text() const {
    std::ostringstream o;
    o << (started ? "started" : "did not start") << "\n";
    for (const auto& d : dlopens) o << "  dlopen " << d << "\n";
    for (const auto& m : mapped) o << "  map " << m << "\n";
    return o.str();
  }
};

TEST_F(Generated, EveryLayoutMatchesTheRealLoader) {
  ASSERT_TRUE(build_error.empty()) << build_error;
  ASSERT_EQ(exes.size(), 4u);
  auto subdirs = real_subdirs();
  ASSERT_FALSE(subdirs.empty()) << "the real ld.so printed no search path";
  unsigned seed = static_cast<unsigned>(std::stoul(env_or("CD_LOADER_SEED", "15")));
  int layouts = std::stoi(env_or("CD_LOADER_LAYOUTS", "200"));
  std::mt19937 rng(seed);
  std::string layout_canon;
  int disagreements = 0, dlopen_fails = 0, start_fails = 0;
  for (int n = 0; n < layouts && disagreements < 3; ++n) {
    std::error_code ec;
    fs::remove_all(layout, ec);
    for (int d = 0; d < kDirs; ++d) fs::create_directories(layout + "/d" + std::to_string(d));
    fs::create_directories(layout + "/bin");
    layout_canon = canon(layout);
    std::ostringstream story;
    auto place = [&](const std::string& from, const std::string& name) {
      int d = static_cast<int>(rng() % kDirs);
      std::string dir = layout + "/d" + std::to_string(d);
      if (rng() % 5 == 0) dir += "/" + subdirs[rng() % subdirs.size()];  // a hwcaps subdirectory
      fs::create_directories(dir);
      std::string at = dir + "/" + name;
      if (fs::exists(at)) return;
      if (rng() % 4 == 0) {  // behind a symlink from another directory
        std::string real = layout + "/d" + std::to_string(rng() % kDirs) + "/" + name + ".real" + std::to_string(n % 7);
        fs::copy_file(from, real, fs::copy_options::overwrite_existing);
        fs::create_symlink(real, at);
        story << "  " << at << " -> " << real << " (" << path_basename(from) << ")\n";
      } else {
        fs::copy_file(from, at);
        story << "  " << at << " (" << path_basename(from) << ")\n";
      }
    };
    for (const auto& name : kNames) {
      int copies = rng() % 8 == 0 ? 0 : 1 + static_cast<int>(rng() % 3);
      for (int c = 0; c < copies; ++c) place(pool[name][rng() % pool[name].size()], "lib" + name + ".so.1");
      if (rng() % 25 == 0) {  // not an ELF file: ld.so stops there
        std::string at = layout + "/d" + std::to_string(rng() % kDirs) + "/lib" + name + ".so.1";
        if (!fs::exists(at)) write_file(at, "not an ELF file\n"), story << "  " << at << " (garbage)\n";
      }
    }
    std::string exe = layout + "/bin/exe";
    std::string exe_from = exes[rng() % exes.size()];
    fs::copy_file(exe_from, exe);
    std::string h_from = helpers[rng() % helpers.size()];
    fs::copy_file(h_from, layout + "/bin/libH.so.1");
    std::vector<std::string> ldlp;
    for (int k = static_cast<int>(rng() % 4); k > 0; --k) {
      std::string d = layout + "/d" + std::to_string(rng() % kDirs);
      ldlp.push_back(d);
    }
    std::vector<std::string> args;
    for (int k = static_cast<int>(rng() % 3); k > 0; --k)
      args.push_back(std::string(rng() % 2 ? "@" : "") + "lib" + kNames[rng() % kNames.size()] + ".so.1");
    story << "  exe " << path_basename(exe_from) << ", libH " << path_basename(h_from) << ", LD_LIBRARY_PATH=" << join(ldlp) << ", dlopen";
    for (const auto& a : args) story << " " << a;

    // The real process.
    std::string cmd = "env -i " + (ldlp.empty() ? std::string() : "LD_LIBRARY_PATH=" + quote(join(ldlp)) + " ") + quote(exe);
    for (const auto& a : args) cmd += " " + quote(a);
    auto r = sh(cmd);
    Outcome real;
    real.started = r.rc == 0;
    std::istringstream lines(r.out);
    for (std::string line; std::getline(lines, line);) {
      if (line.rfind("dlopen ", 0) == 0) real.dlopens.push_back(line.substr(7));
      if (line.rfind("map ", 0) == 0) {
        std::string p = line.substr(4);
        if (p.rfind(layout_canon + "/", 0) == 0) real.mapped.insert(p);
      }
    }
    if (!real.started) real.dlopens.clear();

    // The emulation.
    Root root;
    LoaderConfig cfg = default_loader_config(root);
    cfg.ld_library_path = ldlp;
    cfg.subdirs = subdirs;
    LoaderSystem sys(root, cfg);
    Process p(sys, exe);
    Outcome emu;
    for (const auto& req : p.requests())
      if (req.object < 0) emu.started = false;
    if (emu.started) {
      int h = p.find("libH.so.1");
      for (const auto& a : args) {
        bool via_h = a[0] == '@';
        int got = p.dlopen(via_h ? a.substr(1) : a, via_h ? h : -1);
        emu.dlopens.push_back(a + (got >= 0 ? " ok" : " fail"));
        dlopen_fails += got < 0;
      }
      for (const auto& o : p.objects())
        if (std::string c = canon(o.path); !o.unloaded && c.rfind(layout_canon + "/", 0) == 0) emu.mapped.insert(c);
    }
    start_fails += !real.started;
    if (real.started != emu.started || real.dlopens != emu.dlopens || (real.started && real.mapped != emu.mapped)) {
      ++disagreements;
      ADD_FAILURE() << "layout " << n << " (seed " << seed << ") disagrees:\n"
                    << story.str() << "\nreal loader:\n" << real.text() << r.out.substr(0, 400) << "\nemulation:\n" << emu.text();
    }
  }
  // The layouts must exercise the failure paths too, or the comparison proves little.
  EXPECT_GT(start_fails, 0);
  EXPECT_GT(dlopen_fails, 0);
  std::cout << "[ layouts ] " << layouts << " compared, " << start_fails << " did not start, " << dlopen_fails
            << " failed dlopens\n";
}

}  // namespace
}  // namespace cd
