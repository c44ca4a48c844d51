#include "loader/cudnn.hpp"

namespace cd {

std::vector<std::string> cudnn_sublib_names(const std::string& sub, const std::string& major, const std::string& version) {
  std::vector<std::string> out;
  std::string base = "libcudnn_" + sub + ".so.";
  std::vector<std::string> parts;
  size_t start = 0;
  for (size_t i = 0; i <= version.size(); ++i)
    if (i == version.size() || version[i] == '.') parts.push_back(version.substr(start, i - start)), start = i + 1;
  if (parts.size() >= 3 && parts[0] == major) {
    out.push_back(base + parts[0] + "." + parts[1] + "." + parts[2]);
    out.push_back(base + parts[0] + "." + parts[1]);
  }
  out.push_back(base + major);
  return out;
}

int load_cudnn_sublibs(Process& proc, const std::function<std::string(int)>& version_of) {
  auto open_sub = [&](int from, const std::string& sub, const std::string& major, LoadTime when) {
    auto names = cudnn_sublib_names(sub, major, version_of(from));
    // Only the name that resolves is loaded; the more specific misses leave no trace.
    for (size_t k = 0; k + 1 < names.size(); ++k)
      if (!proc.search(names[k], from).path.empty()) return proc.dlopen(names[k], from, when);
    return proc.dlopen(names.back(), from, when);
  };
  for (size_t i = 0; i < proc.objects().size(); ++i) {
    const std::string so = proc.objects()[i].soname;
    if (so.rfind("libcudnn.so.", 0) != 0) continue;
    std::string major = so.substr(12);
    int shim = static_cast<int>(i);
    int graph = open_sub(shim, "graph", major, LoadTime::first_call);
    if (graph >= 0)
      for (const char* sub : {"engines_precompiled", "engines_runtime_compiled", "heuristic"})
        open_sub(graph, sub, major, LoadTime::first_call);
    for (const char* sub : {"ops", "cnn", "adv"}) open_sub(shim, sub, major, LoadTime::on_demand);
    return graph;
  }
  return -1;
}

}  // namespace cd
