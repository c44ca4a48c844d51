#!/usr/bin/env bash
# Last device run of the session: check vs collect_env (issue 2) and scan vs cuobjdump
# (issue 3) with the binary of this commit. Usage: OUT=$OUT bash bench/device_final.sh BINARY
set -uo pipefail
doctor=${1:-build/cuda-doctor}
OUT=${OUT:-/tmp/device_final}
mkdir -p "$OUT/check" "$OUT/scan"
OUT="$OUT/check" bash bench/check_h200.sh "$doctor"
OUT="$OUT/scan" bash bench/scan_h200.sh "$doctor" >/dev/null 2>&1
cat "$OUT/scan/timings.txt"
