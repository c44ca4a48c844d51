// explain's LogEvents -> findings. The causal error becomes one finding (the later
// errors it explains are its `consequences`); warnings and info lines become their
// own findings; context lines (NCCL transports, versions, LD_DEBUG) only add
// evidence or feed the derived checks at the end. Each finding is joined with the
// machine's facts (GPUs, driver, processes, library copies, Python envs).
#include <algorithm>
#include <functional>
#include <set>

#include <fmt/format.h>

#include "derive/derive_parts.hpp"
#include "kb/errors.hpp"
#include "kb/pytorch.hpp"
#include "rules/log_join.hpp"
#include "rules/rules.hpp"
#include "util/strings.hpp"
#include "util/version.hpp"

namespace cd {
namespace {

struct Ev {
  const LogEvent* event;
  const ErrorSignature* sig;  // null when the facts come from a newer signature set
  int priority;
};

Severity severity_of(const Ev& e) { return e.sig ? e.sig->severity : Severity::error; }
SignatureRole role_of(const Ev& e) { return e.sig ? e.sig->role : SignatureRole::cause; }

// Kernel Xids that usually follow an application fault rank after that fault.
int effective_priority(const LogEvent& e, const ErrorSignature* sig, const Kb& kb) {
  int p = sig ? sig->priority : 50;
  if (e.signature == "kernel_xid") {
    auto it = e.captures.find("xid");
    const XidInfo* x = it == e.captures.end() ? nullptr : find_xid(kb, std::atoi(it->second.c_str()));
    if (x && !x->hardware) p = 45;
  }
  return p;
}

std::string layer_of(const std::string& id) {
  std::string prefix = id.substr(0, id.find('.'));
  if (prefix == "windows" || prefix == "wsl" || prefix == "container" || prefix == "inference") return "platform";
  return prefix;
}

std::string where(const LogEvent& e) {
  return e.rank.empty() ? fmt::format("line {}", e.line) : fmt::format("line {}, rank {}", e.line, e.rank);
}

// Commands fix lines name by role, in the way the machine's distribution installs packages
// (the report's or this machine's; Ubuntu's when neither is known, data/plan.toml).
void add_machine_values(Values& values, const LogJoin& j) {
  values.emplace_back("kernel_headers", kernel_headers_command(j.kb, j.model.distro, "$(uname -r)"));
  values.emplace_back("hold_driver", hold_commands(j.kb, j.model.distro, "", {}).front());
}

Finding finding_from(const Ev& ev, const LogJoin& j) {
  const LogEvent& e = *ev.event;
  Values values(e.captures.begin(), e.captures.end());
  add_machine_values(values, j);
  Finding f = new_finding(e.id, severity_of(ev), e.frame.empty() ? j.facts.log.source : e.frame,
                          ev.sig ? fill_template(ev.sig->title, values) : e.signature, layer_of(e.id));
  f.evidence.push_back({fmt::format("{}: {}", where(e), e.text), j.facts.log.source});
  if (ev.sig) {
    f.explanation = fill_template(ev.sig->explanation, values);
    for (const auto& line : ev.sig->fix) f.fix.push_back(fill_template(line, values));
  }
  join_facts(f, e, j);
  return f;
}

std::string consequence_line(const Ev& ev) {
  const LogEvent& e = *ev.event;
  Values values(e.captures.begin(), e.captures.end());
  std::string title = ev.sig ? fill_template(ev.sig->title, values) : e.signature;
  return fmt::format("{}: {}  [{}]", where(e), title, e.id);
}

// The causal error: the most causal (lowest priority) cause-role error, earliest first;
// only when no cause-role error exists does a wrapper (consequence role) lead.
const Ev* pick_cause(const std::vector<Ev>& errors) {
  const Ev* best = nullptr;
  for (bool want_cause : {true, false}) {
    for (const Ev& ev : errors) {
      if (want_cause != (role_of(ev) == SignatureRole::cause)) continue;
      if (!best || ev.priority < best->priority || (ev.priority == best->priority && ev.event->line < best->event->line))
        best = &ev;
    }
    if (best) return best;
  }
  return nullptr;
}

// Where the same error shows up again (other ranks, repeats), say so once.
void note_repeats(Finding& f, const Ev& cause, const std::vector<Ev>& errors, const Facts& facts) {
  std::set<std::string> ranks;
  for (const Ev& ev : errors)
    if (ev.event->signature == cause.event->signature && !ev.event->rank.empty()) ranks.insert(ev.event->rank);
  auto it = facts.log.counts.find(cause.event->signature);
  uint64_t count = it == facts.log.counts.end() ? 1 : it->second;
  if (count > 1 || ranks.size() > 1)
    f.evidence.push_back({fmt::format("this error appears {} time{} in the log{}", count, count == 1 ? "" : "s",
                                      ranks.size() > 1 ? fmt::format(" (ranks {})", join({ranks.begin(), ranks.end()}, ", ")) : ""),
                          facts.log.source});
}

}  // namespace

Findings log_rules(const Model& m, const Kb& kb) {
  const Facts& facts = m.facts;
  LogJoin j{m, facts, kb, {}};
  std::vector<Ev> errors, others;
  for (const LogEvent& e : facts.log.events) {
    const ErrorSignature* sig = find_signature(kb, e.signature);
    Ev ev{&e, sig, effective_priority(e, sig, kb)};
    if (role_of(ev) == SignatureRole::context) j.context.push_back(&e);
    else if (severity_of(ev) == Severity::error) errors.push_back(ev);
    else others.push_back(ev);
  }

  Findings out;
  if (const Ev* cause = pick_cause(errors)) {
    Finding f = finding_from(*cause, j);
    add_log_context(f, j);
    note_repeats(f, *cause, errors, facts);
    std::set<std::string> seen{cause->event->signature};
    std::vector<const Ev*> later;
    for (const Ev& ev : errors)
      if (seen.insert(ev.event->signature).second) later.push_back(&ev);
    std::sort(later.begin(), later.end(), [](const Ev* a, const Ev* b) { return a->event->line < b->event->line; });
    for (const Ev* ev : later) f.consequences.push_back(consequence_line(*ev));
    out.push_back(std::move(f));
  }
  std::set<std::string> seen_ids;
  for (const Ev& ev : others)
    if (seen_ids.insert(ev.event->signature).second) out.push_back(finding_from(ev, j));

  Findings derived = derived_log_findings(j, out);
  out.insert(out.end(), std::make_move_iterator(derived.begin()), std::make_move_iterator(derived.end()));
  sort_by_severity(out);
  return out;
}

}  // namespace cd
