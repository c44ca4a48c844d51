#!/usr/bin/env bash
# Builds the libFuzzer target with clang (its own build dir, build-fuzz/) and fuzzes the
# parsers and --root resolution for a bounded time:  fuzz/run.sh [SECONDS=60]  (a tenth of it to
# each of the nine targets)
# Seeds: tiny real binaries from nvcc when it is installed, else a hand-made fatbin.
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-60}
dir=${CD_FUZZ_BUILD_DIR:-build-fuzz}
CC=clang CXX=clang++ cmake -S . -B "$dir" -G Ninja -DCD_FUZZ=ON -DCD_TESTS=OFF -DCMAKE_BUILD_TYPE=Debug \
  -DCMAKE_CXX_FLAGS="-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined -g -O1" >/dev/null
# Quiet when it builds; the whole log when it does not.
if ! ninja -C "$dir" fatbin_fuzz explain_fuzz ldcache_fuzz check_inputs_fuzz facts_json_fuzz root_fuzz lock_fuzz pkglog_fuzz report_fuzz >"$dir/ninja.log" 2>&1; then
  cat "$dir/ninja.log" >&2
  echo "fuzz/run.sh: the fuzz targets did not build" >&2
  exit 1
fi
corpus="$dir/fuzz-corpus"
mkdir -p "$corpus"
if [ -z "$(ls -A "$corpus")" ]; then
  nvcc=/usr/local/cuda/bin/nvcc
  if [ -x "$nvcc" ]; then
    tmp=$(mktemp -d)
    printf '__global__ void k(float* x) { x[0] += 1; }\n' >"$tmp/k.cu"
    for mode in none speed size; do
      "$nvcc" -c "$tmp/k.cu" -o "$corpus/k_$mode.o" -gencode arch=compute_80,code=[sm_80,compute_80] \
        -gencode arch=compute_90a,code=sm_90a -compress-mode=$mode || true
    done
    # An archive with a symbol table (the archive read-ahead walks its members).
    ar rcs "$corpus/k.a" "$corpus/k_none.o" "$corpus/k_size.o" || true
    "$nvcc" -fatbin "$tmp/k.cu" -o "$corpus/k.fatbin" -gencode arch=compute_100f,code=sm_100f || true
    "$nvcc" -cubin -arch=sm_90a "$tmp/k.cu" -o "$corpus/k.cubin" || true
    rm -rf "$tmp"
  fi
  # Always one hand-made container: magic, version 1, header 16, one 64-byte SASS entry for sm_90.
  printf '\x50\xed\x55\xba\x01\x00\x10\x00\x40\x00\x00\x00\x00\x00\x00\x00\x02\x00\x01\x01\x40\x00\x00\x00%056d' 0 |
    head -c 80 >"$corpus/min.fatbin"
fi
share=$(( secs / 10 > 0 ? secs / 10 : 1 ))
# A fixed seed makes a CI failure replayable (CD_FUZZ_SEED=0 lets libFuzzer pick one).
seed=${CD_FUZZ_SEED:-1}
"$dir/fuzz/fatbin_fuzz" -max_total_time="$share" -seed="$seed" -timeout=10 -rss_limit_mb=2048 -max_len=1048576 "$corpus"
# explain: seeded with the committed log corpus (copied: libFuzzer adds to its corpus dir).
logs="$dir/fuzz-logs"
mkdir -p "$logs"
cp -n tests/fixtures/logs/*.log "$logs"/ 2>/dev/null || true
"$dir/fuzz/explain_fuzz" -max_total_time="$share" -seed="$seed" -timeout=10 -rss_limit_mb=2048 -max_len=65536 "$logs"
cache="$dir/fuzz-ldcache"
mkdir -p "$cache"
[ -r /etc/ld.so.cache ] && cp -n /etc/ld.so.cache "$cache/" || true
"$dir/fuzz/ldcache_fuzz" -max_total_time="$share" -seed="$seed" -timeout=10 -rss_limit_mb=2048 -max_len=1048576 "$cache"
# check's inputs: the first byte picks the parser (check_inputs_fuzz.cpp), so seeds carry it.
inputs="$dir/fuzz-check-inputs"
mkdir -p "$inputs"
if [ -z "$(ls -A "$inputs")" ]; then
  { printf '\x00'; cat tests/fixtures/h200/facts.json; } >"$inputs/facts"
  printf '\x81{"stage":"nvml","t":0.01}\n{"facts":{"nvml_status":0,"gpus":[{"name":"NVIDIA H200","cc_major":9}]}}\n{"stage":"done"}\n' >"$inputs/child"
  printf '\x02NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.159.04  Release Build\n' >"$inputs/nvrm"
  printf '\x03Cuda compilation tools, release 13.0, V13.0.88\n' >"$inputs/nvcc"
  printf '\x04nvidia-cudnn-cu13==9.19.0.56; platform_system == "Linux" and platform_machine == "x86_64"' >"$inputs/req"
  printf '\x05envs_dirs:\n  - ~/envs\n  - "/data/envs"\n' >"$inputs/condarc"
  printf '\x0613.0.88' >"$inputs/version"
fi
# Inputs that once crashed a target stay in the corpus (fuzz/regressions/<target>/).
cp -n fuzz/regressions/check_inputs/* "$inputs"/ 2>/dev/null || true
"$dir/fuzz/check_inputs_fuzz" -max_total_time="$share" -seed="$seed" -timeout=10 -rss_limit_mb=2048 -max_len=262144 "$inputs"
# The facts JSON writer/reader: seeded with a recorded machine and bytes that are not UTF-8.
facts="$dir/fuzz-facts-json"
mkdir -p "$facts"
if [ -z "$(ls -A "$facts")" ]; then
  cp tests/fixtures/h200/facts.json "$facts/h200"
  printf 'lib\xffcuda.so \xc3 \xe2\x82 \xed\xa0\x80 \xf4\x90\x80\x80' >"$facts/not_utf8"
  printf '{"schema":"cuda-doctor/facts/v1","driver":{"gpus":[{"cc_major":2147483648,"memory_total_mib":-5}]}}' >"$facts/ranges"
fi
cp -n fuzz/regressions/facts_json/* "$facts"/ 2>/dev/null || true
"$dir/fuzz/facts_json_fuzz" -max_total_time="$share" -seed="$seed" -timeout=10 -rss_limit_mb=2048 -max_len=262144 "$facts"
# --root resolution: each input is a program that builds a tree (root_fuzz.cpp says how);
# the seeds climb out with "../", point at the host path of the sentinel next to the root,
# link to "/", loop, plant a FIFO and chain more than 40 links.
roots="$dir/fuzz-root"
mkdir -p "$roots"
if [ -z "$(ls -A "$roots")" ]; then
  printf '\x02\x00\x00\x08\x04\x04\x07\x08\x04\x02\x00' >"$roots/dotdot_escape"
  printf '\x00\x00\x00\x02\x01\x00\x01\x01\x02\x00\x02\x02\x02\x01\x01\x00\x02\x04\x0c\x00\x01\x00\x01\x00\x02' >"$roots/link_to_slash_and_loop"
  printf '\x05\x00\x00\x01\x05\x00\x01\x02\x05\x00\x02\x04\x04\x04\x01\x08\x04\x06\x02\x07\x08' >"$roots/host_absolute_targets"
  printf '\x00\x00\x00\x03\x01\x00\x01\x04\x04\x00\x01' >"$roots/fifo"
  printf '\x02\x00\x01\x02\x05\x02\x00\x00\x0e\x01\x01\x01\x01\x01\x01\x01\x02\x00\x02\x0e\x00\x00\x00\x00\x00\x00\x00\x04\x02\x02\x04\x02\x00' >"$roots/over_40_links"
fi
cp -n fuzz/regressions/root/* "$roots"/ 2>/dev/null || true
"$dir/fuzz/root_fuzz" -max_total_time="$share" -seed="$seed" -timeout=10 -rss_limit_mb=2048 -max_len=1024 "$roots"
# plan --from's lock reader: seeded with a lock shaped like `lock` writes and broken ones.
locks="$dir/fuzz-lock"
mkdir -p "$locks"
if [ -z "$(ls -A "$locks")" ]; then
  printf '{"schema":"cuda-doctor/lock/v1","machine":{"gpus":[{"sm":90,"name":"NVIDIA H200"}],"driver":"580.159.04"},"torch":{"version":"2.11.0+cu130","arch_list":["sm_90"]},"packages":[{"name":"nvidia-cudnn-cu13","version":"9.19.0.56"}],"env":{"CUDA_HOME":"/usr/local/cuda"}}' >"$locks/lock"
  printf '{"schema":"cuda-doctor/lock/v1","torch":[],"env":{"A":1}}' >"$locks/bad"
fi
"$dir/fuzz/lock_fuzz" -max_total_time="$share" -seed="$seed" -timeout=10 -rss_limit_mb=2048 -max_len=65536 "$locks"
# Package-manager logs: seeded with the install_* fixtures' logs, the reader's byte first.
pkglogs="$dir/fuzz-pkglog"
mkdir -p "$pkglogs"
if [ -z "$(ls -A "$pkglogs")" ]; then
  r=tests/fixtures/roots
  { printf '\x00'; gzip -dc $r/install_upgraded_435/var/log/apt/history.log.1.gz; } >"$pkglogs/history"
  { printf '\x01'; cat $r/install_unattended_550/var/log/dpkg.log.1; } >"$pkglogs/dpkg"
  { printf '\x02'; cat $r/install_dnf_rocky/var/log/dnf.rpm.log; } >"$pkglogs/dnf"
  { printf '\x03'; gzip -dc $r/install_unattended_550/var/log/unattended-upgrades/unattended-upgrades.log.1.gz; } >"$pkglogs/uu"
  { printf '\x04'; cat $r/install_upgraded_435/var/log/dpkg.log.2.gz; } >"$pkglogs/gz"
  { printf '\x05'; cat $r/topo_acs_on/sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:08.0/config; } >"$pkglogs/config"
fi
cp -n fuzz/regressions/pkglog/* "$pkglogs"/ 2>/dev/null || true
"$dir/fuzz/pkglog_fuzz" -max_total_time="$share" -seed="$seed" -timeout=10 -rss_limit_mb=2048 -max_len=262144 "$pkglogs"
# The environment report parsers: every real report of tests/fixtures/reports once per parser
# (the first byte picks it; 14 = all parsers and the rules).
reports="$dir/fuzz-reports"
mkdir -p "$reports"
if [ -z "$(ls -A "$reports")" ]; then
  for f in tests/fixtures/reports/*.txt tests/fixtures/reports/*.md; do
    for p in $(seq 0 14); do
      { printf "\\$(printf '%03o' "$p")"; cat "$f"; } >"$reports/$(basename "$f").$p"
    done
  done
fi
cp -n fuzz/regressions/report/* "$reports"/ 2>/dev/null || true
"$dir/fuzz/report_fuzz" -max_total_time="$share" -seed="$seed" -timeout=10 -rss_limit_mb=2048 -max_len=65536 "$reports"
