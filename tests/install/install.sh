#!/bin/bash
# tests/install/install.sh: the install.consumer test (tests/install.cmake).
#
#   install.sh BUILD_DIR SOURCE_DIR WORK_DIR [sanitized|plain]
#
# `cmake --install BUILD_DIR --prefix WORK_DIR/prefix`, then, with only that
# prefix (PATH, PKG_CONFIG_PATH, PYTHONPATH and CMAKE_PREFIX_PATH point at it;
# nothing at the build tree):
#   a. P/bin/tsaot --version
#   b. P/bin/tsaot compiles tests/fixtures/tiny_cnn to a .so that P/bin/tsaot-run
#      runs on in0.npy; tests/npy_close.py compares with PyTorch's out0.npy
#   c. tests/install/consumer configured and built with find_package(tsaot)
#      and tsaot_add_model(... NO_FALLBACK) (cmake -DCMAKE_PREFIX_PATH=P), run
#      on tiny_cnn
#   d. the same main.c with a `tsaot -c --name tiny` object and
#      cc $(pkg-config --cflags --libs tsaot)
#   e. the Python package from P/lib/python3/dist-packages (Debian's python3):
#      tsaot.compile (which finds P/bin/tsaot) and tsaot.load on small_mlp;
#      not for a sanitized build (python3 cannot dlopen a library needing
#      the sanitizer's runtime unless it is preloaded)
# Exits 77 (skipped) when pkg-config or python3-numpy is missing.
set -eu
build=$(cd "$1" && pwd)
src=$(cd "$2" && pwd)
work=$3
kind=${4:-plain}
rm -rf "$work"
mkdir -p "$work"
work=$(cd "$work" && pwd)
P=$work/prefix

command -v pkg-config >/dev/null || { echo "install.consumer: pkg-config not found; skipped"; exit 77; }
/usr/bin/python3 -c 'import numpy' 2>/dev/null || { echo "install.consumer: python3-numpy not found; skipped"; exit 77; }

cmake --install "$build" --prefix "$P" >"$work/install.log"
export PATH="$P/bin:/usr/bin:/bin"
export PKG_CONFIG_PATH="$P/lib/pkgconfig"
unset TSAOT TSAOT_RUNTIME_LIBS CMAKE_PREFIX_PATH PYTHONPATH
tiny=$src/tests/fixtures/tiny_cnn
mlp=$src/tests/fixtures/small_mlp

echo "== a. tsaot --version"
"$P/bin/tsaot" --version | grep -q '^tsaot [0-9]'

echo "== b. tsaot -o tiny.so, tsaot-run"
(cd "$work" && "$P/bin/tsaot" "$tiny/model.pt" -o tiny.so --input 'f32[1,3,8,8]' --no-fallback)
mkdir -p "$work/run"
"$P/bin/tsaot-run" "$work/tiny.so" "$tiny/in0.npy" -o "$work/run"
/usr/bin/python3 "$src/tests/npy_close.py" 1e-5 1e-4 "$work/run/out0.npy" "$tiny/out0.npy"

echo "== c. find_package(tsaot), tsaot_add_model()"
cmake -S "$src/tests/install/consumer" -B "$work/consumer" -G Ninja -DCMAKE_PREFIX_PATH="$P" \
      -DTSAOT_TEST_MODEL="$tiny/model.pt" >"$work/consumer.log"
cmake --build "$work/consumer" >>"$work/consumer.log"
"$work/consumer/consumer" "$tiny/in0.npy" "$tiny/out0.npy"

echo "== d. pkg-config --cflags --libs tsaot"
mkdir -p "$work/pc"
(cd "$work/pc" && "$P/bin/tsaot" "$tiny/model.pt" -c -o tiny.o --name tiny --input 'f32[1,3,8,8]')
cc -std=c11 -O1 -I"$work/pc" "$src/tests/install/consumer/main.c" "$work/pc/tiny.o" -o "$work/pc/consumer" \
   $(pkg-config --cflags --libs tsaot)
"$work/pc/consumer" "$tiny/in0.npy" "$tiny/out0.npy"

if [ "$kind" = sanitized ]; then
  echo "== e. the Python package: not in a sanitizer build"
  echo "install.consumer: ok"
  exit 0
fi
echo "== e. the Python package"
PYTHONPATH="$P/lib/python3/dist-packages" /usr/bin/python3 - "$P" "$mlp" "$work" <<'PY'
import os, sys
import numpy as np
import tsaot
prefix, case, work = sys.argv[1:4]
assert os.path.realpath(tsaot.__file__).startswith(os.path.realpath(prefix)), tsaot.__file__
x = np.load(os.path.join(case, "in0.npy"))
want = np.load(os.path.join(case, "out0.npy"))
so = os.path.join(work, "mlp.so")
tsaot.compile(os.path.join(case, "model.pt"), so, example=[x])
got = tsaot.load(so)(x)
got = got[0] if isinstance(got, (list, tuple)) else got
assert got.shape == want.shape and got.dtype == want.dtype, (got.shape, got.dtype, want.shape, want.dtype)
assert np.allclose(got, want, rtol=1e-4, atol=1e-5), np.abs(got - want).max()
print("python: ok", tsaot.__file__)
PY
echo "install.consumer: ok"
