#!/usr/bin/env bash
# Builds the whole test suite with AddressSanitizer and UndefinedBehaviorSanitizer (gcc) into
# build-sanitize/ and runs it through ctest. Any sanitizer report fails its test: errors halt,
# leaks are detected, and undefined behaviour aborts instead of printing and carrying on.
# Prints how long the build and the tests took (docs/sanitizers.md records the figures).
#
#   bash scripts/sanitize.sh [CTEST ARGS...]      e.g. bash scripts/sanitize.sh -R matrix
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh --deps-only

build_dir=build-sanitize
jobs=${JOBS:-2}
start=$(date +%s)
if [ ! -f "$build_dir/CMakeCache.txt" ]; then
    # RelWithDebInfo: optimised as users run it, with line numbers in the reports (tests keep
    # their asserts on regardless, see tests/CMakeLists.txt).
    flags="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
    cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
        -DCMAKE_CXX_FLAGS="$flags" -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined"
fi
cmake --build "$build_dir" --parallel "$jobs"
built=$(date +%s)

# Leaks inside Qt's own libraries (not ours) are listed, with the reason for each, in
# scripts/lsan.supp. The tests inherit these variables through ctest.
export ASAN_OPTIONS=halt_on_error=1:detect_leaks=1:abort_on_error=0:strict_string_checks=1:detect_stack_use_after_return=1
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
export LSAN_OPTIONS=suppressions=$PWD/scripts/lsan.supp:print_suppressions=0
status=0
ctest --test-dir "$build_dir" --output-on-failure --parallel "$jobs" "$@" || status=$?
done_at=$(date +%s)
echo "sanitize: build $((built - start)) s, tests $((done_at - built)) s, total $((done_at - start)) s;" \
    "ctest exit status $status"
exit "$status"
