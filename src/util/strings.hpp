#pragma once
// Small string helpers shared by every stage.
#include <string>
#include <string_view>
#include <vector>

namespace cd {

std::string_view trim(std::string_view s);
std::vector<std::string> split(std::string_view s, char sep, bool keep_empty = false);
std::string to_lower(std::string_view s);
std::string join(const std::vector<std::string>& parts, std::string_view sep);
bool contains(std::string_view haystack, std::string_view needle);
// Replaces every occurrence of `from` with `to`.
std::string replace_all(std::string s, std::string_view from, std::string_view to);

}  // namespace cd
