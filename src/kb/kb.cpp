#include "kb/kb.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "kb/embedded.hpp"
#include "kb/toml_access.hpp"
#include "util/errors.hpp"
#include "util/root.hpp"

namespace cd {

std::shared_ptr<Kb> Kb::from_texts(const std::vector<std::pair<std::string, std::string>>& files) {
  auto kb = std::make_shared<Kb>();
  kb->impl_ = std::make_shared<Impl>();
  for (const auto& [name, text] : files) {
    std::string key = name.size() > 5 && name.ends_with(".toml") ? name.substr(0, name.size() - 5) : name;
    try {
      kb->impl_->tables[key] = toml::parse(text, name);
    } catch (const toml::parse_error& e) {
      throw InputError(fmt::format("knowledge base {}:{}: {}", name, e.source().begin.line, e.description()));
    }
  }
  return kb;
}

std::shared_ptr<Kb> Kb::from_dir(const std::string& dir) {
  Root host;
  struct stat st {};
  if (stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    throw InputError(fmt::format("knowledge base {}: not a directory", dir));
  std::vector<std::pair<std::string, std::string>> files;
  for (const auto& path : host.glob(dir, "*.toml")) {
    auto text = host.read(path, 64u << 20);
    if (!text) throw InputError(fmt::format("cannot read {}", path));
    files.emplace_back(path_basename(path), *text);
  }
  if (files.empty()) throw InputError(fmt::format("knowledge base {}: no *.toml tables in it", dir));
  return from_texts(files);
}

namespace {

// CUDA_DOCTOR_DATA=DIR replaces the embedded tables, so it must hold all of them: a
// missing table would otherwise read as "nothing known" (explain: "no known signature").
std::shared_ptr<Kb> from_data_env(const std::string& dir) {
  auto kb = Kb::from_dir(dir);
  auto have = kb->names();
  std::vector<std::string> missing;
  for (const auto& f : kb::embedded_files()) {
    std::string name(f.name);
    if (name.ends_with(".toml")) name.resize(name.size() - 5);
    if (std::find(have.begin(), have.end(), name) == have.end()) missing.push_back(name + ".toml");
  }
  if (!missing.empty())
    throw InputError(fmt::format("knowledge base {} (CUDA_DOCTOR_DATA): missing {}", dir, fmt::join(missing, ", ")));
  return kb;
}

}  // namespace

// The embedded tables, each parsed when first asked for: they are compiled in and every one
// is parsed by tests/kb (kb_sources_test), so a parse error cannot first show up here.
std::shared_ptr<Kb> Kb::from_embedded() {
  auto kb = std::make_shared<Kb>();
  kb->impl_ = std::make_shared<Impl>();
  for (const auto& f : kb::embedded_files()) {
    std::string name(f.name);
    std::string key = name.ends_with(".toml") ? name.substr(0, name.size() - 5) : name;
    kb->impl_->unparsed.emplace(key, std::make_pair(f.text, name));
  }
  return kb;
}

const Kb& Kb::get() {
  // Never destroyed: freeing the parsed tables at exit cost `libs FILE` 7 % of its run,
  // and the process ends anyway.
  static const std::shared_ptr<Kb>* kb = new std::shared_ptr<Kb>([] {
    if (const char* dir = std::getenv("CUDA_DOCTOR_DATA"); dir && *dir) return from_data_env(dir);
    return from_embedded();
  }());
  return **kb;
}

std::vector<std::string> Kb::names() const {
  std::lock_guard lock(impl_->mutex);
  std::set<std::string> out;
  for (const auto& [name, _] : impl_->tables) out.insert(name);
  for (const auto& [name, _] : impl_->unparsed) out.insert(name);
  return {out.begin(), out.end()};
}

const toml::table& kb_table(const Kb& kb, const std::string& name) {
  static const toml::table empty;
  const Kb::Impl& impl = kb.impl();
  std::lock_guard lock(impl.mutex);
  if (auto it = impl.tables.find(name); it != impl.tables.end()) return it->second;
  auto pending = impl.unparsed.find(name);
  if (pending == impl.unparsed.end()) return empty;
  toml::table parsed;
  try {
    parsed = toml::parse(pending->second.first, pending->second.second);
  } catch (const toml::parse_error& e) {
    throw InputError(fmt::format("knowledge base {}:{}: {}", pending->second.second, e.source().begin.line, e.description()));
  }
  impl.unparsed.erase(pending);
  return impl.tables.emplace(name, std::move(parsed)).first->second;
}

std::vector<const toml::table*> kb_rows(const Kb& kb, const std::string& file, const std::string& key) {
  std::vector<const toml::table*> rows;
  if (const toml::array* arr = kb_table(kb, file)[key].as_array())
    for (const auto& node : *arr)
      if (const toml::table* t = node.as_table()) rows.push_back(t);
  return rows;
}

std::string row_str(const toml::table& row, const char* key, std::string fallback) {
  if (auto v = row[key].value<std::string>()) return *v;
  return fallback;
}

std::optional<double> row_num(const toml::table& row, const char* key) { return row[key].value<double>(); }

std::optional<int64_t> row_int(const toml::table& row, const char* key) { return row[key].value<int64_t>(); }

std::vector<std::string> row_strs(const toml::table& row, const char* key) {
  std::vector<std::string> out;
  if (const toml::array* arr = row[key].as_array())
    for (const auto& n : *arr)
      if (auto s = n.value<std::string>()) out.push_back(*s);
  return out;
}

}  // namespace cd
