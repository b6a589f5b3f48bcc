#!/bin/sh
# tests/compile_run.sh: compiles a model for its example inputs and runs the
# compiled library, with tsaot-run's command line, so that the fixture and
# conformance runners (compare_npy.py, ../shared/tools/conformance) can
# drive compiled code:
#
#   compile_run.sh MODEL.pt in0.npy ... -o OUTDIR [TSAOT-OPTION ...]
#
# TSAOT and TSAOT_RUN name the two tools (the build's, from the test's
# environment). Options after -o OUTDIR go to tsaot (e.g. -O0,
# --no-fallback). TSAOT_RUN_DEVICE, when set, is tsaot-run's --device
# (cuda: the GPU run path, tests/cuda/cuda.cmake). The library is made in a
# scratch folder, removed after.
set -eu
: "${TSAOT:?set TSAOT to the tsaot binary}" "${TSAOT_RUN:?set TSAOT_RUN to the tsaot-run binary}"
model=$1
shift
inputs=""
while [ $# -gt 0 ] && [ "$1" != "-o" ]; do
  inputs="$inputs $1"
  shift
done
[ $# -ge 2 ] || { echo "compile_run.sh: no -o OUTDIR" >&2; exit 2; }
out=$2
shift 2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
examples=""
[ -n "$inputs" ] && examples="--example$inputs"
# shellcheck disable=SC2086
"$TSAOT" "$model" $examples -o "$tmp/m.so" "$@"
# shellcheck disable=SC2086
"$TSAOT_RUN" "$tmp/m.so" $inputs -o "$out" ${TSAOT_RUN_DEVICE:+--device "$TSAOT_RUN_DEVICE"}
