#!/usr/bin/env bash
# Issue 19: what a cold `check` asks of the disk, and what the disk can give (device machine, root).
#   OUT=dir bash bench/cold_io.sh BINARY [BINARY…]     (DISK_ONLY=1: disk.txt alone)
# Writes under $OUT:
#   disk.txt    the block device under site-packages: queue settings; random 4 KiB reads per second
#               and their latency at queue depths 1..256 with a cold cache, and 128 KiB and 1 MiB reads
#               for the bandwidth (bench/disk_speed.py)
#   pages.txt   (after the checks, warm) bench/fatbin_reads.py: the distinct pages every fatbin header of the Python
#               environments lies on (what a full scan must read), and with each container's walk
#               stopped at the first sm_90 SASS
#   check.txt   per binary, RUNS (default 3) cold `check` runs: wall time and the block device's own counters
#               (/sys/block/DEV/stat: reads issued, merged, KiB, ms busy) around each run, then a trace
set -uo pipefail
out=${OUT:-/tmp/cold_io}; mkdir -p "$out"
here=$(cd "$(dirname "$0")" && pwd)
py=$(command -v python3)
cold() { sync; echo 3 >/proc/sys/vm/drop_caches; }
cold || { echo "cold_io.sh: cannot drop caches (needs root)" | tee "$out/check.txt"; exit 1; }

sites=$(find /opt /usr/local/lib /usr/lib/python3* -maxdepth 6 -type d \( -name site-packages -o -name dist-packages \) 2>/dev/null | sort -u)
big=$(find $sites -name 'libtorch_cuda.so' 2>/dev/null | head -1)
[ -n "$big" ] || big=$(find $sites /usr/local/cuda/ -name '*.so*' -size +100M 2>/dev/null | head -1)
dev=$(df --output=source "$big" | tail -1); base=$(basename "$(readlink -f "$dev")")
blk=$base; [ -e "/sys/block/$blk" ] || blk=$(basename "$(readlink -f "/sys/class/block/$base/.." 2>/dev/null)")
# An overlay (container root): the busiest real disk.
[ -e "/sys/block/$blk/stat" ] || blk=$(for b in /sys/block/*; do case ${b##*/} in loop*|ram*|zram*) continue;; esac
  echo "$(awk '{print $3}' "$b/stat") ${b##*/}"; done | sort -n | tail -1 | cut -d' ' -f2)
{
  echo "site-packages: $sites"; echo "file: $big on $dev (block device $blk)"
  for f in read_ahead_kb nr_requests rotational scheduler max_sectors_kb logical_block_size; do
    echo "$f: $(cat /sys/block/$blk/queue/$f 2>/dev/null)"; done
  "$py" "$here/disk_speed.py" "$big"
} >"$out/disk.txt" 2>&1
[ -n "${DISK_ONLY:-}" ] && exit 0  # DISK_ONLY=1: the disk part alone


stat_of() { awk '{print $1, $2, $3, $4, $11}' "/sys/block/$blk/stat"; }  # reads, merged, sectors, ms reading, in-flight ms
{
  for doctor in "$@"; do
    doctor=$(readlink -f "$doctor")
    echo "== $doctor"
    for i in $(seq "${RUNS:-3}"); do
      cold; read -r r0 m0 s0 ms0 b0 < <(stat_of)
      t0=$(date +%s.%N); "$doctor" check >/dev/null 2>&1; t1=$(date +%s.%N)
      read -r r1 m1 s1 ms1 b1 < <(stat_of)
      awk -v a="$t0" -v b="$t1" -v r=$((r1 - r0)) -v m=$((m1 - m0)) -v s=$((s1 - s0)) -v ms=$((ms1 - ms0)) -v bz=$((b1 - b0)) \
        'BEGIN {printf "cold check %.3f s: %d reads (+%d merged), %d KiB, %.1f KiB/read, %d ms summed read time, %d ms busy\n", b - a, r, m, s / 2, s / 2 / (r ? r : 1), ms, bz}'
    done
    cold; rm -f "$out/t.tmp"; CUDA_DOCTOR_TRACE="$out/t.tmp" "$doctor" check >/dev/null 2>&1
    echo "-- trace (cold)"; cat "$out/t.tmp"; rm -f "$out/t.tmp"
  done
} >"$out/check.txt" 2>&1

# Warm: the last binary's check has just read the headers (a cold walk here would take minutes,
# one fault at a time under Python's lock).
"$doctor" check >/dev/null 2>&1
"$py" "$here/fatbin_reads.py" 90 ${sites:-/usr/local/cuda/} >"$out/pages.txt" 2>&1
cat "$out/disk.txt" "$out/check.txt" | grep -v '^\[' | head -60
