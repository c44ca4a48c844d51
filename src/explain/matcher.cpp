#include "explain/matcher.hpp"

#include <algorithm>

#include <fmt/format.h>
#include <re2/re2.h>
#include <re2/set.h>

#include "util/errors.hpp"

namespace cd {
namespace {

// Multi-line mode so '^' and '$' anchor at line starts inside a block of lines too.
std::string with_flags(const std::string& pattern) { return "(?m)" + pattern; }

RE2::Options matcher_options() {
  RE2::Options o;
  o.set_log_errors(false);
  o.set_max_mem(64 << 20);
  return o;
}

}  // namespace

Matcher::Matcher(const std::vector<ErrorSignature>& signatures) {
  RE2::Options opts = matcher_options();
  RE2::Options set_opts = opts;
  set_opts.set_max_mem(256 << 20);  // the DFA for ~150 patterns needs room; bounded all the same
  set_ = std::make_unique<re2::RE2::Set>(set_opts, RE2::UNANCHORED);
  for (const auto& sig : signatures) {
    Entry e{&sig, std::make_unique<RE2>(with_flags(sig.pattern), opts), nullptr};
    if (!e.re->ok()) throw InputError(fmt::format("errors.toml: signature {}: bad pattern: {}", sig.name, e.re->error()));
    if (!sig.repeat.empty()) {
      e.repeat = std::make_unique<RE2>(sig.repeat, opts);
      if (!e.repeat->ok())
        throw InputError(fmt::format("errors.toml: signature {}: bad repeat pattern: {}", sig.name, e.repeat->error()));
    }
    std::string err;
    if (set_->Add(with_flags(sig.pattern), &err) < 0)
      throw InputError(fmt::format("errors.toml: signature {}: {}", sig.name, err));
    entries_.push_back(std::move(e));
  }
  if (!set_->Compile()) throw InputError("errors.toml: the signature set does not compile (out of memory)");
}

Matcher::~Matcher() = default;

void Matcher::set_matches(std::string_view text, std::vector<int>& ids) const {
  ids.clear();
  re2::RE2::Set::ErrorInfo info{};
  if (set_->Match(re2::StringPiece(text.data(), text.size()), &ids, &info)) return;
  if (info.kind == re2::RE2::Set::kNoError) return;  // no match
  // The DFA ran out of memory on this text: fall back to one pattern at a time.
  ++fallbacks_;
  ids.clear();
  for (size_t i = 0; i < entries_.size(); ++i)
    if (RE2::PartialMatch(re2::StringPiece(text.data(), text.size()), *entries_[i].re)) ids.push_back(static_cast<int>(i));
}

bool Matcher::may_match(std::string_view text) const {
  std::vector<int> ids;
  set_matches(text, ids);
  return !ids.empty();
}

std::map<std::string, std::string> Matcher::captures_of(const Entry& e, std::string_view line) const {
  std::map<std::string, std::string> out;
  int groups = e.re->NumberOfCapturingGroups();
  if (groups > 0) {
    std::vector<re2::StringPiece> sub(static_cast<size_t>(groups) + 1);
    re2::StringPiece text(line.data(), line.size());
    if (e.re->Match(text, 0, text.size(), RE2::UNANCHORED, sub.data(), groups + 1))
      for (const auto& [name, index] : e.re->NamedCapturingGroups())
        if (!sub[index].empty()) out[name] = std::string(sub[index].data(), sub[index].size());
  }
  if (e.repeat) {
    // Every occurrence on the line, joined: "123 has 1.00 GiB, 456 has 3.00 GiB".
    re2::StringPiece rest(line.data(), line.size());
    int rgroups = e.repeat->NumberOfCapturingGroups();
    std::vector<re2::StringPiece> sub(static_cast<size_t>(rgroups) + 1);
    for (int guard = 0; guard < 64 && e.repeat->Match(rest, 0, rest.size(), RE2::UNANCHORED, sub.data(), rgroups + 1);
         ++guard) {
      for (const auto& [name, index] : e.repeat->NamedCapturingGroups()) {
        std::string& v = out[name];
        if (!v.empty()) v += ", ";
        v.append(sub[index].data(), sub[index].size());
      }
      size_t consumed = static_cast<size_t>(sub[0].data() + sub[0].size() - rest.data());
      if (consumed == 0) break;
      rest.remove_prefix(consumed);
    }
  }
  return out;
}

void Matcher::match_line(std::string_view line, std::vector<SignatureMatch>& out) const {
  std::vector<int> ids;
  set_matches(line, ids);
  if (ids.empty()) return;
  std::sort(ids.begin(), ids.end());  // file order, whatever order the set reports
  auto sig = [&](int i) { return entries_[static_cast<size_t>(i)].signature; };
  bool any_specific = std::any_of(ids.begin(), ids.end(), [&](int i) { return !sig(i)->generic; });
  // Among generic ones, a wrapper (consequence role) yields to a cause on the same line.
  bool any_cause = std::any_of(ids.begin(), ids.end(), [&](int i) { return sig(i)->role == SignatureRole::cause; });
  for (int i : ids) {
    const Entry& e = entries_[static_cast<size_t>(i)];
    if (any_specific && e.signature->generic) continue;
    if (any_cause && e.signature->generic && e.signature->role == SignatureRole::consequence) continue;
    out.push_back({e.signature, captures_of(e, line)});
  }
}

}  // namespace cd
