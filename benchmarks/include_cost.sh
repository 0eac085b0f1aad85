#!/usr/bin/env bash
# What including vnnx costs a user's build, against a well-known header-only library measured
# in the same run: nlohmann/json (Debian's nlohmann-json3-dev). Each header is compiled alone
# (g++ -std=c++20 -fsyntax-only) several times, interleaved; the best wall time and the peak
# resident memory of the compiler are reported, with the ratio to json.
#
# Usage: benchmarks/include_cost.sh [runs]   (default 5; needs nlohmann-json3-dev)
# Goals (issue 44): vnnx/format.hpp at most 0.5x json and under 150 MB;
#                   vnnx.hpp at most 3x json and under 500 MB.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
runs=${1:-5}
cxx=${CXX:-g++}
if [ ! -f /usr/include/nlohmann/json.hpp ]; then
  echo "include_cost: /usr/include/nlohmann/json.hpp is missing (apt-get install -y nlohmann-json3-dev)" >&2
  exit 2
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

headers=("nlohmann/json.hpp" "vnnx/format.hpp" "vnnx.hpp" "boost/hana.hpp" "fmt/format.h")
declare -A best mem
for h in "${headers[@]}"; do best[$h]=999999; mem[$h]=0; done

for ((r = 0; r < runs; r++)); do
  for h in "${headers[@]}"; do
    printf '#include <%s>\n' "$h" > "$work/unit.cpp"
    /usr/bin/time -f '%e %M' -o "$work/time" "$cxx" -std=c++20 -fsyntax-only -I "$root/include" "$work/unit.cpp"
    read -r secs kb < "$work/time"
    ms=$(awk -v s="$secs" 'BEGIN { printf "%d", s * 1000 }')
    ((ms < best[$h])) && best[$h]=$ms
    ((kb > mem[$h])) && mem[$h]=$kb
  done
done

json=${best["nlohmann/json.hpp"]}
printf '%-20s %10s %10s %10s\n' header "best ms" "x json" "peak MB"
for h in "${headers[@]}"; do
  printf '%-20s %10d %10.2f %10d\n' "$h" "${best[$h]}" "$(awk -v a="${best[$h]}" -v b="$json" 'BEGIN { print a / b }')" \
    $((mem[$h] / 1024))
done

verdict() {  # header, max ratio, max MB
  local ratio mb
  ratio=$(awk -v a="${best[$1]}" -v b="$json" 'BEGIN { print a / b }')
  mb=$((mem[$1] / 1024))
  if awk -v r="$ratio" -v g="$2" 'BEGIN { exit !(r <= g) }' && ((mb < $3)); then
    echo "goal met: $1 at ${ratio}x json (<= $2x), ${mb} MB (< $3 MB)"
  else
    echo "goal not met: $1 at ${ratio}x json (goal <= $2x), ${mb} MB (goal < $3 MB)"
  fi
}
verdict vnnx/format.hpp 0.5 150
verdict vnnx.hpp 3 500
