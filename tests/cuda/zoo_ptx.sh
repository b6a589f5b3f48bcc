#!/bin/sh
# tests/cuda/zoo_ptx.sh TSAOT PTXAS ZOO OUTDIR MODEL...: each zoo model
# compiled with --device cuda for sm_90 and sm_80 (-c: no link needed), its
# PTX (--emit-ptx) assembled by ptxas for the same architecture. Without
# ptxas the PTX is still made and checked for its header, and the test is
# skipped (77) with a message at the end.
set -u
tsaot=$1 ptxas=$2 zoo=$3 out=$4
shift 4
mkdir -p "$out" || exit 1
have_ptxas=1
[ -x "$ptxas" ] || have_ptxas=0
fail=0
for m in "$@"; do
  for arch in sm_90 sm_80; do
    ptx="$out/$m.$arch.ptx"
    rm -f "$ptx"
    if ! "$tsaot" "$zoo/$m/model.pt" "$zoo/$m"/in*.npy --device cuda --gpu-arch "$arch" --emit-ptx "$ptx" \
         -c -o "$out/$m.$arch.o"; then
      echo "FAIL $m $arch: tsaot --device cuda failed"
      fail=1
      continue
    fi
    if ! grep -q "^\.target $arch\$" "$ptx"; then
      echo "FAIL $m $arch: the PTX has no '.target $arch'"
      fail=1
      continue
    fi
    n=$(grep -c '^\.visible \.entry ' "$ptx")
    if [ $have_ptxas = 1 ]; then
      if "$ptxas" -arch="$arch" "$ptx" -o "$out/$m.$arch.cubin"; then
        echo "ok   $m $arch: $n kernels, ptxas accepts the PTX"
      else
        echo "FAIL $m $arch: ptxas rejects $ptx"
        fail=1
      fi
    else
      echo "ok   $m $arch: $n kernels (not assembled)"
    fi
  done
done
[ $fail = 0 ] || exit 1
if [ $have_ptxas = 0 ]; then
  echo "cuda.zoo_ptx: $ptxas not found (no CUDA toolkit): the PTX was not assembled; skipped"
  exit 77
fi
exit 0
