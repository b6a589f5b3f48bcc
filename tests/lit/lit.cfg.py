# lit configuration of tsaot's FileCheck tests (see README.md beside it).
# Run through the build: `ctest --test-dir build -R lit`, or directly:
#   /usr/bin/python3 /usr/lib/llvm-16/build/utils/lit/lit.py -sv build/tests/lit
import os

import lit.formats

config.name = "tsaot"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".ir", ".test"]
# Inputs/ folders hold the graphs that tests feed to the tools; they are not
# tests themselves.
config.excludes = ["Inputs", "README.md", "lit.cfg.py", "lit.site.cfg.py.in"]

if not hasattr(config, "tsaot_binary_dir"):
    lit_config.fatal("run lit on the build folder (build/tests/lit), which holds "
                     "the lit.site.cfg.py that CMake writes")

config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.tsaot_binary_dir, "tests", "lit")

# Tool names become full paths. A name is replaced only where it stands as a
# word of its own (not inside a path or a longer name such as "notes.ir").
def tool(name, path):
    if path and not path.endswith("-NOTFOUND"):
        config.substitutions.append(
            (r"(?<![\w./-])" + name + r"(?![\w./-])", path))

config.substitutions.append(("%tsaot-opt", config.tsaot_opt))
config.substitutions.append(("%tsaot-run", config.tsaot_run))
config.substitutions.append(("%tsaot-dump", config.tsaot_dump))
config.substitutions.append(("%tsaot-bench", config.tsaot_bench))
# %npy-close ATOL RTOL GOT WANT ...: arrays compared as the fixture runner does
config.substitutions.append(("%npy-close", config.python + " " + os.path.join(
    config.tsaot_source_dir, "tests", "npy_close.py")))
# after the longer %tsaot-* names, which it prefixes
config.substitutions.append(("%tsaot", config.tsaot))
# %fixtures: the committed PyTorch fixtures (tests/fixtures)
config.substitutions.append(("%fixtures", os.path.join(config.tsaot_source_dir, "tests", "fixtures")))
tool("FileCheck", config.filecheck)
tool("not", config.not_tool)
tool("count", config.count_tool)
tool("split-file", config.split_file)

# --device cuda (codegen/cuda*.test): %fake-libcuda, the stand-in driver
# (tests/cuda/fake_libcuda.c); the feature `ptxas` where CUDA's PTX
# assembler is installed ($TSAOT_PTXAS, else /usr/local/cuda/bin/ptxas), and
# `libdevice` where CUDA's libdevice is.
config.substitutions.append(("%fake-libcuda", os.path.join(
    config.tsaot_binary_dir, "tests", "cuda", "libfake_cuda.so")))
_ptxas = os.environ.get("TSAOT_PTXAS", "/usr/local/cuda/bin/ptxas")
if os.access(_ptxas, os.X_OK):
    config.available_features.add("ptxas")
    config.substitutions.append(("%ptxas", _ptxas))
_libdevice = os.environ.get("TSAOT_LIBDEVICE", "/usr/local/cuda/nvvm/libdevice/libdevice.10.bc")
if os.access(_libdevice, os.R_OK):
    config.available_features.add("libdevice")
    config.environment["TSAOT_LIBDEVICE"] = _libdevice
for var in ("TSAOT_PTXAS", "TSAOT_LIBCUDA"):
    config.environment.pop(var, None)

# Sanitizer settings pass through to the tools under test.
for var in ("ASAN_OPTIONS", "UBSAN_OPTIONS", "LSAN_OPTIONS"):
    if var in os.environ:
        config.environment[var] = os.environ[var]
