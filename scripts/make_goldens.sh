#!/usr/bin/env bash
# Regenerates the single-op golden vectors of test/data/ref: builds the model generator
# (gen_models.cpp.txt), writes every model, runs TensorFlow Lite on each (inputs drawn from
# seed 0, outputs = the bit-exact judge) and Arm NN's CpuRef on the same inputs (the
# cross-check; armnn_output_<k>.npy, or armnn.txt saying why there are none).
#
#   scripts/make_goldens.sh [--armnn-only] [FOLDER ...]
#
# TFLITE_REF: tflite_ref.js (Node.js, needs its setup script run once);
# ARMNN_REF:  armnn_ref.py (Debian's python3-pyarmnn, run with /usr/bin/python3).
# Both default to ../shared/tools beside the repository. CI needs neither: all is stored.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
root=$repo/test/data/ref
tools=${TOOLS_DIR:-$repo/../shared/tools}
TFLITE_REF=${TFLITE_REF:-$tools/tflite_ref.js}
ARMNN_REF=${ARMNN_REF:-$tools/armnn_ref.py}
CXX=${CXX:-g++}

armnn_only=0
if [[ ${1:-} == --armnn-only ]]; then armnn_only=1; shift; fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

if [[ $armnn_only == 0 ]]; then
    cp "$root/gen_models.cpp.txt" "$work/gen_models.cpp"
    "$CXX" -std=c++20 -O1 -I"$repo/include" "$work/gen_models.cpp" -o "$work/gen_models"
    "$work/gen_models" "$root"
fi

folders=("$@")
if [[ ${#folders[@]} == 0 ]]; then
    for d in "$root"/*/; do folders+=("$(basename "$d")"); done
fi

status=0
for name in "${folders[@]}"; do
    d=$root/$name
    [[ -f $d/model.tflite ]] || { echo "$name: no model.tflite" >&2; status=1; continue; }
    if [[ $armnn_only == 0 ]]; then
        # fixed_inputs.txt: the generator wrote the inputs (every code of a table); else seed 0.
        feed=(--seed 0)
        if [[ -f $d/fixed_inputs.txt ]]; then
            feed=()
            for f in "$d"/input_*.npy; do feed+=(-i "$f"); done
        fi
        if ! node "$TFLITE_REF" "$d/model.tflite" -o "$d" "${feed[@]}" > "$work/tflite.log" 2>&1; then
            echo "$name: TFLite failed: $(tail -n 2 "$work/tflite.log")" >&2
            status=1
            continue
        fi
    fi
    # Arm NN on the very inputs TFLite used; its own folder, so the inputs stay untouched.
    rm -f "$d"/armnn_output_*.npy "$d/armnn.txt"
    inputs=()
    for f in "$d"/input_*.npy; do inputs+=(-i "$f"); done
    out=$work/armnn_$name
    rm -rf "$out"
    if /usr/bin/python3 "$ARMNN_REF" "$d/model.tflite" "${inputs[@]}" -o "$out" > "$work/armnn.log" 2>&1; then
        for f in "$out"/output_*.npy; do
            case $f in *.dequant.npy) continue ;; esac
            cp "$f" "$d/armnn_$(basename "$f")"
        done
    else
        rc=$?
        why=$(grep -v '^\s*$' "$work/armnn.log" | tail -n 1 | cut -c1-300)
        printf 'no Arm NN output (exit %d): %s\n' "$rc" "$why" > "$d/armnn.txt"
        echo "$name: Arm NN: no output (exit $rc)"
    fi
done
exit $status
