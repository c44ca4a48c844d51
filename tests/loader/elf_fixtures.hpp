#pragma once
// Test helpers shared by tests/loader and tests/probe (header-only so both test
// executables can use them): temporary trees, shared libraries built at test time
// with chosen SONAME / DT_NEEDED / DT_RPATH / DT_RUNPATH, and the real loader as an
// oracle (`ld.so --list`, i.e. ldd).
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

namespace cd::testing {

namespace fs = std::filesystem;

struct TempDir {
  fs::path path;
  TempDir() {
    char tmpl[] = "/tmp/cd-loader-XXXXXX";
    path = mkdtemp(tmpl);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  std::string str() const { return path.string(); }
  std::string operator/(const std::string& rel) const { return (path / rel).string(); }
};

struct CmdResult {
  int rc = -1;
  std::string out;  // stdout and stderr
};

inline CmdResult sh(const std::string& cmd) {
  CmdResult r;
  FILE* p = popen(("(" + cmd + ") 2>&1").c_str(), "r");
  if (!p) return r;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
  int status = pclose(p);
  r.rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

inline void write_file(const std::string& path, const std::string& text) {
  fs::create_directories(fs::path(path).parent_path());
  std::ofstream(path, std::ios::binary) << text;
}

inline std::string quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

struct LibSpec {
  std::string soname;                 // "" = none
  std::vector<std::string> needed;    // full paths of libraries to link against (become DT_NEEDED by their soname)
  std::string rpath;                  // DT_RPATH (--disable-new-dtags)
  std::string runpath;                // DT_RUNPATH (--enable-new-dtags)
  std::string extra;                  // more linker flags ("-Wl,-z,nodefaultlib")
  int value = 0;                      // what its function returns (tells copies apart)

  LibSpec& with_soname(std::string v) { soname = std::move(v); return *this; }
  LibSpec& with_needed(std::vector<std::string> v) { needed = std::move(v); return *this; }
  LibSpec& with_rpath(std::string v) { rpath = std::move(v); return *this; }
  LibSpec& with_runpath(std::string v) { runpath = std::move(v); return *this; }
  LibSpec& with_extra(std::string v) { extra = std::move(v); return *this; }
  LibSpec& with_value(int v) { value = v; return *this; }
};

// Builds a shared library (or an executable when `exe`) with gcc; returns "" or gcc's error.
inline std::string build_elf(const std::string& out, const LibSpec& s, bool exe = false) {
  fs::create_directories(fs::path(out).parent_path());
  std::string src = out + ".c";
  write_file(src, exe ? "int main(void){return 0;}\n" : "int cd_value_" + std::to_string(s.value) + "(void){return " + std::to_string(s.value) + ";}\n");
  std::string cmd = "gcc -o " + quote(out) + " " + quote(src) + (exe ? "" : " -shared -fPIC");
  if (!s.soname.empty()) cmd += " -Wl,-soname," + s.soname;
  cmd += " -Wl,--no-as-needed";
  for (const auto& n : s.needed) cmd += " " + quote(n);
  if (!s.rpath.empty()) cmd += " -Wl,--disable-new-dtags,-rpath," + quote(s.rpath);
  if (!s.runpath.empty()) cmd += " -Wl,--enable-new-dtags,-rpath," + quote(s.runpath);
  cmd += " " + s.extra;
  auto r = sh(cmd);
  fs::remove(src);
  return r.rc == 0 ? "" : r.out;
}

// The real loader's answer: name → path ("not found" when unresolved), from
// `ld.so --list` under the given LD_LIBRARY_PATH. `error` gets a fatal load error.
inline std::map<std::string, std::string> ld_so_list(const std::string& binary, const std::string& ld_library_path,
                                                     std::string* error = nullptr) {
  std::string env = ld_library_path.empty() ? "env -u LD_LIBRARY_PATH" : "env LD_LIBRARY_PATH=" + quote(ld_library_path);
  auto r = sh(env + " /lib64/ld-linux-x86-64.so.2 --list " + quote(binary));
  std::map<std::string, std::string> out;
  std::string line;
  for (size_t i = 0; i <= r.out.size(); ++i) {
    if (i < r.out.size() && r.out[i] != '\n') {
      line += r.out[i];
      continue;
    }
    auto arrow = line.find(" => ");
    if (arrow != std::string::npos) {
      std::string name = line.substr(line.find_first_not_of(" \t"), arrow - line.find_first_not_of(" \t"));
      std::string rest = line.substr(arrow + 4);
      out[name] = rest.rfind("not found", 0) == 0 ? "not found" : rest.substr(0, rest.find(" ("));
    }
    if (error && line.find("error while loading") != std::string::npos) *error = line;
    line.clear();
  }
  return out;
}

}  // namespace cd::testing
