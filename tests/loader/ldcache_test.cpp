// ld.so.cache parsing: the real cache against `ldconfig -p`, and hand-built caches in
// the new, old and old+new formats, plus truncated/hostile ones.
#include <gtest/gtest.h>

#include <cstring>
#include <set>

#include "loader/elf_fixtures.hpp"
#include "loader/ldcache.hpp"
#include "util/errors.hpp"

namespace cd {
namespace {

using namespace cd::testing;

TEST(LdCacheReal, SameEntriesAsLdconfigP) {
  std::ifstream in("/etc/ld.so.cache", std::ios::binary);
  if (!in) GTEST_SKIP() << "no /etc/ld.so.cache";
  std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  LdCache cache = parse_ld_so_cache(data);
  auto r = sh("ldconfig -p");
  ASSERT_EQ(r.rc, 0);
  // "\tlibz.so.1 (libc6,x86-64) => /lib/x86_64-linux-gnu/libz.so.1"
  std::vector<std::pair<std::string, std::string>> oracle;
  std::string line;
  for (char c : r.out + "\n") {
    if (c != '\n') { line += c; continue; }
    auto arrow = line.find(" => ");
    auto paren = line.find(" (");
    if (arrow != std::string::npos && paren != std::string::npos && line[0] == '\t')
      oracle.emplace_back(line.substr(1, paren - 1), line.substr(arrow + 4));
    line.clear();
  }
  ASSERT_FALSE(oracle.empty());
  ASSERT_EQ(cache.entries.size(), oracle.size());
  for (size_t i = 0; i < oracle.size(); ++i) {  // same order: ldconfig -p walks the file
    EXPECT_EQ(cache.entries[i].key, oracle[i].first);
    EXPECT_EQ(cache.entries[i].value, oracle[i].second);
  }
  const LdCacheEntry* libc = cache.find("libc.so.6", cache_flags_for_machine(62, 2));
  ASSERT_NE(libc, nullptr);
  EXPECT_EQ(cache_flags_name(libc->flags), "libc6,x86-64");
}

// Builders for synthetic caches.
void put32(std::string& s, size_t at, uint32_t v) { std::memcpy(&s[at], &v, 4); }
void put64(std::string& s, size_t at, uint64_t v) { std::memcpy(&s[at], &v, 8); }

struct E {
  std::string key, value;
  int32_t flags = 0x303;
  uint64_t hwcap = 0;
};

std::string new_cache(const std::vector<E>& es) {
  std::string s(48 + 24 * es.size(), '\0');
  std::memcpy(&s[0], "glibc-ld.so.cache1.1", 20);
  put32(s, 20, static_cast<uint32_t>(es.size()));
  s[28] = 2;  // little endian
  std::string strings;
  for (size_t i = 0; i < es.size(); ++i) {
    size_t e = 48 + 24 * i;
    put32(s, e, static_cast<uint32_t>(es[i].flags));
    put32(s, e + 4, static_cast<uint32_t>(s.size() + strings.size()));
    strings += es[i].key + '\0';
    put32(s, e + 8, static_cast<uint32_t>(s.size() + strings.size()));
    strings += es[i].value + '\0';
    put64(s, e + 16, es[i].hwcap);
  }
  put32(s, 24, static_cast<uint32_t>(strings.size()));
  return s + strings;
}

std::string old_cache(const std::vector<E>& es, bool append_new) {
  std::string s(16 + 12 * es.size(), '\0');
  std::memcpy(&s[0], "ld.so-1.7.0", 11);
  put32(s, 12, static_cast<uint32_t>(es.size()));
  std::string strings;
  for (size_t i = 0; i < es.size(); ++i) {
    size_t e = 16 + 12 * i;
    put32(s, e, static_cast<uint32_t>(es[i].flags));
    put32(s, e + 4, static_cast<uint32_t>(strings.size()));
    strings += es[i].key + '\0';
    put32(s, e + 8, static_cast<uint32_t>(strings.size()));
    strings += es[i].value + '\0';
  }
  if (!append_new) return s + strings;
  while (s.size() % 8) s += '\0';
  std::vector<E> renamed = es;
  for (auto& e : renamed) e.value += ".new";
  return s + new_cache(renamed);
}

TEST(LdCacheSynthetic, NewOldAndAppendedFormats) {
  std::vector<E> es = {{"libcudnn.so.9", "/usr/lib/x86_64-linux-gnu/libcudnn.so.9"},
                       {"libcuda.so.1", "/usr/local/nvidia/lib64/libcuda.so.1"},
                       {"libcuda.so.1", "/lib/libcuda.so.1"}};
  LdCache n = parse_ld_so_cache(new_cache(es));
  EXPECT_EQ(n.format, "new");
  ASSERT_EQ(n.entries.size(), 3u);
  EXPECT_EQ(n.entries[0].value, "/usr/lib/x86_64-linux-gnu/libcudnn.so.9");
  // Duplicate keys: the first in file order wins, as in glibc.
  EXPECT_EQ(n.find("libcuda.so.1", 0x303)->value, "/usr/local/nvidia/lib64/libcuda.so.1");
  EXPECT_EQ(n.find("libcuda.so.1", 0x0a03), nullptr);  // an AArch64 process does not take x86-64 entries

  LdCache o = parse_ld_so_cache(old_cache(es, false));
  EXPECT_EQ(o.format, "old");
  ASSERT_EQ(o.entries.size(), 3u);
  EXPECT_EQ(o.entries[2].value, "/lib/libcuda.so.1");

  LdCache on = parse_ld_so_cache(old_cache(es, true));
  EXPECT_EQ(on.format, "old+new");
  EXPECT_EQ(on.entries[0].value, "/usr/lib/x86_64-linux-gnu/libcudnn.so.9.new");
}

TEST(LdCacheSynthetic, HwcapSubdirEntriesDoNotWinByDefault) {
  LdCache c = parse_ld_so_cache(new_cache({{"libx.so.1", "/usr/lib/glibc-hwcaps/x86-64-v3/libx.so.1", 0x303, uint64_t{1} << 62},
                                           {"libx.so.1", "/usr/lib/libx.so.1"}}));
  EXPECT_EQ(c.find("libx.so.1", 0x303)->value, "/usr/lib/libx.so.1");
}

std::string error_of(const std::string& bytes) {
  try {
    parse_ld_so_cache(bytes);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(LdCacheHostile, ClearOneLineErrors) {
  std::string good = new_cache({{"liba.so.1", "/a/liba.so.1"}});
  EXPECT_NE(error_of("hello").find("unknown magic"), std::string::npos);
  EXPECT_NE(error_of(good.substr(0, 30)).find("truncated"), std::string::npos);
  std::string many = good;
  put32(many, 20, 0xffffffffu);
  EXPECT_NE(error_of(many).find("do not fit"), std::string::npos);
  std::string far = good;
  put32(far, 48 + 4, 0x7fffffffu);
  EXPECT_NE(error_of(far).find("outside the file"), std::string::npos);
  std::string unterminated = good;
  unterminated.back() = 'x';
  EXPECT_NE(error_of(unterminated).find("unterminated"), std::string::npos);
  std::string big = good;
  big[28] = 3;
  EXPECT_NE(error_of(big).find("big-endian"), std::string::npos);
  std::string old_many = old_cache({{"a", "b"}}, false);
  put32(old_many, 12, 0x40000000u);
  EXPECT_NE(error_of(old_many).find("do not fit"), std::string::npos);
  for (const auto& bytes : {many, far, unterminated, big, old_many}) {
    std::string e = error_of(bytes);
    EXPECT_EQ(e.rfind("ld.so.cache: ", 0), 0u) << e;
    EXPECT_EQ(e.find('\n'), std::string::npos);
  }
}

}  // namespace
}  // namespace cd
