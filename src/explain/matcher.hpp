#pragma once
// The signature matcher: every pattern of data/errors.toml compiled into one
// RE2::Set (one linear pass over the text, whatever the number of signatures —
// logs are untrusted input), then the single matching signature's own RE2 for
// its named captures.
#include <atomic>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <re2/re2.h>
#include <re2/set.h>

#include "kb/errors.hpp"


namespace cd {

struct SignatureMatch {
  const ErrorSignature* signature = nullptr;
  std::map<std::string, std::string> captures;  // non-empty named groups only
};

class Matcher {
 public:
  // Throws InputError naming the signature whose pattern does not compile.
  explicit Matcher(const std::vector<ErrorSignature>& signatures);
  ~Matcher();
  Matcher(const Matcher&) = delete;
  Matcher& operator=(const Matcher&) = delete;

  // False only when no signature can match anywhere in `text` (a block of lines):
  // lets the scanner skip quiet blocks with one pass.
  bool may_match(std::string_view text) const;
  // All signatures matching one line, with captures; generic ones are dropped when
  // a specific one matched too. Appends to `out`.
  void match_line(std::string_view line, std::vector<SignatureMatch>& out) const;

  size_t size() const { return entries_.size(); }
  // Times the set's DFA ran out of memory and the slow per-pattern path was used.
  size_t fallbacks() const { return fallbacks_; }

 private:
  struct Entry {
    const ErrorSignature* signature;
    std::unique_ptr<re2::RE2> re;
    std::unique_ptr<re2::RE2> repeat;
  };
  void set_matches(std::string_view text, std::vector<int>& ids) const;
  std::map<std::string, std::string> captures_of(const Entry& e, std::string_view line) const;

  std::vector<Entry> entries_;
  std::unique_ptr<re2::RE2::Set> set_;
  mutable std::atomic<size_t> fallbacks_ = 0;
};

}  // namespace cd
