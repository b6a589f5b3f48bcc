#!/usr/bin/env bash
# scripts/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]: a bounded libFuzzer run.
#
# Configures build-fuzz (CC=clang-16, TSAOT_FUZZ=ON), builds the fuzz
# targets, then runs each TARGET (default: zip pickle script ir npy) for
# SECONDS_PER_TARGET seconds (default 60) with its dictionary, starting from
# tests/fuzz/corpus/TARGET. New inputs go to build-fuzz/fuzz-work/TARGET/new;
# then the old corpus and the new inputs are merged (-merge=1) into a fresh
# folder that replaces tests/fuzz/corpus/TARGET: the smallest inputs that
# together keep every coverage feature. A crash, timeout (an input over 2 s), leak or
# out-of-memory input is copied into tests/fuzz/regressions/TARGET/ and the
# script exits 1 once every target has run. TSAOT_FUZZ_SEED=1 first merges
# fresh seeds from the fixtures (tests/fuzz/make_seeds.py).
#
# Run it niced when the machine is shared: nice -n 10 scripts/fuzz.sh 60
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
secs=${1:-60}
if ! [[ "$secs" =~ ^[0-9]+$ ]] || [ "$secs" -lt 1 ]; then
  echo "usage: $0 [SECONDS_PER_TARGET] [TARGET...]  (targets: zip pickle script ir npy)" >&2
  exit 2
fi
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(zip pickle script ir npy)

declare -A max_len=([zip]=65536 [pickle]=16384 [script]=8192 [ir]=16384 [npy]=4096)
for t in "${targets[@]}"; do
  if [ -z "${max_len[$t]:-}" ]; then
    echo "$0: unknown target '$t' (zip pickle script ir npy)" >&2
    exit 2
  fi
done

if ! command -v clang-16 >/dev/null 2>&1; then
  echo "$0: clang-16 not found: install clang-16 and libclang-rt-16-dev (scripts/install-deps.sh)" >&2
  exit 2
fi

build=$root/build-fuzz
CC=clang-16 cmake -S "$root" -B "$build" -G Ninja -DTSAOT_FUZZ=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" --target $(printf 'fuzz_%s ' "${targets[@]}") -- -j"${TSAOT_FUZZ_JOBS:-1}" >/dev/null

failed=0
printf '%-8s %8s %12s %8s %10s %s\n' target seconds executions files bytes result
for t in "${targets[@]}"; do
  bin=$build/fuzz/fuzz_$t
  corpus=$root/tests/fuzz/corpus/$t
  regress=$root/tests/fuzz/regressions/$t
  work=$build/fuzz-work/$t
  rm -rf "$work"
  mkdir -p "$work/new" "$work/artifacts" "$corpus" "$regress"
  opts=(-timeout=2 -rss_limit_mb=2048 -max_len="${max_len[$t]}" -dict="$root/tests/fuzz/dict/$t.dict")
  if [ "${TSAOT_FUZZ_SEED:-0}" = 1 ]; then
    /usr/bin/python3 "$root/tests/fuzz/make_seeds.py" "$work/seeds"
    "$bin" -merge=1 "${opts[@]}" "$corpus" "$work/seeds/$t" >"$work/seed.log" 2>&1 || true
  fi
  start=$(date +%s)
  result=ok
  if ! "$bin" "${opts[@]}" -max_total_time="$secs" -print_final_stats=1 \
       -artifact_prefix="$work/artifacts/" "$work/new" "$corpus" >"$work/fuzz.log" 2>&1; then
    result="FAILED (log: $work/fuzz.log)"
    failed=1
  fi
  elapsed=$(( $(date +%s) - start ))
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/fuzz.log" | tail -1)
  for f in "$work"/artifacts/*; do
    [ -e "$f" ] || continue
    cp "$f" "$regress/"
    result="FAILED: $(basename "$f") -> tests/fuzz/regressions/$t/"
    failed=1
  done
  # Merged into an empty folder, the corpus keeps only inputs that add
  # coverage over the smaller ones; it replaces the old one when that worked.
  mkdir -p "$work/merged"
  if "$bin" -merge=1 "${opts[@]}" "$work/merged" "$corpus" "$work/new" >"$work/merge.log" 2>&1 &&
     [ -n "$(ls -A "$work/merged")" ]; then
    find "$corpus" -type f ! -name '.*' -delete
    cp "$work/merged"/* "$corpus/"
  fi
  files=$(find "$corpus" -type f | wc -l)
  bytes=$(find "$corpus" -type f -printf '%s\n' | awk '{s += $1} END {print s + 0}')
  printf '%-8s %8s %12s %8s %10s %s\n' "$t" "$elapsed" "${execs:-?}" "$files" "$bytes" "$result"
done
exit $failed
