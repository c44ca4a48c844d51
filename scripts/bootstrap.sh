#!/usr/bin/env bash
# Installs the Debian/Ubuntu packages cuda-doctor builds with. As root it runs
# apt-get; otherwise it prints the exact command to run and fails.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config
  libcli11-dev nlohmann-json3-dev libfmt-dev libtomlplusplus-dev
  libelf-dev libre2-dev libzstd-dev liblz4-dev zlib1g-dev
  libgtest-dev libgmock-dev libbenchmark-dev
)
if [ "${CD_WITH_FUZZ:-0}" = 1 ]; then packages+=(clang); fi
# Test-only tools (./dev.sh test sets it): headless Chromium renders watch --plot's SVG to a PNG
# (tests/watch_cli; the test skips cleanly without it).
if [ "${CD_WITH_TEST_TOOLS:-0}" = 1 ]; then packages+=(chromium); fi
# What the tests run for real (./dev.sh test): the shells `use` and `shell-init` write code for,
# direnv and hyperfine for bench/shell_init.sh, g++-11 for compiles with CUDA 11.8's nvcc.
# Optional: when they cannot be installed, those tests skip with the reason.
optional=()
if [ "${CD_WITH_TEST_TOOLS:-0}" = 1 ]; then optional=(zsh fish direnv hyperfine g++-11); fi
missing_optional=()
for p in "${optional[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing_optional+=("$p")
done
if [ ${#missing_optional[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ]; then
    echo "bootstrap: installing the optional test packages ${missing_optional[*]}" >&2
    { DEBIAN_FRONTEND=noninteractive apt-get update -qq && \
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing_optional[@]}"; } >/dev/null 2>&1 ||
      echo "bootstrap: could not install ${missing_optional[*]}; their tests skip" >&2
  else
    echo "bootstrap: optional test packages missing (their tests skip); to run them: sudo apt-get install -y ${missing_optional[*]}" >&2
  fi
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" = 0 ]; then
  echo "bootstrap: installing ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq "${missing[@]}" >/dev/null
else
  echo "bootstrap: missing packages; run:" >&2
  echo "  sudo apt-get install -y ${missing[*]}" >&2
  exit 1
fi
