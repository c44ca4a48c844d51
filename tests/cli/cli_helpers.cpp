#include "cli/cli_helpers.hpp"

#include <filesystem>
#include <fstream>

namespace cdtest {

Run doctor(const std::vector<std::string>& args, const std::map<std::string, std::string>& env) {
  std::vector<std::string> argv = {CD_BINARY};
  argv.insert(argv.end(), args.begin(), args.end());
  cd::ProcessOptions opts;
  opts.timeout = std::chrono::seconds(60);
  for (const auto& [k, v] : env) {
    if (v == "\x01") opts.env_unset.push_back(k);
    else opts.env_set[k] = v;
  }
  cd::ProcessResult r = cd::run_process(argv, opts);
  return {r.timed_out ? -2 : r.exit_code, r.out, r.err};
}

std::string temp_dir(const std::string& name) {
  std::filesystem::path p = std::filesystem::path(CD_BUILD_DIR) / "test-tmp" / name;
  std::filesystem::remove_all(p);
  std::filesystem::create_directories(p);
  return p.string();
}

void write_file(const std::string& path, const std::string& text) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream(path, std::ios::binary) << text;
}

}  // namespace cdtest
