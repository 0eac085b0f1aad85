#!/usr/bin/env bash
# Runs the command examples of README.md: every ```sh block whose info string is "sh runnable",
# in order, in one temporary folder, with the given vnnx tool first on PATH. A block fails when
# any of its commands fails (bash -e, pipefail); the failing command is shown. Blocks that need
# Graphviz's dot are skipped with a warning where it is not installed.
# Usage: scripts/test_readme.sh [path/to/vnnx] (default build/examples/vnnx)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
tool=$(realpath "${1:-$root/build/examples/vnnx}")
[ -x "$tool" ] || { echo "test_readme.sh: no vnnx tool at $tool" >&2; exit 2; }
work=$(mktemp -d "${TMPDIR:-/tmp}/vnnx-readme.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir "$work/bin" "$work/run"
ln -s "$tool" "$work/bin/vnnx"

# One file per runnable block.
awk -v dir="$work" '
  /^```sh runnable[[:space:]]*$/ { n++; file = sprintf("%s/block%02d.sh", dir, n); inside = 1; next }
  /^```/ && inside { inside = 0; close(file); next }
  inside { print > file }
' "$root/README.md"
blocks=("$work"/block*.sh)
[ -e "${blocks[0]}" ] || { echo "test_readme.sh: README.md has no runnable block" >&2; exit 1; }
have_dot=1
command -v dot >/dev/null || have_dot=0
for b in "${blocks[@]}"; do
  echo "== README block $(basename "$b" .sh)"
  if [ "$have_dot" = 0 ] && grep -q 'dot -T' "$b"; then
    echo "WARNING: skipped, Graphviz 'dot' is not installed (Debian package graphviz)"; continue
  fi
  (cd "$work/run" && PATH="$work/bin:$PATH" bash -euo pipefail -x "$b" >"$work/out.txt" 2>&1) || {
    cat "$work/out.txt"; echo "test_readme.sh: a README example failed (above)" >&2; exit 1; }
  echo "ok ($(grep -c '^+ ' "$work/out.txt") commands)"
done
