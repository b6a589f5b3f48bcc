#!/usr/bin/env bash
# Printer/parser round trip: for each graph file (text exactly as PyTorch
# printed it), run `TSAOT_OPT FILE -p none` and compare its output with the
# file byte for byte.
#
# usage: tests/roundtrip.sh TSAOT_OPT FILE...
#
# Prints each file that differs or that tsaot-opt rejects (with the first
# lines of the diff or of its error output; ROUNDTRIP_DIFF_LINES, default 20,
# sets how many), then one summary line. Exit status: 0 all identical, 1 any
# differ or fail, 2 usage error, 77 no files given (ctest reads that as
# "skipped" where the test says so).
set -u

if [ $# -lt 1 ]; then
  echo "usage: $0 TSAOT_OPT FILE..." >&2
  exit 2
fi
opt=$1
shift
if [ ! -x "$opt" ]; then
  echo "roundtrip: $opt is not an executable (build tsaot-opt first)" >&2
  exit 2
fi
if [ $# -eq 0 ]; then
  echo "roundtrip: no graph files given"
  exit 77
fi

lines=${ROUNDTRIP_DIFF_LINES:-20}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

total=0 same=0 differ=0 failed=0
for f in "$@"; do
  total=$((total + 1))
  if [ ! -f "$f" ]; then
    echo "MISSING  $f"
    failed=$((failed + 1))
    continue
  fi
  "$opt" "$f" -p none >"$tmp/out" 2>"$tmp/err"
  rc=$?
  if [ $rc -ne 0 ]; then
    echo "FAILED   $f (tsaot-opt exit status $rc)"
    head -n "$lines" "$tmp/err" | sed 's/^/    /'
    failed=$((failed + 1))
  elif cmp -s "$f" "$tmp/out"; then
    same=$((same + 1))
  else
    echo "DIFFERS  $f"
    diff -u --label "$f (expected)" --label "tsaot-opt output" "$f" "$tmp/out" \
      | head -n "$lines" | sed 's/^/    /'
    differ=$((differ + 1))
  fi
done

echo "roundtrip: $same of $total identical, $differ differ, $failed failed"
if [ $((differ + failed)) -ne 0 ]; then
  exit 1
fi
exit 0
