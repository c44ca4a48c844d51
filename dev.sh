#!/usr/bin/env bash
# The two set-up commands of the README:
#   ./dev.sh run [ARGS…]   install build deps, build cuda-doctor, run it (default: check)
#   ./dev.sh test          install build deps, build everything, run the whole test suite (ctest)
set -euo pipefail
cd "$(dirname "$0")"
build=${CD_BUILD_DIR:-build}
jobs=$(nproc 2>/dev/null || echo 2)

configure() {
  CD_WITH_TEST_TOOLS=${CD_WITH_TEST_TOOLS:-0} scripts/bootstrap.sh
  cmake -S . -B "$build" -G Ninja -DCD_WERROR=ON "$@" >/dev/null
}

cmd=${1:-run}
shift || true
case "$cmd" in
  run)
    configure -DCD_TESTS=OFF
    ninja -C "$build" -j"$jobs" cuda-doctor >/dev/null
    exec "$build/cuda-doctor" "$@"
    ;;
  test)
    CD_WITH_TEST_TOOLS=1 configure -DCD_TESTS=ON
    ninja -C "$build" -j"$jobs"
    ctest --test-dir "$build" --output-on-failure -j"$jobs" "$@"
    ;;
  *)
    echo "usage: ./dev.sh run [ARGS…] | ./dev.sh test [CTEST ARGS…]" >&2
    exit 3
    ;;
esac
