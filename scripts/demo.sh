#!/usr/bin/env bash
# The main job, as far as it goes today: installs the Debian packages, builds
# tsaot, and runs it on the model shipped in the repository.
#
# tsaot's purpose is `tsaot model.pt -o model.so`. The frontend (model.pt to
# IR), the clean-up passes and the runtime with its reference interpreter
# exist; freezing and code generation do not yet. So this demo loads
# tests/fixtures/tiny_cnn/model.pt (written by torch.jit.save), prints its
# module tree and the inlined graph of forward compiled from the archive's
# TorchScript source, runs it in the interpreter on the shipped input, and
# compares the output with PyTorch's.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

bash scripts/install-deps.sh

gen=()
if [ ! -f build/CMakeCache.txt ]; then
  gen=(-G Ninja)
fi
cmake -S . -B build "${gen[@]}"
cmake --build build

model=tests/fixtures/tiny_cnn/model.pt
echo
echo "\$ build/tsaot-dump $model --code"
build/tsaot-dump "$model" --code
echo
echo "\$ build/tsaot-dump $model --inlined"
build/tsaot-dump "$model" --inlined

out=build/demo-out
echo
echo "\$ build/tsaot-run $model tests/fixtures/tiny_cnn/in0.npy -o $out"
build/tsaot-run "$model" tests/fixtures/tiny_cnn/in0.npy -o "$out"
ls "$out"
echo
echo "\$ /usr/bin/python3 tests/compare_npy.py build/tsaot-run tests/fixtures/tiny_cnn"
/usr/bin/python3 tests/compare_npy.py build/tsaot-run tests/fixtures/tiny_cnn

echo
echo "\$ build/tsaot-opt $model --example tests/fixtures/tiny_cnn/in0.npy -p default"
build/tsaot-opt "$model" --example tests/fixtures/tiny_cnn/in0.npy -p default
echo
echo "\$ /usr/bin/python3 tests/compare_npy.py --arg --optimize build/tsaot-run tests/fixtures/tiny_cnn"
/usr/bin/python3 tests/compare_npy.py --arg --optimize build/tsaot-run tests/fixtures/tiny_cnn

# The main job: compile the model for its input, run the library, compare.
echo
echo "\$ build/tsaot $model --example tests/fixtures/tiny_cnn/in0.npy -o build/tiny_cnn.so -v"
build/tsaot "$model" --example tests/fixtures/tiny_cnn/in0.npy -o build/tiny_cnn.so -v
echo
echo "\$ build/tsaot-run build/tiny_cnn.so tests/fixtures/tiny_cnn/in0.npy -o $out-compiled"
build/tsaot-run build/tiny_cnn.so tests/fixtures/tiny_cnn/in0.npy -o "$out-compiled"
echo
echo "\$ /usr/bin/python3 tests/npy_close.py 1e-5 1e-4 $out-compiled/out0.npy tests/fixtures/tiny_cnn/out0.npy && echo 'compiled: matches PyTorch'"
/usr/bin/python3 tests/npy_close.py 1e-5 1e-4 "$out-compiled/out0.npy" tests/fixtures/tiny_cnn/out0.npy && echo 'compiled: matches PyTorch'
