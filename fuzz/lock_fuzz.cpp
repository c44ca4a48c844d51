// libFuzzer target for `plan --from`'s lock reader (issue 14): arbitrary bytes as a cuda.lock
// either parse or throw InputError with one line; what parses is written again (invalid UTF-8
// replaced, never fatal) and reads back to the same document. Anything else aborts.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "derive/lock.hpp"
#include "util/errors.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  cd::LockDoc lock;
  try {
    lock = cd::lock_from_text(text, "fuzz.lock");
  } catch (const cd::InputError& e) {
    if (std::string(e.what()).find('\n') != std::string::npos) std::abort();
    return 0;
  }
  std::string once = cd::lock_json(lock).dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
  cd::LockDoc again = cd::lock_from_text(once, "again");
  std::string twice = cd::lock_json(again).dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
  if (once != twice) {
    std::fprintf(stderr, "lock does not read back:\n%s\n%s\n", once.c_str(), twice.c_str());
    std::abort();
  }
  return 0;
}
