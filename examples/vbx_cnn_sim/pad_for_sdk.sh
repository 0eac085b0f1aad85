#!/usr/bin/env bash
# Copies libvbx_cnn_sim.so to DEST, padded to at least 2114408 bytes when it is smaller.
#
#   pad_for_sdk.sh SRC DEST        e.g. pad_for_sdk.sh build/examples/libvbx_cnn_sim.so "$VBX_SDK/lib/libvbx_cnn_sim.so"
#
# The SDK's Python package (vbx/sim/c.py) refuses to load a libvbx_cnn_sim.so smaller than
# 2114408 bytes, its guard against a Git LFS pointer file left where the library should be. The
# padding is a section the loader never maps (objcopy, from binutils), so the library's code and
# memory use are unchanged. The copy is written beside DEST and renamed over it.
set -euo pipefail
if [ $# -ne 2 ]; then
  echo "usage: $0 SRC DEST" >&2
  exit 2
fi
src=$1 dest=$2
min=2114408
[ -f "$src" ] || { echo "$0: $src: no such file" >&2; exit 1; }
tmp=$(mktemp "$(dirname "$dest")/.libvbx_cnn_sim.XXXXXX")
pad=$(mktemp)
trap 'rm -f "$tmp" "$pad"' EXIT
size=$(stat -c %s "$src")
if [ "$size" -lt "$min" ]; then
  head -c $((min - size + 4096)) /dev/zero > "$pad"
  objcopy --add-section .vnnx_sdk_size_pad="$pad" --set-section-flags .vnnx_sdk_size_pad=noload,readonly "$src" "$tmp"
else
  cp "$src" "$tmp"
fi
chmod 755 "$tmp"
mv -f "$tmp" "$dest"
trap - EXIT
rm -f "$pad"
echo "$dest: $(stat -c %s "$dest") bytes"
