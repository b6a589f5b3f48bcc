#!/usr/bin/env bash
# Runs every test of tsaot, twice, and the thread stress test a third time:
#   build/       RelWithDebInfo, -Werror
#   build-asan/  Debug with AddressSanitizer (leak checks on) and
#                UndefinedBehaviorSanitizer (stop at the first report)
#   build-tsan/  ThreadSanitizer, only what tests/stress needs, ctest -R stress
# Installs missing Debian packages first (scripts/install-deps.sh).
# Exit status 0 only when every build succeeds and all their tests pass.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

bash scripts/install-deps.sh

# configure DIR ARGS...: a new build folder uses Ninja; an existing one keeps
# the generator it was made with.
configure() {
  local dir=$1
  shift
  local gen=()
  if [ ! -f "$dir/CMakeCache.txt" ]; then
    gen=(-G Ninja)
  fi
  cmake -S . -B "$dir" "${gen[@]}" "$@"
}

summaries=()
status=0
total_passed=0
total_failed=0
total_skipped=0

# run_tests NAME DIR [CTEST-ARGS...]: ctest in DIR; keeps its summary line
# for the end.
run_tests() {
  local name=$1 dir=$2 log rc
  shift 2
  log=$(mktemp)
  set +e
  (cd "$dir" && ctest --output-on-failure -j2 "$@") 2>&1 | tee "$log"
  rc=${PIPESTATUS[0]}
  set -e
  local line
  line=$(grep -E 'tests passed|No tests were found' "$log" | tail -n 1)
  summaries+=("$name: $line")
  # "100% tests passed, 0 tests failed out of 5"
  if [[ $line =~ ([0-9]+)\ tests\ failed\ out\ of\ ([0-9]+) ]]; then
    local skipped
    skipped=$(grep -c '(Skipped)$' "$log" || true)
    total_failed=$((total_failed + BASH_REMATCH[1]))
    total_skipped=$((total_skipped + skipped))
    total_passed=$((total_passed + BASH_REMATCH[2] - BASH_REMATCH[1] - skipped))
  else
    total_failed=$((total_failed + 1))
  fi
  summaries+=("$(awk -v n="$name" '/^The following tests/ {p = 1; print n ": " $0; next}
                                     p && /^\t/ {print n ": " $0; next} {p = 0}' "$log")")
  rm -f "$log"
  if [ "$rc" -ne 0 ]; then
    status=1
  fi
}

echo "=== build/ (RelWithDebInfo, -Werror)"
configure build -DTSAOT_WERROR=ON -DTSAOT_SANITIZE=OFF
cmake --build build
run_tests build build

echo "=== build-asan/ (Debug, ASan+UBSan, -Werror)"
configure build-asan -DCMAKE_BUILD_TYPE=Debug -DTSAOT_WERROR=ON -DTSAOT_SANITIZE=ON
cmake --build build-asan
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:strict_string_checks=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
run_tests build-asan build-asan

# OpenBLAS is not instrumented; the stress test's GEMMs are small enough that
# OpenBLAS runs them on the calling thread, and TSan reports nothing inside
# it, so no suppressions file is needed.
echo "=== build-tsan/ (ThreadSanitizer, tests/stress)"
configure build-tsan -DTSAOT_WERROR=ON -DTSAOT_SANITIZE=OFF -DTSAOT_TSAN=ON
cmake --build build-tsan --target stress_threads
TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 run_tests build-tsan build-tsan -R '^stress[.]'

echo "=== summary"
for s in "${summaries[@]}"; do
  if [ -n "$s" ]; then
    printf '%s\n' "$s"
  fi
done
if [ "$status" -ne 0 ]; then
  echo "test.sh: FAILED"
fi
echo "tests: $total_passed passed, $total_failed failed, $total_skipped skipped"
exit "$status"
