#!/usr/bin/env bash
# Before/after check of a change to the compiler or the simulator: two builds of the vnnx tool
# compile every model of a folder, and for each model this prints whether the .vnnx files are
# byte-identical and whether the simulator's outputs (on the embedded test input) are identical.
# A restructuring must show "same same" on every line; a change of records shows "DIFF same"
# when the simulator's answers stay unchanged.
#
#   scripts/compare_binaries.sh OLD_VNNX NEW_VNNX [MODELS_DIR] [-s V1000]
#
# Exits 1 when some simulator output differs (or a model compiles with one tool only).
set -euo pipefail
[ $# -ge 2 ] || { echo "usage: $0 OLD_VNNX NEW_VNNX [MODELS_DIR] [-s SIZE]" >&2; exit 2; }
old=$1 new=$2
shift 2
dir=../shared/models size=V1000
while [ $# -gt 0 ]; do
  case "$1" in
    -s) size=$2; shift ;;
    -*) echo "compare_binaries.sh: unknown option '$1'" >&2; exit 2 ;;
    *) dir=$1 ;;
  esac
  shift
done
for tool in "$old" "$new"; do [ -x "$tool" ] || { echo "$tool: not an executable" >&2; exit 2; }; done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
status=0
printf '%-55s %-6s %-6s\n' model vnnx outputs
for model in "$dir"/*.tflite; do
  name=$(basename "$model" .tflite)
  for side in old new; do
    tool=$old; [ $side = new ] && tool=$new
    mkdir -p "$work/$side/$name"
    if "$tool" compile -t "$model" -s "$size" -o "$work/$side/$name.vnnx" >/dev/null 2>"$work/$side/$name.err" &&
       "$tool" infer "$work/$side/$name.vnnx" -o "$work/$side/$name" >/dev/null 2>>"$work/$side/$name.err"; then
      echo ok >"$work/$side/$name.status"
    else
      echo failed >"$work/$side/$name.status"
    fi
  done
  if [ "$(cat "$work/old/$name.status")" != "$(cat "$work/new/$name.status")" ]; then
    printf '%-55s compiles with one tool only\n' "$name"; status=1; continue
  fi
  if [ "$(cat "$work/old/$name.status")" = failed ]; then
    printf '%-55s %-6s %-6s\n' "$name" - -; continue
  fi
  bytes=same; cmp -s "$work/old/$name.vnnx" "$work/new/$name.vnnx" || bytes=DIFF
  outs=same; diff -rq "$work/old/$name" "$work/new/$name" >/dev/null || { outs=DIFF; status=1; }
  printf '%-55s %-6s %-6s\n' "$name" "$bytes" "$outs"
done
exit $status
