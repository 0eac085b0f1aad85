#!/usr/bin/env bash
# Runs the VectorBlox SDK's own .vnnx files in our simulator: for each model and preset, the SDK's
# compiler writes its file (../shared/tools/sdk_golden/sdk_compile.sh, set up once as its README
# says), then the C client of libvbx_cnn_sim.so runs the file's embedded test input and reports how
# far each output is from the output the SDK embedded beside it (TFLite's answer). The SDK's files
# stay in OUT (default build/sdk_files), outside the repository: their licence limits their use.
#
#   scripts/sdk_files_check.sh [-s V250,V500,V1000] [--out DIR] [--build DIR] MODEL.tflite ...
#
# Prints one line per file; exits 1 when a file the SDK wrote does not run.
set -euo pipefail
cd "$(dirname "$0")/.."
presets=V1000 out=build/sdk_files build=build
models=()
while [ $# -gt 0 ]; do
  case "$1" in
    -s) presets=$2; shift ;;
    --out) out=$2; shift ;;
    --build) build=$2; shift ;;
    -*) echo "sdk_files_check.sh: unknown option '$1'" >&2; exit 2 ;;
    *) models+=("$1") ;;
  esac
  shift
done
[ ${#models[@]} -gt 0 ] || { echo "usage: $0 [-s PRESETS] [--out DIR] [--build DIR] MODEL.tflite ..." >&2; exit 2; }
sdk=${SDK_GOLDEN_DIR:-../shared/tools/sdk_golden}
client=$build/test/sim_run_model
[ -x "$sdk/sdk_compile.sh" ] || { echo "$sdk/sdk_compile.sh: not found (set SDK_GOLDEN_DIR)" >&2; exit 2; }
[ -x "$client" ] || { echo "$client: not built (cmake --build $build --target vnnx_sim_run_model)" >&2; exit 2; }
mkdir -p "$out"
failed=0
for m in "${models[@]}"; do
  name=$(basename "$m" .tflite)
  for p in ${presets//,/ }; do
    f="$out/$name.$p.vnnx"
    if ! timeout 600 "$sdk/sdk_compile.sh" "$m" -s "$p" -o "$f" --log "$out/$name.$p.log" >/dev/null 2>&1; then
      echo "$name $p: the SDK did not compile it (see $out/$name.$p.log)"
      continue
    fi
    if r=$("$client" "$f" 2>&1); then
      echo "$name $p: runs; $(echo "$r" | grep '^output' | tr '\n' ' ')"
    else
      echo "$name $p: DOES NOT RUN: $(echo "$r" | tail -1)"
      failed=1
    fi
  done
done
exit $failed
