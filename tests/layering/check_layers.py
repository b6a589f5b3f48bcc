#!/usr/bin/env python3
"""tests/layering/check_layers.py: the layers of tsaot, checked (README.md
of this folder).

  check_layers.py includes SRC_DIR        every quoted #include of the
                                          layers' sources against LAYERS
  check_layers.py symbols NAME=LIB.a ...  each library's defined and
                                          undefined symbols against SYMBOLS
  check_layers.py tls MAX PROGRAM ...     each program's thread-local
                                          segment at most MAX bytes (readelf)

The compile-time enforcement is CMake's (each library sees only the include
directories of what it links; the layering.upward.* tests try an upward
include); this script names the file, the line and the rule broken.
Exit 0: clean; 1: a violation (each printed); 2: usage or tool error.
"""
import os
import re
import subprocess
import sys

# folder -> (layer, folders its files may include from). A quoted include is
# looked up in the file's own folder, then in these, then anywhere in the
# tree: found only outside them, it is an upward (or sideways) include.
CORE = ["runtime", "runtime/kernels", "ir", "include"]
HOSTED = ["runtime/hosted"] + CORE
LAYERS = {
    "ir": ("ir", ["ir"]),
    "runtime": ("core", CORE),
    "runtime/kernels": ("core", CORE),
    "runtime/hosted": ("rt (hosted)", HOSTED),
    "passes": ("passes", ["passes"] + HOSTED),
    "frontend": ("frontend", ["frontend", "passes"] + HOSTED),
    "loader": ("loader", ["loader", "frontend", "passes"] + HOSTED),
    "codegen": ("codegen", ["codegen", "passes"] + HOSTED),
}

# library -> prefixes of global symbols it may neither define nor use (nm -g).
ABOVE_CORE = ["ts_fe_", "ts_pass_", "ts_cg_", "ts_alias_", "ts_sr_", "ts_rt_model_"]
SYMBOLS = {
    "ir": ["ts_rt_", "ts_iv_", "ts_fe_", "ts_pass_", "ts_cg_", "ts_alias_"],
    "core": ABOVE_CORE + ["ts_rt_aot_", "ts_rt_interp_", "ts_rt_gpu_", "ts_rt_cuda_", "ts_rt_cublas_",
                          "ts_rt_npy_", "ts_rt_io_"],
    "rt": ABOVE_CORE,
    "passes": ["ts_fe_", "ts_cg_", "ts_rt_model_"],
    "fe": ["ts_cg_", "ts_rt_model_"],
}

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def check_includes(root):
    bad = 0
    for folder, (layer, allowed) in sorted(LAYERS.items()):
        d = os.path.join(root, folder)
        if not os.path.isdir(d):
            continue
        for name in sorted(os.listdir(d)):
            if not name.endswith((".c", ".h")):
                continue
            path = os.path.join(d, name)
            with open(path, encoding="utf-8", errors="replace") as f:
                for lineno, line in enumerate(f, 1):
                    m = INCLUDE.match(line)
                    if not m:
                        continue
                    inc = m.group(1)
                    where = next((os.path.join(s, inc) for s in [folder] + allowed
                                  if os.path.isfile(os.path.join(root, s, inc))), None)
                    if where:
                        real = os.path.relpath(os.path.realpath(os.path.join(root, where)), root)
                        up = os.path.dirname(real)
                        if up in allowed or up == folder:
                            continue
                    else:
                        hits = [os.path.relpath(os.path.join(dp, inc), root)
                                for dp, _, fs in os.walk(root)
                                if os.path.isfile(os.path.join(dp, inc)) and "/build" not in "/" + os.path.relpath(dp, root)
                                and not os.path.relpath(dp, root).startswith(".")]
                        if not hits:
                            continue  # generated or a system header: not a layer's
                        real = hits[0]
                    print(f"{folder}/{name}:{lineno}: error: #include \"{inc}\" ({real}) is above the {layer} layer, "
                          f"which may include only {', '.join(d + '/' for d in allowed)}")
                    bad += 1
    return bad


def check_symbols(pairs):
    bad = 0
    for pair in pairs:
        name, _, lib = pair.partition("=")
        if name not in SYMBOLS or not lib:
            print(f"check_layers.py: bad argument '{pair}' (NAME=LIB.a, NAME one of {', '.join(SYMBOLS)})")
            return -1
        try:
            out = subprocess.run(["nm", "-A", "-g", lib], capture_output=True, text=True, check=True).stdout
        except (OSError, subprocess.CalledProcessError) as e:
            print(f"check_layers.py: nm {lib}: {e}")
            return -1
        nsyms = 0
        for line in out.splitlines():
            parts = line.split()
            if len(parts) < 2:
                continue
            sym, kind = parts[-1], parts[-2]
            nsyms += 1
            for p in SYMBOLS[name]:
                if sym.startswith(p):
                    what = "uses" if kind == "U" else "defines"
                    obj = ":".join(parts[0].split(":")[:2])
                    print(f"{obj}: error: the {name} library {what} {sym} ({p}*: a layer above it)")
                    bad += 1
        if nsyms == 0:
            print(f"check_layers.py: {lib}: no symbols")
            return -1
    return bad


def check_tls(limit, progs):
    bad = 0
    for prog in progs:
        try:
            out = subprocess.run(["readelf", "-lW", prog], capture_output=True, text=True, check=True).stdout
        except (OSError, subprocess.CalledProcessError) as e:
            print(f"check_layers.py: readelf {prog}: {e}")
            return -1
        size = 0
        for line in out.splitlines():
            f = line.split()
            if f and f[0] == "TLS":
                size = int(f[5], 16)  # MemSiz
        print(f"{prog}: TLS segment {size} bytes")
        if size > limit:
            print(f"{prog}: error: a TLS segment of {size} bytes, over {limit}: every thread of the program pays it "
                  "(a large _Thread_local array?)")
            bad += 1
    return bad


def main(argv):
    if len(argv) >= 3 and argv[1] == "includes":
        bad = check_includes(argv[2])
    elif len(argv) >= 3 and argv[1] == "symbols":
        bad = check_symbols(argv[2:])
    elif len(argv) >= 4 and argv[1] == "tls" and argv[2].isdigit():
        bad = check_tls(int(argv[2]), argv[3:])
    else:
        print("\n".join(__doc__.strip().splitlines()[2:9]))
        return 2
    if bad < 0:
        return 2
    if bad:
        print(f"{bad} layering violation(s)")
        return 1
    print("layers ok")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
