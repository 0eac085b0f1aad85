#!/usr/bin/env bash
# Installs the Debian packages vnnx needs to build and test, only where they are missing.
set -euo pipefail
# pkg-config, graphviz (dot) and python3-numpy are for the tests: the pkg-config consumer,
# `vnnx info --dot` and the ctypes client of libvbx_cnn_sim.so.
pkgs=(g++ cmake ninja-build meson python3 libboost-dev libfmt-dev libflatbuffers-dev flatbuffers-compiler catch2
      pkg-config graphviz python3-numpy)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing: ${missing[*]}"
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi
