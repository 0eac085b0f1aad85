#!/usr/bin/env bash
# The main job: build the tool, then compile the built-in demo model, simulate it and report.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install_deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DVNNX_BUILD_TESTS=OFF >/dev/null
cmake --build build --target vnnx_tool -j "$(nproc)"
exec build/examples/vnnx demo "$@"
