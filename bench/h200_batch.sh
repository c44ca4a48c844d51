#!/usr/bin/env bash
# One device call, several benches: each named part runs with its own time limit and
# writes under $OUT/<part>; everything is packed into $OUT/r.tgz (the device tool brings
# back at most 8 files). Usage on the device:
#   OUT=$OUT bash bench/h200_batch.sh BINARY PART…
# BUDGET=seconds (default 560) bounds the whole call. PART: explain (17) · report (issue 11) · hostile (12) · libs (15) · lazy (15: which step of a torch process loads which library, LD_DEBUG) · ps (16) · cold (19, cold page cache;
#   OLD=binary also measures an older build) · toolkits (13) · plan (14) · watch (16) · platform (18)
#   · coldio (19: the disk, the pages a scan needs, a cold check's reads; COLDIO_ALSO="bin…" adds builds)
#   · ab (19: cold check and scan of several builds or settings, AB="name=binary[:VAR=value] …")
#   · profile (where ps, use and a cold check spend their time; PROFILE_OLD=binary compares an older build)
set -u
doctor=$(readlink -f "${1:?usage: h200_batch.sh BINARY PART…}"); shift
out=${OUT:-/tmp/h200_batch}
mkdir -p "$out"
export NO_COLOR=1
here=$(cd "$(dirname "$0")" && pwd)
# One device call runs at most 600 s: parts share BUDGET seconds (default 560); a part gets
# what is left when its own limit is more, and is skipped when under 20 s are left.
start=$(date +%s)
budget=${BUDGET:-560}
run_part() {  # name, limit in seconds, command…
  local name=$1 limit=$2; shift 2
  local left=$(( budget - ($(date +%s) - start) ))
  if [ "$left" -lt 20 ]; then echo "== $name: skipped, ${left} s left" | tee -a "$out/parts.txt"; return; fi
  [ "$limit" -gt "$left" ] && limit=$left
  mkdir -p "$out/$name"
  local t0; t0=$(date +%s)
  OUT="$out/$name" timeout "$limit" "$@" >"$out/$name/log.txt" 2>&1
  echo "== $name: exit $? in $(( $(date +%s) - t0 )) s" | tee -a "$out/parts.txt"
}
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; uname -r; } >"$out/machine.txt" 2>&1
for part in "$@"; do
  case $part in
    report) run_part report 240 bash "$here/report_h200.sh" "$doctor" ;;
    hostile) CD=$doctor run_part hostile 200 bash "$here/hostile_h200.sh" ;;
    libs) run_part libs 150 bash "$here/libs_h200.sh" "$doctor" ;;
    lazy) run_part lazy 120 bash "$here/libs_lazy.sh" ;;
    ps) run_part ps 200 bash "$here/ps_h200.sh" "$doctor" ;;
    cold)
      [ -n "${OLD:-}" ] && RUNS=3 NO_COLLECT_ENV=1 run_part cold_old 150 bash "$here/coldcache.sh" "$(readlink -f "$OLD")"
      run_part cold 300 bash "$here/coldcache.sh" "$doctor" ;;
    toolkits) run_part toolkits 150 bash "$here/toolkits_h200.sh" "$doctor" .cuda118/cuda-11.8.tar.xz ;;
    plan) run_part plan 120 bash "$here/plan_h200.sh" "$doctor" ;;
    watch) run_part watch 200 bash "$here/watch_h200.sh" "$doctor" ;;
    platform) run_part platform 120 bash "$here/platform_h200.sh" "$doctor" ;;
    explain) run_part explain 300 bash "$here/explain_reports_h200.sh" "$doctor" ;;
    ab) run_part ab 540 bash "$here/cold_ab.sh" ${AB:-} ;;
    coldio) run_part coldio 300 bash "$here/cold_io.sh" "$doctor" ${COLDIO_ALSO:-} ;;
    profile) run_part profile 200 bash "$here/profile_h200.sh" "$doctor" ${PROFILE_OLD:+"$(readlink -f "$PROFILE_OLD")"} ;;
    *) echo "unknown part $part" >>"$out/parts.txt" ;;
  esac
done
tar czf "$out/r.tgz" -C "$out" --exclude r.tgz . 2>/dev/null
find "$out" -mindepth 1 -maxdepth 1 ! -name r.tgz ! -name parts.txt -exec rm -rf {} +
cat "$out/parts.txt"
