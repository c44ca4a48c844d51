#!/usr/bin/env bash
# Issue 11 and 12 on the real H200, one device run:
#  - the default `check` report (line count, errors, warnings), `-v`, `--json`, `--markdown`;
#  - `snapshot`, then `check --facts` of that snapshot: the replay must print the live report;
#  - `verify` with a fresh HOME: nothing may appear under it (issue 12 #17).
# Usage on the device: OUT=$OUT bash bench/report_h200.sh BINARY
set -uo pipefail
doctor=${1:-build/cuda-doctor}
out=${OUT:-/tmp/report_h200}
mkdir -p "$out"
export NO_COLOR=1
"$doctor" check >"$out/check.txt" 2>&1; echo "exit $?" >"$out/check.rc"
"$doctor" check -v >"$out/check_v.txt" 2>&1
"$doctor" check --markdown >"$out/check.md" 2>&1
"$doctor" check --json >"$out/check.json" 2>/dev/null
"$doctor" snapshot >"$out/facts.json" 2>/dev/null
"$doctor" check --facts "$out/facts.json" >"$out/replay.txt" 2>&1; echo "exit $?" >>"$out/check.rc"
{
  echo "check lines: $(wc -l <"$out/check.txt")  (exit $(head -1 "$out/check.rc"))"
  echo "check -v lines: $(wc -l <"$out/check_v.txt")"
  python3 - "$out/check.json" <<'PY'
import json, sys, collections
f = json.load(open(sys.argv[1]))
c = collections.Counter(x.get("severity") for x in f.get("findings", []))
print("findings by severity:", dict(c))
for x in f.get("findings", []):
    print(" ", x.get("severity"), x.get("id"), "-", x.get("title", "")[:100])
PY
  if diff <(sed '1d' "$out/check.txt") <(sed '1d' "$out/replay.txt") >"$out/replay.diff"; then
    echo "replay of snapshot: same report as the live run"
  else
    echo "replay of snapshot differs ($(wc -l <"$out/replay.diff") diff lines)"; head -20 "$out/replay.diff"
  fi
  home=$(mktemp -d)
  HOME=$home timeout 300 "$doctor" verify >"$out/verify.txt" 2>&1; echo "verify exit $?"
  echo "files under the fresh HOME after verify: $(find "$home" -mindepth 1 | wc -l)"; find "$home" -mindepth 1 | head
} 2>&1 | tee "$out/summary.txt"
