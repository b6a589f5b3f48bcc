#!/bin/sh
# tests/portable.sh: tsaot's default target on CPUs other than this one
# (ctest portable.nehalem, tests/portable.cmake).
#
#   portable.sh QEMU TSAOT TSAOT_RUN TSAOT_BENCH PYTHON NPY_CLOSE CASE_DIR [FIRMWARE FW_CASE_DIR]
#
# Compiles CASE_DIR/model.pt for its inputs (in0.npy ...) without --cpu, then:
#   - runs the library under `QEMU -cpu Nehalem` (x86-64-v2: no AVX) and
#     `-cpu Haswell` (x86-64-v3) with tsaot-run and compares the outputs
#     with PyTorch's (CASE_DIR/out*.npy; NPY_CLOSE with 1e-5, 1e-4);
#   - shows which copy of the fused kernels ran: tsaot-bench --profile names
#     it for every native fusion group, which must be x86-64-v2 under
#     Nehalem, v3 under Haswell, on this machine the level its
#     /proc/cpuinfo flags give (v4 with AVX-512 F/BW/CD/DQ/VL, v3 with
#     AVX2/FMA/BMI1/BMI2/F16C/MOVBE, else v2), and v2 again on this machine
#     with TSAOT_CPU_LEVEL=2 (outputs compared too);
#   - runs FIRMWARE (examples/firmware: its model.o is built without --cpu
#     and linked statically) under `QEMU -cpu Nehalem` on FW_CASE_DIR.
# QEMU is found on PATH when not a path; without it the test is skipped
# (exit 77; Debian's qemu-user, which scripts/install-deps.sh installs).
set -eu
[ $# -ge 7 ] || { echo "usage: portable.sh QEMU TSAOT TSAOT_RUN TSAOT_BENCH PYTHON NPY_CLOSE CASE_DIR [FIRMWARE FW_CASE_DIR]" >&2; exit 2; }
qemu=$1 tsaot=$2 run=$3 bench=$4 py=$5 close=$6 case=$7
fw=${8:-} fwcase=${9:-}
if ! command -v "$qemu" >/dev/null 2>&1; then
  echo "portable.nehalem: $qemu not found (Debian's qemu-user; scripts/install-deps.sh installs it): skipped"
  exit 77
fi
# OpenBLAS takes its kernels from OPENBLAS_CORETYPE where that is set (some
# machines set Haswell): AVX2 GEMMs on the emulated Nehalem. Unset, it reads
# CPUID as the runtime does.
unset OPENBLAS_CORETYPE
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

inputs=""
i=0
while [ -f "$case/in$i.npy" ]; do
  inputs="$inputs $case/in$i.npy"
  i=$((i + 1))
done
# shellcheck disable=SC2086
"$tsaot" "$case/model.pt" --example $inputs -o "$tmp/m.so"

fail=0
say() { printf 'portable.nehalem: %s\n' "$*"; }

# outputs DIR WHERE: DIR's outputs against PyTorch's
outputs() {
  for ref in "$case"/out[0-9]*.npy; do
    if ! "$py" "$close" 1e-5 1e-4 "$1/$(basename "$ref")" "$ref"; then
      say "$2: $(basename "$ref") differs from PyTorch's"
      fail=1
    fi
  done
}

# copies WHERE WANT [PREFIX...]: every native fusion group of a profiled run
# (PREFIX: qemu and its CPU, or env) ran its WANT copy
copies() {
  where=$1 want=$2
  shift 2
  # shellcheck disable=SC2086
  if ! "$@" "$bench" "$case/model.pt" $inputs --compiled "$tmp/m.so" --no-interp --profile --iters 1 --warmup 0 \
      >"$tmp/prof" 2>"$tmp/err"; then
    grep -v "TCG doesn't support" "$tmp/err" || true
    say "$where: tsaot-bench failed"
    fail=1
    return
  fi
  n=$(grep -c 'prim::FusionGroup \[.*\] native' "$tmp/prof" || true)
  ok=$(grep -c "prim::FusionGroup \\[.*\\] native $want\$" "$tmp/prof" || true)
  say "$where: $ok of $n native fusion groups ran their $want copy"
  if [ "$n" -eq 0 ] || [ "$ok" -ne "$n" ]; then
    grep 'prim::FusionGroup' "$tmp/prof" || true
    fail=1
  fi
}

for pair in Nehalem:x86-64-v2 Haswell:x86-64-v3; do
  cpu=${pair%%:*} want=${pair#*:}
  # shellcheck disable=SC2086
  if "$qemu" -cpu "$cpu" "$run" "$tmp/m.so" $inputs -o "$tmp/$cpu" 2>"$tmp/err"; then
    say "qemu -cpu $cpu: tsaot-run ran"
    outputs "$tmp/$cpu" "qemu -cpu $cpu"
  else
    grep -v "TCG doesn't support" "$tmp/err" || true
    say "qemu -cpu $cpu: tsaot-run failed"
    fail=1
  fi
  copies "qemu -cpu $cpu" "$want" "$qemu" -cpu "$cpu"
done

# this machine: the level by the kernel's flags (as tests/unit/test_rt_cpu.c)
flags=" $(grep -m1 '^flags' /proc/cpuinfo 2>/dev/null | sed 's/^[^:]*://') "
has() {
  for f in "$@"; do
    case "$flags" in *" $f "*) ;; *) return 1 ;; esac
  done
}
if [ "$flags" = "  " ]; then
  say "this machine: no /proc/cpuinfo flags, its copy not checked"
elif has avx512f avx512bw avx512cd avx512dq avx512vl avx2 fma bmi1 bmi2 f16c movbe; then
  copies "this machine" x86-64-v4
elif has avx avx2 fma bmi1 bmi2 f16c movbe xsave; then
  copies "this machine" x86-64-v3
else
  copies "this machine" x86-64-v2
fi
copies "this machine, TSAOT_CPU_LEVEL=2" x86-64-v2 env TSAOT_CPU_LEVEL=2
# shellcheck disable=SC2086
if TSAOT_CPU_LEVEL=2 "$run" "$tmp/m.so" $inputs -o "$tmp/host2"; then
  outputs "$tmp/host2" "this machine, TSAOT_CPU_LEVEL=2"
else
  say "this machine, TSAOT_CPU_LEVEL=2: tsaot-run failed"
  fail=1
fi

if [ -n "$fw" ]; then
  if "$qemu" -cpu Nehalem "$fw" "$fwcase/in0.npy" "$fwcase/out0.npy" 2 >"$tmp/fw" 2>&1; then
    say "qemu -cpu Nehalem: firmware: $(tail -n 1 "$tmp/fw")"
  else
    grep -v "TCG doesn't support" "$tmp/fw" || true
    say "qemu -cpu Nehalem: firmware failed"
    fail=1
  fi
fi
[ "$fail" -eq 0 ] && say "ok"
exit "$fail"
