#include "probe/toolkits_read.hpp"

#include <charconv>

#include <nlohmann/json.hpp>

#include "util/strings.hpp"
#include "util/subprocess.hpp"
#include "util/version.hpp"
#include "util/walk.hpp"

namespace cd {

namespace {

// Header dirs of a toolkit: include/ and the per-target copies (conda, pip layouts).
std::vector<std::string> include_dirs(const Root& root, const std::string& dir) {
  std::vector<std::string> out = {path_join(dir, "include")};
  for (const auto& t : root.glob(path_join(dir, "targets"), "*")) out.push_back(path_join(t, "include"));
  return out;
}

bool from_version_json(const Root& root, Toolkit& tk) {
  auto text = root.read(path_join(tk.root, "version.json"), 1 << 20);
  if (!text) return false;
  auto j = nlohmann::json::parse(*text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return false;
  // "cuda" is the release ("12.4.1"); cuda_nvcc the compiler build ("12.4.131").
  for (const char* key : {"cuda", "cuda_nvcc", "cuda_cudart"})
    if (j.contains(key) && j[key].is_object() && j[key].contains("version") && j[key]["version"].is_string()) {
      tk.version = j[key]["version"].get<std::string>();
      tk.version_source = path_join(tk.root, "version.json");
      return true;
    }
  return false;
}

bool from_version_txt(const Root& root, Toolkit& tk) {
  auto text = root.read(path_join(tk.root, "version.txt"), 4096);
  if (!text) return false;
  auto at = text->find("CUDA Version");
  if (at == std::string::npos) return false;
  auto v = Version::parse(trim(std::string_view(*text).substr(at + 12)));
  if (!v) return false;
  tk.version = v->text.substr(0, v->text.find_first_of(" \n"));
  tk.version_source = path_join(tk.root, "version.txt");
  return true;
}

// Toolkits assembled from pip wheels carry the nvcc wheel's dist-info (in the toolkit's
// dist-info/ or the site-packages above nvidia/cu13).
bool from_dist_info(const Root& root, Toolkit& tk) {
  std::vector<std::string> dirs = {path_join(tk.root, "dist-info")};
  if (contains(tk.root, "/nvidia/")) dirs.push_back(path_dirname(path_dirname(tk.root)));
  for (const auto& d : dirs)
    for (const auto& info : root.glob(d, "nvidia_cuda_nvcc*-*.dist-info")) {
      std::string name = path_basename(info);
      name.resize(name.size() - 10);  // ".dist-info"
      std::string version = name.substr(name.rfind('-') + 1);
      if (!Version::parse(version)) continue;
      tk.version = version;
      tk.version_source = info;
      return true;
    }
  return false;
}

bool from_cuda_h(const Root& root, Toolkit& tk) {
  for (const auto& inc : include_dirs(root, tk.root)) {
    std::string path = path_join(inc, "cuda.h");
    auto text = root.read(path, 1 << 20);
    if (!text) continue;
    auto at = text->find("#define CUDA_VERSION ");
    if (at == std::string::npos) continue;
    std::string_view rest = trim(std::string_view(*text).substr(at + 21, 16));
    int value = 0;
    std::from_chars(rest.data(), rest.data() + rest.size(), value);
    if (value <= 0) continue;
    tk.version = Version::from_cuda_int(value).major_minor();
    tk.version_source = path;
    return true;
  }
  return false;
}

}  // namespace

static std::vector<std::string> lib_dirs(const Root& root, const std::string& dir) {
  std::vector<std::string> out = {path_join(dir, "lib64"), path_join(dir, "lib")};
  for (const auto& t : root.glob(path_join(dir, "targets"), "*")) out.push_back(path_join(t, "lib"));
  return out;
}

static bool has_lib(const Root& root, const std::vector<std::string>& dirs, const std::string& stem) {
  for (const auto& d : dirs)
    if (!root.glob(d, stem + ".so*").empty()) return true;
  return false;
}

std::string find_lib_dir(const Root& root, const std::string& dir) {
  for (const auto& d : lib_dirs(root, dir))
    if (!root.glob(d, "libcudart.so*").empty() || !root.glob(d, "libcudart_static.a").empty()) return d;
  return {};
}

void read_toolkit_details(const Root& root, Toolkit& tk) {
  auto libs = lib_dirs(root, tk.root);
  auto add = [&](const char* name, bool present) {
    if (present) tk.components.push_back(name);
  };
  add("nvcc", present(root, path_join(tk.root, "bin/nvcc")));
  bool headers = false;
  for (const auto& inc : include_dirs(root, tk.root)) headers |= root.is_file(path_join(inc, "cuda_runtime.h"));
  add("headers", headers);
  for (const char* lib : {"cudart", "cublas", "cudnn", "nccl", "nvrtc"}) add(lib, has_lib(root, libs, std::string("lib") + lib));
  std::vector<std::string> stubs;
  for (const auto& d : libs) stubs.push_back(path_join(d, "stubs"));
  add("stubs", has_lib(root, stubs, "libcuda"));
  add("compat", has_lib(root, {path_join(tk.root, "compat")}, "libcuda"));
  WalkOptions wo;
  wo.root = root;
  wo.want = [](std::string_view, bool) { return true; };
  for (const auto& f : walk_files({root.host_path(tk.root)}, wo).files) tk.size_bytes += f.size;
}

// exists() follows links on the host; a --root tree's absolute links need is_symlink().
bool present(const Root& root, const std::string& path) { return root.exists(path) || root.is_symlink(path); }

bool looks_like_toolkit(const Root& root, const std::string& dir) {
  return present(root, path_join(dir, "bin/nvcc")) || root.is_file(path_join(dir, "version.json")) ||
         root.is_file(path_join(dir, "version.txt")) || root.is_file(path_join(dir, "include/cuda.h"));
}

std::string parse_nvcc_version(const std::string& output) {
  auto at = output.find(", V");
  if (at != std::string::npos)
    if (auto v = Version::parse(std::string_view(output).substr(at + 3)))
      return std::string(trim(v->text.substr(0, v->text.find_first_of(" \n"))));
  at = output.find("release ");
  if (at != std::string::npos)
    if (auto v = Version::parse(std::string_view(output).substr(at + 8))) return v->major_minor();
  return {};
}

void read_toolkit_version(const Root& root, Toolkit& tk, std::chrono::milliseconds timeout) {
  if (from_version_json(root, tk) || from_version_txt(root, tk) || from_dist_info(root, tk) || from_cuda_h(root, tk))
    return;
  if (tk.nvcc.empty() || !root.is_host()) return;
  ProcessOptions po;
  po.timeout = timeout;
  po.merge_stderr = true;
  ProcessResult r = run_process({tk.nvcc, "--version"}, po);
  if (std::string v = parse_nvcc_version(r.out); r.ok() && !v.empty()) {
    tk.version = v;
    tk.version_source = "nvcc --version";
  }
}

void read_host_config(const Root& root, Toolkit& tk) {
  for (const auto& inc : include_dirs(root, tk.root)) {
    std::string path = path_join(inc, "crt/host_config.h");
    auto text = root.read(path, 1 << 20);
    if (!text) continue;
    auto number_after = [&](std::string_view needle) {
      auto at = text->find(needle);
      if (at == std::string::npos) return 0;
      std::string_view rest = trim(std::string_view(*text).substr(at + needle.size(), 8));
      int n = 0;
      std::from_chars(rest.data(), rest.data() + rest.size(), n);
      return n;
    };
    tk.host_gcc_max = number_after("#if __GNUC__ > ");
    int clang_limit = number_after("(__clang_major__ >= ");  // "must be less than N"
    tk.host_clang_max = clang_limit > 0 ? clang_limit - 1 : 0;
    tk.host_config = path;
    return;
  }
}

}  // namespace cd
