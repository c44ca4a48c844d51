#!/usr/bin/env bash
# Issue 19: the first run on a fresh box. Times `check` and `scan DIRS` with a cold page cache
# against the warm runs and against `python -m torch.utils.collect_env` cold, and compares the
# cold scan's results with the warm scan's (arch sets and verdicts per file, bench/scan_same.py).
# The disk's own speed is measured before and after (bench/disk_speed.py), beside the timings.
#   OUT=dir bash bench/coldcache.sh BINARY [SCAN_DIR…]   (default dirs: /opt /usr/local/cuda-13.0)
# Cold: `sync; echo 3 > /proc/sys/vm/drop_caches` (root). Where that is refused, it says so and
# evicts the files it knows of instead (vmtouch -e, else posix_fadvise(DONTNEED) from Python):
# the scan directories, site-packages and the toolkit — not the binary's own libraries.
set -uo pipefail
doctor=$(readlink -f "${1:?usage: coldcache.sh BINARY [DIR…]}"); shift
dirs=("$@"); [ ${#dirs[@]} -gt 0 ] || dirs=(/opt /usr/local/cuda-13.0)
out=${OUT:-/tmp/coldcache}; mkdir -p "$out"
here=$(cd "$(dirname "$0")" && pwd)
py=${PY:-$(command -v python3)}
runs=${RUNS:-5}
export NO_COLOR=1
sum="$out/summary.txt"; : >"$sum"
log() { echo "$*" | tee -a "$sum"; }

evict_dirs=("${dirs[@]}")
for d in $("$py" -c 'import site,sys; print(" ".join(site.getsitepackages()))' 2>/dev/null) /usr/local/cuda/; do
  [ -d "$d" ] && evict_dirs+=("$d")
done
if sync && echo 3 >/proc/sys/vm/drop_caches 2>/dev/null; then
  method="drop_caches"
  cold() { sync; echo 3 >/proc/sys/vm/drop_caches; }
elif command -v vmtouch >/dev/null; then
  method="vmtouch -e (drop_caches refused)"
  cold() { vmtouch -q -e "${evict_dirs[@]}" >/dev/null 2>&1; }
else
  method="posix_fadvise(DONTNEED) (drop_caches refused, no vmtouch)"
  cold() { "$py" - "${evict_dirs[@]}" <<'PY'
import os, sys
for top in sys.argv[1:]:
    for d, _, fs in os.walk(top):
        for f in fs:
            try:
                fd = os.open(os.path.join(d, f), os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
            except OSError:
                continue
            try: os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
            except OSError: pass
            os.close(fd)
PY
  }
fi
log "# cold-cache bench on $(hostname), $(date -u +%FT%TZ), $(nproc) cores; cold = $method"
log "binary: $doctor; scan dirs: ${dirs[*]}"

# median of RUNS wall times of "$@"; $1 = cold|warm
timed() {
  local mode=$1; shift
  local ts=()
  for _ in $(seq "$runs"); do
    if [ "$mode" = cold ]; then cold; else "$@" >/dev/null 2>&1; fi
    local t0 t1; t0=$(date +%s.%N); "$@" >/dev/null 2>&1; t1=$(date +%s.%N)
    ts+=("$(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.4f", b - a}')")  # no bc on the device
  done
  printf '%s\n' "${ts[@]}" | sort -n | awk '{a[NR]=$1} END {printf "median %.3f s (min %.3f, max %.3f, n=%d)", a[int((NR+1)/2)], a[1], a[NR], NR}'
}

# The disk's speed at this moment, before and after the timed runs (bench/disk_speed.py: 4 KiB
# reads and 128 KiB reads, 64 in flight, cold): the device's disk is not one speed.
probe=$(find "${dirs[@]}" -xdev -type f -size +100M 2>/dev/null | head -1)
disk() {
  [ -n "$probe" ] || { echo "no file over 100 MB to probe"; return; }
  "$py" "$here/disk_speed.py" "$probe" 4096:64:4000 131072:64:1600 2>&1 | sed 's/^ *//; s/  */ /g' | paste -sd';'
}
log "disk before: $(disk)"
log "check warm:  $(timed warm "$doctor" check)"
log "check cold:  $(timed cold "$doctor" check)"
log "scan warm:   $(timed warm "$doctor" scan "${dirs[@]}")"
log "scan cold:   $(timed cold "$doctor" scan "${dirs[@]}")"
log "disk after:  $(disk)"
if [ -z "${NO_COLLECT_ENV:-}" ] && "$py" -c 'import torch' 2>/dev/null; then
  runs=3 log "collect_env cold: $(runs=3 timed cold "$py" -m torch.utils.collect_env)"
  log "collect_env warm: $(runs=3 timed warm "$py" -m torch.utils.collect_env)"
fi

# Same answers cold and warm.
cold; "$doctor" scan --json "${dirs[@]}" >"$out/scan_cold.json" 2>/dev/null
"$doctor" scan --json "${dirs[@]}" >"$out/scan_warm.json" 2>/dev/null
log "scan cold vs warm: $("$py" "$here/scan_same.py" "$out/scan_cold.json" "$out/scan_warm.json")"

# Where a cold check's time goes: trace marks, and the reads (major faults, blocks) it costs.
cold; CUDA_DOCTOR_TRACE="$out/trace_cold.txt" "$doctor" check -v >"$out/check_cold_v.txt" 2>&1
cold; /usr/bin/time -v "$doctor" check >/dev/null 2>"$out/time_cold.txt"
"$doctor" check >/dev/null 2>&1; /usr/bin/time -v "$doctor" check >/dev/null 2>"$out/time_warm.txt"
for f in time_cold time_warm; do
  log "$f: $(grep -E 'Elapsed|Major|File system inputs' "$out/$f.txt" | sed 's/^\s*//' | paste -sd';')"
done

# Where a cold scan's time goes: per-file trace (ms, KiB, faults), the block device's counters.
dev=$(lsblk -no pkname "$(findmnt -no source /)" 2>/dev/null | head -1); [ -n "$dev" ] || dev=$(findmnt -no source / | sed 's|/dev/||;s|[0-9]*$||')
cold; s0=$(cat "/sys/block/$dev/stat" 2>/dev/null)
CUDA_DOCTOR_TRACE="$out/trace_scan_cold.txt" "$doctor" scan "${dirs[@]}" >/dev/null 2>&1
s1=$(cat "/sys/block/$dev/stat" 2>/dev/null)
log "scan cold trace: $(sort -t' ' -k3 -n -r "$out/trace_scan_cold.txt" 2>/dev/null | wc -l) lines; block $dev reads/KiB: $(awk -v a="$s0" -v b="$s1" 'BEGIN {split(a,x," "); split(b,y," "); printf "%d reads, %d KiB", y[1]-x[1], (y[3]-x[3])/2}')"
