#!/usr/bin/env bash
# Issue 19: cold `check` and cold `scan` of several builds (or settings) in one run, interleaved,
# with the block device's counters around each run, per-file traces of one cold scan each, and
# whether each cold scan's answer equals the warm one (bench/scan_same.py).
#   OUT=dir RUNS=3 bash bench/cold_ab.sh NAME=BINARY[:VAR=VALUE…] …   [SCAN_DIRS="/opt /usr/local/cuda-13.0"]
# Cold = `sync; echo 3 > /proc/sys/vm/drop_caches` (root); without it, says so and stops.
set -uo pipefail
out=${OUT:-/tmp/cold_ab}; mkdir -p "$out"
here=$(cd "$(dirname "$0")" && pwd)
runs=${RUNS:-3}
read -r -a dirs <<<"${SCAN_DIRS:-/opt /usr/local/cuda-13.0}"
export NO_COLOR=1
sync; echo 3 >/proc/sys/vm/drop_caches 2>/dev/null || { echo "cannot drop the page cache here (not root?)"; exit 1; }
dev=$(lsblk -no pkname "$(findmnt -no source /)" 2>/dev/null | head -1)
[ -n "$dev" ] || dev=$(basename "$(findmnt -no source /)")
echo "# $(date -u +%FT%TZ) $(hostname) $(nproc) cores, /dev/$dev read_ahead_kb $(cat /sys/block/"$dev"/queue/read_ahead_kb 2>/dev/null) max_sectors_kb $(cat /sys/block/"$dev"/queue/max_sectors_kb 2>/dev/null); scan dirs ${dirs[*]}" | tee "$out/summary.txt"

one() {  # label, env assignments (space separated), command…: one cold run
  local label=$1 envs=$2; shift 2
  sync; echo 3 >/proc/sys/vm/drop_caches
  local s0 s1 t0 t1
  s0=$(cat "/sys/block/$dev/stat"); t0=$(date +%s.%N)
  env $envs "$@" >/dev/null 2>&1
  t1=$(date +%s.%N); s1=$(cat "/sys/block/$dev/stat")
  awk -v l="$label" -v a="$s0" -v b="$s1" -v t0="$t0" -v t1="$t1" \
    'BEGIN {split(a,x," "); split(b,y," "); printf "%-28s %.3f s  %6d reads  %8d KiB\n", l, t1-t0, y[1]-x[1], (y[3]-x[3])/2}'
}
warm() {  # label, envs, command…: median of 5 warm runs
  local label=$1 envs=$2; shift 2
  env $envs "$@" >/dev/null 2>&1
  for _ in 1 2 3 4 5; do
    local t0 t1; t0=$(date +%s.%N); env $envs "$@" >/dev/null 2>&1; t1=$(date +%s.%N)
    awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.4f\n", b - a}'
  done | sort -n | awk -v l="$label" '{a[NR]=$1} END {printf "%-28s warm median %.3f s (min %.3f, max %.3f)\n", l, a[3], a[1], a[5]}'
}

names=(); bins=(); envs=()
for v in "$@"; do
  names+=("${v%%=*}"); rest=${v#*=}
  bins+=("$(readlink -f "${rest%%:*}")")
  e=""; [[ $rest == *:* ]] && e=$(echo "${rest#*:}" | tr ':' ' ')
  envs+=("$e")
done
for i in "${!names[@]}"; do warm "${names[$i]} check" "${envs[$i]}" "${bins[$i]}" check; done | tee -a "$out/summary.txt"
for r in $(seq "$runs"); do
  for i in "${!names[@]}"; do one "${names[$i]} check #$r" "${envs[$i]}" "${bins[$i]}" check; done
done | tee -a "$out/summary.txt"
for r in $(seq "$runs"); do
  for i in "${!names[@]}"; do one "${names[$i]} scan #$r" "${envs[$i]}" "${bins[$i]}" scan "${dirs[@]}"; done
done | tee -a "$out/summary.txt"
for i in "${!names[@]}"; do warm "${names[$i]} scan" "${envs[$i]}" "${bins[$i]}" scan "${dirs[@]}"; done | tee -a "$out/summary.txt"
# Per file, and the same answer cold and warm.
for i in "${!names[@]}"; do
  n=${names[$i]}
  sync; echo 3 >/proc/sys/vm/drop_caches
  env ${envs[$i]} CUDA_DOCTOR_TRACE="$out/trace_scan_$n.txt" "${bins[$i]}" scan --json "${dirs[@]}" >"$out/scan_cold_$n.json" 2>/dev/null
  env ${envs[$i]} "${bins[$i]}" scan --json "${dirs[@]}" >"$out/scan_warm_$n.json" 2>/dev/null
  echo "$n scan cold vs warm: $(python3 "$here/scan_same.py" "$out/scan_cold_$n.json" "$out/scan_warm_$n.json")" | tee -a "$out/summary.txt"
  sync; echo 3 >/proc/sys/vm/drop_caches
  env ${envs[$i]} CUDA_DOCTOR_TRACE="$out/trace_check_$n.txt" "${bins[$i]}" check >/dev/null 2>&1
done
[ ${#names[@]} -gt 1 ] && echo "${names[0]} vs ${names[1]} warm scans: $(python3 "$here/scan_same.py" "$out/scan_warm_${names[0]}.json" "$out/scan_warm_${names[1]}.json")" | tee -a "$out/summary.txt"
for f in "$out"/trace_*.txt; do  # the 12 slowest files of each trace
  echo "-- $(basename "$f")"; grep -E "scan file|walked|files read|^trace [0-9.]+ [0-9]+ (scan|check|main)" "$f" | sed 's/^trace [0-9.]* [0-9]* //' | sort -t' ' -k3 -g -r | sed -n 1,14p
done >>"$out/summary.txt"
