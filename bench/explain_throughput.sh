#!/usr/bin/env bash
# Throughput of `cuda-doctor explain` over a generated log (default 1 GiB), made at run
# time and deleted afterwards (never committed). Usage: bench/explain_throughput.sh [SIZE_MB] [BINARY]
# The log looks like a long multi-rank training run: ANSI-colored progress, rank prefixes,
# NCCL INFO lines, warnings, and a few real errors spread through it.
set -euo pipefail
size_mb=${1:-1024}
bin=${2:-$(dirname "$0")/../build/cuda-doctor}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
log=$dir/train.log

# One ~1 MiB block of typical lines, repeated; every 64th block carries errors.
python3 - "$dir" <<'PY'
import sys, random
random.seed(1)
d = sys.argv[1]
lines = []
for i in range(9000):
    r = i % 8
    k = random.random()
    if k < 0.6:
        lines.append(f"[rank{r}]: step {i} loss {random.random():.4f} lr 3.0e-04 grad_norm {random.random()*3:.3f} tokens/s {random.randint(9000,12000)}")
    elif k < 0.8:
        lines.append(f"\x1b[32mINFO\x1b[0m 2026-12-02 10:{i%60:02d}:00 trainer.py:{i%900}] epoch 3 iter {i}/100000 eta 1:23:45 mem 61.2G")
    elif k < 0.9:
        lines.append(f"gpu-node:4242:{4300+r} [{r}] NCCL INFO comm 0x55d1c0 rank {r} nRanks 8 nNodes 1 localRanks 8 localRank {r} MNNVL 0")
    elif k < 0.97:
        lines.append(f"Epoch 3:  {i%100}%|\u2588\u2588\u2588\u258f      | {i}/100000 [01:{i%60:02d}<22:10, 7.41it/s, loss=2.1]")
    else:
        lines.append("/opt/venv/lib/python3.12/site-packages/torch/_utils.py:831: UserWarning: TypedStorage is deprecated.")
block = "\n".join(lines) + "\n"
open(f"{d}/block", "w").write(block)
err = ("[rank3]: RuntimeError: CUDA error: an illegal memory access was encountered\n"
       "[rank1]:[E1202 10:10:00.000000000 ProcessGroupNCCL.cpp:616] [Rank 1] Watchdog caught collective operation timeout: "
       "WorkNCCL(SeqNum=12, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600040 milliseconds before timing out.\n")
open(f"{d}/errblock", "w").write(block + err)
PY
block_bytes=$(stat -c %s "$dir/block")
blocks=$(( size_mb * 1048576 / block_bytes ))
for ((i = 0; i < blocks; i++)); do
  if (( i % 64 == 63 )); then cat "$dir/errblock"; else cat "$dir/block"; fi
done > "$log"
bytes=$(stat -c %s "$log")

cat "$log" > /dev/null  # warm the page cache: measure the scanner, not the disk
start=$(date +%s%N)
/usr/bin/time -f "%M" -o "$dir/rss" "$bin" explain --no-probe --json "$log" > "$dir/out.json" || true
end=$(date +%s%N)
secs=$(( (end - start) / 1000000 ))e-3  # no bc on minimal machines
python3 - "$dir/out.json" "$bytes" "$secs" "$(tail -1 "$dir/rss")" <<'PY'
import json, sys
out, size, secs, rss = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4])
d = json.load(open(out))
first = d["findings"][0]["id"] if d["findings"] else "-"
print(f"log: {size/2**20:.0f} MiB, {d['log']['lines']} lines")
print(f"time: {secs:.2f} s  throughput: {size/2**20/secs:.0f} MiB/s  peak RSS: {rss/1024:.1f} MiB")
print(f"cause: {first}; matches counted: {sum(d['log']['counts'].values())}")
PY
