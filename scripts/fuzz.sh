#!/usr/bin/env bash
# Builds the libFuzzer targets (fuzz/, clang with -fsanitize=fuzzer,address,undefined) into
# build-fuzz/ and runs each one in turn for SECONDS (default 60), one after another: the machine
# may be shared, and libFuzzer uses one core per job. Prints the executions and the result of
# each target; exits 1 if any target found a crash, leak, timeout or out-of-memory.
#
#   bash scripts/fuzz.sh [SECONDS] [TARGET...]      e.g. bash scripts/fuzz.sh 300 fuzz_npy
#
# A target's corpus grows in build-fuzz/corpus/TARGET (seeded from fuzz/corpus/TARGET, which stays
# as committed); a crashing input is written to build-fuzz/artifacts/TARGET/ and its reproducer is
# `build-fuzz/fuzz/TARGET FILE`. Logs: build-fuzz/logs/TARGET.log.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
shift || true
targets=("$@")
((${#targets[@]})) || targets=(fuzz_scene fuzz_npy fuzz_csv fuzz_safetensors fuzz_model_config
                        fuzz_safetensors_index fuzz_tokenizer_json fuzz_tokenizer_vocab fuzz_charsmap)

# The project's build dependencies, then what only fuzzing needs: clang and its runtimes
# (libFuzzer, ASan and UBSan live in libclang-rt-14-dev).
bash scripts/setup.sh --deps-only
packages=(clang libclang-rt-14-dev)
missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
    echo "fuzz: installing ${missing[*]}"
    sudo=()
    [ "$(id -u)" -eq 0 ] || sudo=(sudo)
    "${sudo[@]}" apt-get update -q
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

build_dir=build-fuzz
if [ ! -f "$build_dir/CMakeCache.txt" ]; then
    CXX=clang++ cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DAE_FUZZ=ON
fi
cmake --build "$build_dir" --parallel 2 --target "${targets[@]}"

# One thread: the engine's OpenMP loops would otherwise compete with the fuzzer for the cores.
export OMP_NUM_THREADS=1
# detect_leaks: a reader that leaks on a refusal path is a finding too.
export ASAN_OPTIONS=detect_leaks=1:halt_on_error=1
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1

failed=0
summary=()
for target in "${targets[@]}"; do
    corpus=$build_dir/corpus/$target
    artifacts=$build_dir/artifacts/$target
    log=$build_dir/logs/$target.log
    mkdir -p "$corpus" "$artifacts" "$(dirname "$log")"
    echo "fuzz: $target for ${seconds}s (log: $log)"
    dict=()
    [ -f "fuzz/$target.dict" ] && dict=(-dict="fuzz/$target.dict")
    status=0
    # -timeout: one input taking over 10 s is a finding (a hang), not a slow machine.
    "$build_dir/fuzz/$target" "$corpus" "fuzz/corpus/$target" \
        -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=10 \
        -artifact_prefix="$artifacts/" -print_final_stats=1 "${dict[@]}" >"$log" 2>&1 || status=$?
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    if [ "$status" -eq 0 ]; then
        result="no crash"
    else
        failed=1
        result="FAILED (exit $status): $(grep -m1 -E 'ERROR: |runtime error|deadly signal|out-of-memory|timeout' "$log" || echo 'see log')"
        crash=$(ls -t "$artifacts" 2>/dev/null | head -1)
        [ -n "$crash" ] && result+=" -> $artifacts/$crash"
    fi
    summary+=("$(printf '%-11s %12s executions in %ss, %s' "$target" "${runs:-?}" "$seconds" "$result")")
    echo "fuzz: ${summary[-1]}"
done
echo
echo "fuzz summary:"
printf '  %s\n' "${summary[@]}"
exit "$failed"
