#!/usr/bin/env bash
# Packaging test: installs vnnx into a temporary prefix and builds and runs the four consumer
# projects of test/consumers against the installed copy and against the source tree:
#   find_package      installed prefix, then the build tree (vnnx_DIR)
#   add_subdirectory  source tree, by add_subdirectory and by FetchContent
#   meson_subproject  installed (pkg-config, no fallback), then the source tree as a subproject
#   pkg_config        installed vnnx.pc, then the build tree's vnnx-uninstalled.pc
# Options: --verify-headers also builds vnnx with VNNX_VERIFY_HEADERS=ON (every public header
# compiled alone); --keep leaves the temporary folder. Environment: JOBS (default nproc).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
jobs=${JOBS:-$(nproc)}
verify=OFF keep=0
for a in "$@"; do
  case "$a" in
    --verify-headers) verify=ON ;;
    --keep) keep=1 ;;
    *) echo "test_consumers.sh: unknown option '$a'" >&2; exit 2 ;;
  esac
done

work=$(mktemp -d "${TMPDIR:-/tmp}/vnnx-consumers.XXXXXX")
if [ "$keep" = 0 ]; then trap 'rm -rf "$work"' EXIT; else echo "keeping $work"; fi
prefix="$work/prefix"
stage() { echo; echo "== $*"; }

stage "build and install vnnx into a temporary prefix (VNNX_VERIFY_HEADERS=$verify)"
cmake -S . -B "$work/vnnx-build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$prefix" \
  -DVNNX_BUILD_TESTS=OFF -DVNNX_BUILD_EXAMPLES=OFF -DVNNX_VERIFY_HEADERS="$verify" >/dev/null
cmake --build "$work/vnnx-build" -j "$jobs"
if [ "$verify" = ON ]; then
  # Not part of "all": one translation unit per public header.
  stage "every public header compiles on its own"
  cmake --build "$work/vnnx-build" -j "$jobs" --target all_verify_interface_header_sets
fi
cmake --install "$work/vnnx-build" >/dev/null
"$prefix/bin/vnnx" --version
test -f "$prefix/include/vnnx.hpp"
test -f "$prefix/share/cmake/vnnx/vnnxConfig.cmake"
test -f "$prefix/share/cmake/vnnx/vnnxConfigVersion.cmake"
test -f "$prefix/share/pkgconfig/vnnx.pc"
# Every public header is installed, at the same relative path.
(cd include && find . -name '*.hpp' | sort) >"$work/headers.src"
(cd "$prefix/include" && find . -name '*.hpp' | sort) >"$work/headers.installed"
diff -u "$work/headers.src" "$work/headers.installed"

cmake_consumer() {  # name, build folder, extra configure arguments...
  local name=$1 dir=$2; shift 2
  cmake -S "test/consumers/$name" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Debug "$@" >/dev/null
  cmake --build "$dir" -j "$jobs"
  ctest --test-dir "$dir" --output-on-failure
  "$dir/consumer"
}

stage "find_package(vnnx): installed prefix"
cmake_consumer find_package "$work/fp-installed" -DCMAKE_PREFIX_PATH="$prefix"
grep -q "$prefix/include" "$work/fp-installed/build.ninja"

stage "find_package(vnnx): build tree"
cmake_consumer find_package "$work/fp-buildtree" -Dvnnx_DIR="$work/vnnx-build"
grep -q "$root/include" "$work/fp-buildtree/build.ninja"

stage "add_subdirectory: source tree"
cmake_consumer add_subdirectory "$work/subdir" -DVNNX_SOURCE_DIR="$root"

stage "FetchContent: source tree"
cmake_consumer add_subdirectory "$work/fetchcontent" -DVNNX_SOURCE_DIR="$root" -DCONSUMER_USE_FETCHCONTENT=ON

stage "pkg-config: installed vnnx.pc"
PKG_CONFIG_PATH="$prefix/share/pkgconfig" pkg-config --cflags --libs vnnx
mkdir -p "$work/pc-installed"
PKG_CONFIG_PATH="$prefix/share/pkgconfig" make -s -f test/consumers/pkg_config/Makefile BUILD_DIR="$work/pc-installed" run

stage "pkg-config: source tree (vnnx-uninstalled.pc)"
PKG_CONFIG_PATH="$work/vnnx-build/pkgconfig" pkg-config --cflags vnnx | grep -q -- "-I$root/include"
mkdir -p "$work/pc-source"
PKG_CONFIG_PATH="$work/vnnx-build/pkgconfig" make -s -f test/consumers/pkg_config/Makefile BUILD_DIR="$work/pc-source" run

if command -v meson >/dev/null; then
  # A copy of the consumers: Meson wants subprojects/ inside the project folder.
  cp -r test/consumers "$work/consumers"
  mkdir -p "$work/consumers/meson_subproject/subprojects"
  ln -s "$root" "$work/consumers/meson_subproject/subprojects/vnnx"

  stage "Meson: installed vnnx (pkg-config, no fallback)"
  PKG_CONFIG_PATH="$prefix/share/pkgconfig" meson setup --wrap-mode=nofallback \
    "$work/meson-installed" "$work/consumers/meson_subproject" >/dev/null
  meson test -C "$work/meson-installed" --print-errorlogs
  "$work/meson-installed/consumer"

  stage "Meson: source tree as a subproject"
  meson setup --force-fallback-for=vnnx "$work/meson-subproject" "$work/consumers/meson_subproject" >/dev/null
  meson test -C "$work/meson-subproject" --print-errorlogs
  "$work/meson-subproject/consumer"
else
  echo "test_consumers.sh: meson not found" >&2
  exit 1
fi

stage "all consumer projects built and ran"
