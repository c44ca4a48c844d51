#include "facts/libs.hpp"

#include <cctype>

namespace cd {

bool main_library_name(std::string_view family, std::string_view name) {
  if (name.substr(0, 3) != "lib" || name.substr(3, family.size()) != family) return false;
  std::string_view rest = name.substr(3 + family.size());
  if (rest.substr(0, 3) == ".so") return true;
  if (rest.size() < 12 || rest[0] != '-' || rest.substr(9, 3) != ".so") return false;
  for (size_t i = 1; i < 9; ++i)
    if (!std::isxdigit(static_cast<unsigned char>(rest[i]))) return false;
  return true;
}

}  // namespace cd
