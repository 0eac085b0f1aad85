#!/usr/bin/env bash
# The whole test suite: the generated single header is current and the include graph keeps the
# layers, then a release build and an ASan+UBSan build each run every test (the README's command
# examples among them); the packaging routes are built and run; each fuzzer runs 60 s; Meson
# builds and runs the same tests.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install_deps.sh
jobs=$(nproc)
# A developer's ccache, when there is one, makes a re-run cheap; CI machines simply lack it.
launcher=()
if command -v ccache >/dev/null; then
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  # The test units use a precompiled header, which ccache caches only with this sloppiness.
  export CCACHE_SLOPPINESS=pch_defines,time_macros
fi

python3 scripts/gen_single_include.py --check
# No header includes a higher layer than docs/ARCHITECTURE.md's table allows.
python3 scripts/check_layers.py

# VNNX_VERIFY_HEADERS only adds a target outside "all" (built by test_consumers.sh below).
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DVNNX_VERIFY_HEADERS=ON "${launcher[@]}"
cmake --build build -j "$jobs"
# docs/OPS.md is the operator table of the traits: regenerate it and fail on any difference.
build/examples/vnnx ops --markdown > build/OPS.md
diff -u docs/OPS.md build/OPS.md || { echo "docs/OPS.md is stale: run 'vnnx ops --markdown > docs/OPS.md'" >&2; exit 1; }
ctest --test-dir build --output-on-failure -j "$jobs"

# Packaging: every public header compiled alone, then the four consumer projects against a copy
# installed from the build above (no second build of the tool) and against the source tree.
scripts/test_consumers.sh --build-dir build --verify-headers

cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DVNNX_SANITIZE=ON "${launcher[@]}"
cmake --build build-asan -j "$jobs"
ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 ctest --test-dir build-asan --output-on-failure -j "$jobs"

# Each libFuzzer target for a bounded time on its corpus (issue 8); any crash, leak, timeout or
# out-of-memory fails the suite and keeps its reproducer under fuzz/regressions/<target>/.
FUZZ_SECONDS=${FUZZ_SECONDS:-60} scripts/fuzz.sh

if [ ! -d build-meson ]; then meson setup build-meson >/dev/null; fi
meson test -C build-meson --print-errorlogs

# Longer stages, run on their own: longer fuzzing (FUZZ_SECONDS=600 scripts/fuzz.sh). The test
# suite against the single header alone: cmake -DVNNX_TEST_SINGLE_INCLUDE=ON.
