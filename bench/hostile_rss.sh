#!/usr/bin/env bash
# Peak RSS (and wall time, output size) of cuda-doctor on issue 12 #1's amplifier: a file
# of repeated fatbin magic, each followed by a bad header (100 MB by default), reached four
# ways: `scan FILE`, `check --root` and `snapshot --root` of a root whose dist-packages hold
# it, and `explain` of a log line naming it. Also #6's decompression bomb under --kernels:
# 2000 zstd entries whose headers claim 512 MiB each (tiny frames).
#   bench/hostile_rss.sh [BINARY=build/cuda-doctor] [MB=100] [WHICH="scan check snapshot explain kernels"]
# KERNELS_TIMEOUT (default 300 s) bounds the --kernels run (rc 124 when it ran out).
# Prints one line per command: what, peak RSS (MB, /usr/bin/time -v), wall seconds, stdout bytes, exit code.
set -uo pipefail
bin=$(realpath "${1:-build/cuda-doctor}")
mb=${2:-100}
which=${3:-scan check snapshot explain kernels}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
root="$work/root"
amp="$root/usr/lib/python3/dist-packages/evil/amp.so"
mkdir -p "$root/usr/bin" "$(dirname "$amp")"
printf '#!/bin/sh\n' >"$root/usr/bin/python3" && chmod +x "$root/usr/bin/python3"
python3 -c "import struct,sys;open(sys.argv[1],'wb').write(struct.pack('<IHH',0xBA55ED50,1,0)*($mb<<17))" "$amp"
echo "RuntimeError: CUDA error in $amp: no kernel image is available for execution on the device" >"$work/amp.log"
# 2000 containers, each one zstd SASS entry: a 10-byte frame without a content size (one RLE
# block of 100000 zeros) whose entry header claims 512 MiB.
python3 - "$work/bomb.fatbin" <<'PY'
import struct, sys
frame = bytes.fromhex('28b52ffd') + bytes([0x00, 0x38]) + ((100000 << 3) | 3).to_bytes(3, 'little') + b'\0'
entry = struct.pack('<HHIQIIHHIQQQQ', 2, 0x101, 64, 16, len(frame), 0, 0, 1, 90, 0, 0x8011, 0, 512 << 20)
entry += frame.ljust(16, b'\0')
cont = struct.pack('<IHHQ', 0xBA55ED50, 1, 16, len(entry)) + entry
open(sys.argv[1], 'wb').write(cont * 2000)
PY
measure() {  # NAME CMD…
  local name=$1; shift
  /usr/bin/time -v -o "$work/time" "$@" >"$work/out" 2>"$work/err"
  local rc=$?
  local rss wall
  rss=$(awk -F': ' '/Maximum resident/ {printf "%.0f", $2/1024}' "$work/time")
  wall=$(awk -F': ' '/Elapsed \(wall/ {print $2}' "$work/time")
  printf '%-10s peak_rss_mb=%-6s wall=%-8s stdout_bytes=%-11s rc=%s\n' "$name" "$rss" "$wall" "$(stat -c %s "$work/out")" "$rc"
}
echo "# $(date -u +%F) $(uname -n) $(nproc) cores; $bin; amplifier ${mb} MB"
for w in $which; do
  case $w in
    scan) measure scan "$bin" scan "$amp" --gpu sm_90 --driver 580.65 ;;
    check) measure check env PATH=/usr/bin:/bin "$bin" check --root "$root" ;;
    snapshot) measure snapshot env PATH=/usr/bin:/bin "$bin" snapshot --root "$root" ;;
    explain) measure explain "$bin" explain "$work/amp.log" --json ;;
    kernels) measure kernels timeout "${KERNELS_TIMEOUT:-300}" "$bin" scan "$work/bomb.fatbin" --kernels --gpu sm_90 --json ;;
  esac
done
