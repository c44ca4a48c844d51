// libFuzzer target: arbitrary bytes through the explain pipeline (scanner in random
// chunk sizes, matcher, log rules, JSON rendering). Nothing may crash, hang or throw
// except InputError, and all JSON must serialise (valid UTF-8).
//
// Build without CMake (from the repository root, after building the stages once):
//   clang++ -std=c++20 -O1 -g -fsanitize=fuzzer,address,undefined -Isrc fuzz/explain_fuzz.cpp \
//     build/libcd_rules.a build/libcd_derive.a build/libcd_explain.a build/libcd_binary.a build/libcd_kb.a build/libcd_kb_data.a \
//     build/libcd_facts.a build/libcd_util.a -lre2 -lelf -lzstd -llz4 -lz -lpthread -o build/explain_fuzz
//   build/explain_fuzz -max_len=65536 tests/fixtures/logs
// (Or in fuzz/CMakeLists.txt: add_executable(explain_fuzz explain_fuzz.cpp) linked with
//  cd_rules cd_derive cd_explain cd_binary cd_kb cd_facts cd_util and -fsanitize=fuzzer.)
#include <cstddef>
#include <cstdint>
#include <string_view>

#include <nlohmann/json.hpp>

#include "derive/model.hpp"
#include "explain/explain.hpp"
#include "kb/kb.hpp"
#include "rules/rules.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const cd::Kb& kb = cd::Kb::get();
  const cd::Matcher& matcher = cd::matcher_for(kb);
  std::string_view input(reinterpret_cast<const char*>(data), size);
  // The first byte picks the chunk size, so line splitting across chunks is exercised.
  size_t chunk = size == 0 ? 1 : 1 + static_cast<uint8_t>(input[0]) % 97;
  cd::ScanLimits limits;
  limits.max_line = 512;  // small limits reach the long-line paths with short inputs
  limits.block = 1024;
  cd::LogScanner scanner(matcher, limits);
  for (size_t i = 0; i < size; i += chunk) scanner.feed(input.substr(i, chunk), static_cast<int>((i / chunk) % 2));
  scanner.finish();
  cd::Facts facts;
  facts.log = scanner.take();
  auto findings = cd::log_rules(cd::derive(facts, kb), kb);
  (void)nlohmann::json(facts.log).dump();
  for (const auto& f : findings) (void)nlohmann::json(f).dump();
  return 0;
}
