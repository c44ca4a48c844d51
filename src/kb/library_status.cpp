#include "kb/library_status.hpp"

#include "kb/toml_access.hpp"

namespace cd {

const std::vector<LibraryStatus>& library_statuses(const Kb& kb, const std::string& library) {
  return kb.view<std::vector<LibraryStatus>>("library_status." + library, [&](const Kb& k) {
    std::vector<LibraryStatus> out;
    for (const toml::table* row : kb_rows(k, "library_status", library))
      out.push_back({static_cast<int>(row_int(*row, "code").value_or(-1)), row_str(*row, "name"), row_str(*row, "finding"),
                     row_str(*row, "source")});
    return out;
  });
}

const LibraryStatus* find_library_status(const Kb& kb, const std::string& library, int code) {
  for (const LibraryStatus& s : library_statuses(kb, library))
    if (s.code == code) return &s;
  return nullptr;
}

}  // namespace cd
