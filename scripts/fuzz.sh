#!/usr/bin/env bash
# Builds the libFuzzer targets of fuzz/ with clang (ASan+UBSan) and runs each one for a bounded
# time on its seed corpus (issue 8). Any crash, leak, timeout or out-of-memory fails the script;
# the input that caused it is kept under fuzz/regressions/<target>/ (commit it with the fix:
# test/hostile_regressions_test.cpp replays it).
#   FUZZ_SECONDS   seconds per target (default 60)
#   FUZZ_TARGETS   space-separated subset of: tflite_info compile vnnx_sim npy
#   FUZZ_JOBS      build jobs (default: nproc)
#   FUZZ_BUILD_DIR build folder (default: build-fuzz)
#   FUZZ_SEED      libFuzzer's seed (default 1, so a CI run is reproducible: the same seed and corpus
#                  walk the same inputs; a run of N seconds covers every shorter one). 0 = random.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=${FUZZ_SECONDS:-60}
targets=${FUZZ_TARGETS:-"tflite_info compile vnnx_sim npy"}
jobs=${FUZZ_JOBS:-$(nproc)}
build=${FUZZ_BUILD_DIR:-build-fuzz}
seed=${FUZZ_SEED:-1}

# clang with libFuzzer's runtime (Debian: clang + libclang-rt-*-dev).
need=()
command -v clang++ >/dev/null || need+=(clang)
if command -v clang++ >/dev/null && ! echo 'extern "C" int LLVMFuzzerTestOneInput(const char*, unsigned long){return 0;}' |
        clang++ -x c++ -fsanitize=fuzzer - -o /dev/null 2>/dev/null; then
    need+=(libclang-rt-dev)
fi
if [ ${#need[@]} -gt 0 ]; then
    echo "fuzz.sh: installing ${need[*]}"
    SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq clang libclang-rt-dev >/dev/null
fi

CXX=clang++ cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DVNNX_BUILD_FUZZERS=ON \
    -DVNNX_BUILD_TESTS=OFF -DVNNX_BUILD_TOOL=OFF -DVNNX_BUILD_EXAMPLES=OFF -DVNNX_INSTALL=OFF >/dev/null
for t in $targets; do targets_built+=" vnnx_fuzz_$t"; done
cmake --build "$build" -j "$jobs" --target ${targets_built}

failed=()
for t in $targets; do
    exe="$build/fuzz/vnnx_fuzz_$t"
    corpus="fuzz/corpus/$t"
    work=$(mktemp -d)            # new inputs found this run stay out of the repository
    crashes="fuzz/regressions/$t"
    mkdir -p "$crashes"
    log="$build/fuzz_$t.log"
    echo "fuzz.sh: $t for ${seconds}s (log: $log)"
    status=0
    # -max_total_time bounds the run; the outer timeout covers a hang of libFuzzer itself.
    # -timeout: one input may take at most 25 s; -rss_limit_mb: the process's memory.
    ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=0 UBSAN_OPTIONS=print_stacktrace=1 \
    timeout -k 10 $((seconds + 120)) "$exe" "$work" "$corpus" -max_total_time="$seconds" \
        -seed="$seed" -timeout=25 -rss_limit_mb=2560 -malloc_limit_mb=1024 -print_final_stats=1 \
        -artifact_prefix="$crashes/" >"$log" 2>&1 || status=$?
    rm -rf "$work"
    grep -E '^(stat::number_of_executed_units|stat::new_units_added|Done )' "$log" | sed "s/^/fuzz.sh: $t: /" || true
    if [ "$status" -ne 0 ]; then
        echo "fuzz.sh: $t FAILED (status $status); reproducers kept under $crashes/:" >&2
        ls -1 "$crashes" >&2 || true
        tail -n 40 "$log" >&2
        failed+=("$t")
    fi
done

if [ ${#failed[@]} -gt 0 ]; then
    echo "fuzz.sh: findings in: ${failed[*]}" >&2
    exit 1
fi
echo "fuzz.sh: every target ran ${seconds}s without a finding"
