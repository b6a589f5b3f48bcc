#!/usr/bin/python3
"""Compile time and library size per case: a Markdown table.

  scripts/compile-stats.py [--tsaot build/tsaot] [--runs N] CASE_DIR...

Each CASE_DIR holds model.pt and in0.npy..; it is compiled for its inputs
(`tsaot MODEL --example in*.npy -o TMP/m.so -v`) N times (default 3) and the
best wall time is reported with the .so's size and tsaot's own summary
(native kernels, runtime calls, planned arena)."""
import argparse
import glob
import os
import re
import subprocess
import tempfile
import time


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tsaot", default="build/tsaot")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("cases", nargs="+")
    a = ap.parse_args()
    print("| case | compile (s) | .so (MiB) | weights (MiB) | kernels | runtime calls | arena planned (KiB) |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for d in a.cases:
        ins = sorted(glob.glob(os.path.join(d, "in*.npy")), key=lambda p: int(re.sub(r"\D", "", os.path.basename(p)) or 0))
        with tempfile.TemporaryDirectory() as t:
            so = os.path.join(t, "m.so")
            best, err = None, ""
            for _ in range(a.runs):
                t0 = time.perf_counter()
                p = subprocess.run([a.tsaot, os.path.join(d, "model.pt")] + (["--example"] + ins if ins else [])
                                   + ["-o", so, "-v"], capture_output=True, text=True)
                dt = time.perf_counter() - t0
                err = p.stderr
                if p.returncode:
                    break
                best = dt if best is None else min(best, dt)
            name = os.path.basename(os.path.normpath(d))
            if best is None:
                print("| %s | failed: %s | | | | | |" % (name, err.strip().splitlines()[-1] if err.strip() else "?"))
                continue
            k = re.search(r"(\d+) native kernels, (\d+) groups interpreted, (\d+) runtime calls", err)
            w = re.search(r"weights ([\d.]+) MiB; arena ([\d.]+) KiB planned", err)
            print("| %s | %.2f | %.2f | %s | %s | %s | %s |" % (
                name, best, os.path.getsize(so) / 1048576.0, w.group(1) if w else "?",
                k.group(1) if k else "?", k.group(3) if k else "?", w.group(2) if w else "?"))


if __name__ == "__main__":
    main()
