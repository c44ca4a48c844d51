#include "kb/libraries.hpp"

#include "kb/toml_access.hpp"

namespace cd {

const std::vector<LibraryFamilyRow>& library_families(const Kb& kb) {
  return kb.view<std::vector<LibraryFamilyRow>>("libraries", [](const Kb& k) {
    std::vector<LibraryFamilyRow> out;
    for (const toml::table* row : kb_rows(k, "libraries", "family")) {
      bool sublibs = false;
      if (auto b = (*row)["sublibs"].value<bool>()) sublibs = *b;
      bool main_library = (*row)["main"].value<bool>().value_or(false);
      out.push_back({row_str(*row, "name"), row_str(*row, "stem"), sublibs, row_strs(*row, "companions"), row_str(*row, "wheel"),
                     row_str(*row, "toolkit_key"), row_str(*row, "source"), main_library,
                     row_str(*row, "main_source")});
    }
    return out;
  });
}

}  // namespace cd
