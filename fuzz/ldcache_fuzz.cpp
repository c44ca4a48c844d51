// libFuzzer target for the loader's parsers of untrusted bytes: /etc/ld.so.cache
// (parse_ld_so_cache, then lookups) and ELF dynamic sections (read_elf_dyn_memory,
// chosen when the input starts with the ELF magic). Either parses or throws
// InputError; anything else (crash, hang, other exception) is a bug.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "loader/elf_dyn.hpp"
#include "loader/ldcache.hpp"
#include "util/errors.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  try {
    if (bytes.substr(0, 4) == "\x7f" "ELF") {
      cd::ElfDyn d = cd::read_elf_dyn_memory(bytes, "fuzz.so");
      (void)d.effective_rpath();
    } else {
      cd::LdCache cache = cd::parse_ld_so_cache(bytes);
      for (const auto& e : cache.entries) (void)cache.find(e.key, cd::cache_flags_for_machine(62, 2));
      (void)cd::cache_flags_name(cache.entries.empty() ? 0 : cache.entries.front().flags);
    }
  } catch (const cd::InputError&) {
  }
  return 0;
}
