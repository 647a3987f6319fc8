#!/usr/bin/env bash
# Configures, builds and runs every test. Usage: scripts/test.sh [BUILD_DIR] [extra cmake args...]
set -euo pipefail
cd "$(dirname "$0")/.."
build="${1:-build}"
shift || true
cmake -S . -B "$build" -G Ninja "$@"
cmake --build "$build" -j "$(nproc)"
# CTEST_EXCLUDE: a regex of tests to leave out (the sanitizer build skips the 1,024-GPU scenario).
ctest --test-dir "$build" --output-on-failure -j "$(nproc)" ${CTEST_EXCLUDE:+-E "$CTEST_EXCLUDE"}
