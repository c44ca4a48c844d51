#pragma once
// `watch` renderers: the live status lines, the end summary (text, JSON) and the SVG
// timeline (report/watch_text.cpp, report/watch_svg.cpp). They print; derive/watch.cpp and
// rules/watch.cpp decide.
#include <string>
#include <vector>

#include "derive/watch.hpp"
#include "facts/finding.hpp"
#include "kb/kb.hpp"
#include "report/report.hpp"

namespace cd {

// One line per GPU for the terminal ("GPU 0  util 87 %  mem 41.2/140.4 GiB  612 W  1980 MHz
// power cap  · job CPU 3.10 cores"), each cut to `width` columns.
std::vector<std::string> render_watch_status(const WatchFacts& f, const WatchPoint& p, const Kb& kb, size_t width);
// The end summary: per GPU the shares and peaks, the busiest processes, the findings
// (warnings always, all with -v) and the watcher's own cost.
std::string render_watch_text(const WatchModel& m, const std::vector<Finding>& findings, const Kb& kb, const ReportOptions& opts);
// schema cuda-doctor/watch/v1: summary, findings, the per-GPU and per-process statistics, the
// derived series and the raw samples (docs/json-schema.md).
std::string render_watch_json(const WatchModel& m, const std::vector<Finding>& findings);
// A self-contained SVG: per GPU a panel with utilization and memory (%, left axis) and the
// CPU of the job's processes on it (cores, right axis) over time.
std::string render_watch_svg(const WatchModel& m);

}  // namespace cd
