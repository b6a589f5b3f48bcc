#!/bin/sh
# tests/cuda/gpu_run.sh: the GPU run path without a GPU. Each case is
# compiled with --device cuda --cuda-emulate, run by tsaot-run --device cuda
# against the stand-in driver and cuBLAS (TSAOT_LIBCUDA, TSAOT_LIBCUBLAS
# from the environment), its outputs compared with PyTorch's, and what ran
# where (tsaot-run's note) checked against what the case must use:
#
#   gpu_run.sh TSAOT TSAOT_RUN PYTHON TESTS_DIR WORK CASE:KERNELS:GEMMS ...
#
# KERNELS and GEMMS: the least kernel launches and cuBLAS calls the run must
# make (0: none needed). The stand-in runs each kernel's CPU form thread by
# thread and fills new device memory with NaN bytes, so a launch that did
# not happen, or a host copy not brought back, shows in the outputs.
set -eu
tsaot=$1 run=$2 py=$3 tests=$4 work=$5
shift 5
rm -rf "$work"
mkdir -p "$work"
fail=0
for spec in "$@"; do
  case_=${spec%%:*}
  rest=${spec#*:}
  want_k=${rest%%:*}
  want_g=${rest#*:}
  dir=$tests/fixtures/$case_
  ins=$(ls "$dir"/in*.npy 2>/dev/null | sort -V | tr '\n' ' ')
  # shellcheck disable=SC2086
  if ! "$tsaot" "$dir/model.pt" --example $ins --device cuda --cuda-emulate -o "$work/$case_.so" 2>"$work/$case_.cc"; then
    echo "FAIL $case_: tsaot: $(tail -3 "$work/$case_.cc")"
    fail=1
    continue
  fi
  # shellcheck disable=SC2086
  if ! "$run" "$work/$case_.so" $ins -o "$work/$case_.out" --device cuda 2>"$work/$case_.err"; then
    echo "FAIL $case_: tsaot-run: $(tail -3 "$work/$case_.err")"
    fail=1
    continue
  fi
  note=$(grep 'kernel launches' "$work/$case_.err" || true)
  k=$(echo "$note" | sed -n 's/.*: \([0-9]*\) kernel launches.*/\1/p')
  g=$(echo "$note" | sed -n 's/.* \([0-9]*\) cuBLAS calls.*/\1/p')
  if [ -z "$k" ] || [ -z "$g" ] || [ "$k" -lt "$want_k" ] || [ "$g" -lt "$want_g" ]; then
    echo "FAIL $case_: wanted at least $want_k launches and $want_g cuBLAS calls: ${note:-no note}"
    fail=1
    continue
  fi
  atol=$(sed -n 's/^atol: //p' "$dir/case.txt")
  rtol=$(sed -n 's/^rtol: //p' "$dir/case.txt")
  pairs=""
  for w in $(ls "$dir"/out*.npy | sort -V); do
    pairs="$pairs $work/$case_.out/$(basename "$w") $w"
  done
  # shellcheck disable=SC2086
  if ! "$py" "$tests/npy_close.py" "${atol:-1e-5}" "${rtol:-1e-4}" $pairs; then
    echo "FAIL $case_: outputs differ from PyTorch's"
    fail=1
    continue
  fi
  echo "PASS $case_: $(echo "$note" | sed 's/^tsaot-run: note: //')"
done
exit $fail
