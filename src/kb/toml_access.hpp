#pragma once
// For kb/*.cpp only: raw access to the parsed TOML and small helpers to read rows.
// (toml++ is heavy to compile; keep it out of public headers.)
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <toml++/toml.h>

#include "kb/kb.hpp"

namespace cd {

struct Kb::Impl {
  // By file name without ".toml". The embedded tables are parsed on first use (kb_table):
  // a command needs a few of them and parsing all 240 KB took a third of `libs FILE`.
  mutable std::mutex mutex;
  mutable std::map<std::string, toml::table> tables;
  mutable std::map<std::string, std::pair<std::string_view, std::string>> unparsed;  // key → (text, file name)
};

// The parsed file `name` (without .toml); an empty table when absent.
const toml::table& kb_table(const Kb& kb, const std::string& name);

// The array-of-tables `key` in a file, e.g. [[gpu]] rows; empty when absent.
std::vector<const toml::table*> kb_rows(const Kb& kb, const std::string& file, const std::string& key);

std::string row_str(const toml::table& row, const char* key, std::string fallback = {});
std::optional<double> row_num(const toml::table& row, const char* key);
std::optional<int64_t> row_int(const toml::table& row, const char* key);
std::vector<std::string> row_strs(const toml::table& row, const char* key);

}  // namespace cd
