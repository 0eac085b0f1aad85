#!/usr/bin/env bash
# Packaging test: installs vnnx into a temporary prefix and builds and runs the four consumer
# projects of test/consumers against the installed copy and against the source tree:
#   find_package      installed prefix, then the build tree (vnnx_DIR)
#   add_subdirectory  source tree, by add_subdirectory and by FetchContent
#   meson_subproject  installed (pkg-config, no fallback), then the source tree as a subproject
#   pkg_config        installed vnnx.pc, then the build tree's vnnx-uninstalled.pc
# Options:
#   --build-dir DIR   reuse a top-level vnnx build folder that is already built (its tool is
#                     installed from there) instead of configuring and building one
#   --verify-headers  also build all_verify_interface_header_sets (every public header compiled
#                     alone; VNNX_VERIFY_HEADERS=ON)
#   --keep            leave the temporary folder
# The consumer builds run side by side, JOBS at a time (default nproc); each one's log is shown
# when it fails.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
jobs=${JOBS:-$(nproc)}
verify=OFF keep=0 build_dir=""
while [ $# -gt 0 ]; do
  case "$1" in
    --verify-headers) verify=ON ;;
    --keep) keep=1 ;;
    --build-dir) build_dir=$(cd "$2" && pwd); shift ;;
    *) echo "test_consumers.sh: unknown option '$1'" >&2; exit 2 ;;
  esac
  shift
done

work=$(mktemp -d "${TMPDIR:-/tmp}/vnnx-consumers.XXXXXX")
if [ "$keep" = 0 ]; then trap 'rm -rf "$work"' EXIT; else echo "keeping $work"; fi
prefix="$work/prefix"
stage() { echo; echo "== $*"; }
start=$SECONDS

if [ -z "$build_dir" ]; then
  stage "build vnnx (the tool only: no tests, no examples)"
  build_dir="$work/vnnx-build"
  cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DVNNX_BUILD_TESTS=OFF -DVNNX_BUILD_EXAMPLES=OFF -DVNNX_VERIFY_HEADERS="$verify" >/dev/null
  cmake --build "$build_dir" -j "$jobs" --target vnnx_tool
else
  stage "reuse the build folder $build_dir"
  cmake --build "$build_dir" -j "$jobs" --target vnnx_tool
  if [ "$verify" = ON ]; then
    # Only a target property changes: nothing already built is rebuilt.
    cmake -S . -B "$build_dir" -DVNNX_VERIFY_HEADERS=ON >/dev/null
  fi
fi
if [ "$verify" = ON ]; then
  # Not part of "all": one translation unit per public header.
  stage "every public header compiles on its own"
  cmake --build "$build_dir" -j "$jobs" --target all_verify_interface_header_sets
fi

stage "install into a temporary prefix"
cmake --install "$build_dir" --prefix "$prefix" >/dev/null
"$prefix/bin/vnnx" --version
test -f "$prefix/include/vnnx.hpp"
test -f "$prefix/share/cmake/vnnx/vnnxConfig.cmake"
test -f "$prefix/share/cmake/vnnx/vnnxConfigVersion.cmake"
test -f "$prefix/share/pkgconfig/vnnx.pc"
# Every public header is installed, at the same relative path.
(cd include && find . -name '*.hpp' | sort) >"$work/headers.src"
(cd "$prefix/include" && find . -name '*.hpp' | sort) >"$work/headers.installed"
diff -u "$work/headers.src" "$work/headers.installed"
PKG_CONFIG_PATH="$prefix/share/pkgconfig" pkg-config --cflags --libs vnnx
# The installed vnnx.pc points into the prefix it was installed to (it is relocatable).
found=0
for d in $(PKG_CONFIG_PATH="$prefix/share/pkgconfig" pkg-config --cflags-only-I vnnx); do
  d=${d#-I}
  if [ -f "$d/vnnx.hpp" ] && [ "$(realpath "$d")" = "$(realpath "$prefix/include")" ]; then found=1; fi
done
[ "$found" = 1 ] || { echo "test_consumers.sh: the installed vnnx.pc does not point at $prefix/include" >&2; exit 1; }
PKG_CONFIG_PATH="$build_dir/pkgconfig" pkg-config --cflags vnnx | grep -q -- "-I$root/include"

# The consumer builds: each a function, run in the background with its own log.
cmake_consumer() {  # name, build folder, extra configure arguments...
  local name=$1 dir=$2; shift 2
  cmake -S "test/consumers/$name" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Debug "$@"
  cmake --build "$dir"
  ctest --test-dir "$dir" --output-on-failure
  "$dir/consumer"
}
fp_installed() {
  cmake_consumer find_package "$work/fp-installed" -DCMAKE_PREFIX_PATH="$prefix"
  grep -q "$prefix/include" "$work/fp-installed/build.ninja"
}
fp_buildtree() {
  cmake_consumer find_package "$work/fp-buildtree" -Dvnnx_DIR="$build_dir"
  grep -q "$root/include" "$work/fp-buildtree/build.ninja"
}
subdir() { cmake_consumer add_subdirectory "$work/subdir" -DVNNX_SOURCE_DIR="$root"; }
fetchcontent() { cmake_consumer add_subdirectory "$work/fetchcontent" -DVNNX_SOURCE_DIR="$root" -DCONSUMER_USE_FETCHCONTENT=ON; }
pc_installed() {
  mkdir -p "$work/pc-installed"
  PKG_CONFIG_PATH="$prefix/share/pkgconfig" make -f test/consumers/pkg_config/Makefile BUILD_DIR="$work/pc-installed" run
}
pc_source() {
  mkdir -p "$work/pc-source"
  PKG_CONFIG_PATH="$build_dir/pkgconfig" make -f test/consumers/pkg_config/Makefile BUILD_DIR="$work/pc-source" run
}
meson_installed() {
  PKG_CONFIG_PATH="$prefix/share/pkgconfig" meson setup --wrap-mode=nofallback \
    "$work/meson-installed" "$work/consumers/meson_subproject"
  meson test -C "$work/meson-installed" --print-errorlogs
  "$work/meson-installed/consumer"
}
meson_subproject() {
  meson setup --force-fallback-for=vnnx "$work/meson-subproject" "$work/consumers/meson_subproject"
  meson test -C "$work/meson-subproject" --print-errorlogs
  "$work/meson-subproject/consumer"
}

command -v meson >/dev/null || { echo "test_consumers.sh: meson not found" >&2; exit 1; }
# A copy of the consumers for Meson, which wants subprojects/ inside the project folder.
cp -r test/consumers "$work/consumers"
mkdir -p "$work/consumers/meson_subproject/subprojects"
ln -s "$root" "$work/consumers/meson_subproject/subprojects/vnnx"

declare -A what=(
  [fp_installed]="find_package(vnnx): installed prefix"
  [fp_buildtree]="find_package(vnnx): build tree"
  [subdir]="add_subdirectory: source tree"
  [fetchcontent]="FetchContent: source tree"
  [pc_installed]="pkg-config: installed vnnx.pc"
  [pc_source]="pkg-config: source tree (vnnx-uninstalled.pc)"
  [meson_installed]="Meson: installed vnnx (pkg-config, no fallback)"
  [meson_subproject]="Meson: source tree as a subproject"
)
order=(fp_installed fp_buildtree subdir fetchcontent pc_installed pc_source meson_installed meson_subproject)
stage "consumer projects, $jobs at a time"
for s in "${order[@]}"; do
  while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n || true; done
  # set -e holds inside the background subshell; its EXIT trap records how it ended.
  ( trap 'echo $? >"$work/$s.rc"' EXIT; "$s" ) >"$work/$s.log" 2>&1 &
done
wait || true
failed=0
for s in "${order[@]}"; do
  if [ "$(cat "$work/$s.rc" 2>/dev/null)" = 0 ]; then
    echo "ok    ${what[$s]}"
  else
    echo "FAIL  ${what[$s]}"; sed 's/^/      /' "$work/$s.log"; failed=1
  fi
done
[ "$failed" = 0 ] || exit 1
stage "all consumer projects built and ran ($((SECONDS - start)) s)"
