#!/usr/bin/python3
"""Runs fixture models through tsaot-run and compares with PyTorch's outputs.

  compare_npy.py [--arg ARG]... TSAOT_RUN CASE_DIR...

Each CASE_DIR holds model.pt, in0.npy.., out0.npy.. (PyTorch's outputs) and
case.txt (atol:, rtol:). The command `TSAOT_RUN model.pt in0.npy.. -o TMP`
must write TMP/out0.npy.. with the same count, dtypes and shapes, and values
within atol + rtol * |expected| (exact for integer and bool arrays; NaN
matches NaN; complex values part by part). Prints one line per case and 'N passed, N failed'; exits 1 when
any case failed. Each --arg ARG is passed on to TSAOT_RUN (--arg --optimize
runs the optimized graph).
"""
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np


def read_tolerances(d):
    tol = {"atol": 1e-5, "rtol": 1e-4}
    with open(os.path.join(d, "case.txt")) as f:
        for line in f:
            k, _, v = line.partition(":")
            if k.strip() in tol:
                tol[k.strip()] = float(v)
    return tol["atol"], tol["rtol"]


def numbered(d, stem):
    out, i = [], 0
    while os.path.exists(os.path.join(d, "%s%d.npy" % (stem, i))):
        out.append(os.path.join(d, "%s%d.npy" % (stem, i)))
        i += 1
    return out


def compare(got, want, atol, rtol):
    """None if got matches want, else what differs."""
    if got.dtype != want.dtype:
        return "dtype %s, expected %s" % (got.dtype, want.dtype)
    if got.shape != want.shape:
        return "shape %s, expected %s" % (got.shape, want.shape)
    if want.dtype.kind in "biu":
        bad = np.count_nonzero(got != want)
        return None if bad == 0 else "%d of %d elements differ" % (bad, want.size)
    # flat, so that 0-d arrays stay arrays through abs and masks
    if want.dtype.kind == "c":
        # complex: each part by the rule, an element off if either part is
        g, w = got.astype(np.complex128).reshape(-1), want.astype(np.complex128).reshape(-1)
        parts = [(g.real, w.real), (g.imag, w.imag)]
    else:
        g, w = got.astype(np.float64).reshape(-1), want.astype(np.float64).reshape(-1)
        parts = [(g, w)]
    ok = np.ones(want.size, dtype=bool)
    err = np.zeros(want.size)
    for gp, wp in parts:
        ok &= np.isclose(gp, wp, atol=atol, rtol=rtol, equal_nan=True)
        e = np.abs(gp - wp)
        e[np.isnan(e)] = np.inf
        e[np.isnan(gp) & np.isnan(wp)] = 0
        err = np.maximum(err, e)
    if ok.all():
        return None
    err[ok] = 0
    i = int(np.argmax(err))
    return "%d of %d elements off; worst at flat index %d: got %r, expected %r" % (
        ok.size - int(ok.sum()), ok.size, i, g.flat[i], w.flat[i])


def run_case(tool, d, extra=()):
    """None if the case passed, else why not."""
    atol, rtol = read_tolerances(d)
    ins, wants = numbered(d, "in"), numbered(d, "out")
    work = tempfile.mkdtemp(prefix="tsaot-fixture-")
    try:
        cmd = [tool, os.path.join(d, "model.pt")] + ins + ["-o", work] + list(extra)
        try:
            p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=300)
        except subprocess.TimeoutExpired:
            return "timed out"
        if p.returncode != 0:
            return "exit status %d: %s" % (p.returncode, p.stderr.decode(errors="replace").strip()[-2000:])
        gots = numbered(work, "out")
        if len(gots) != len(wants):
            return "wrote %d outputs, expected %d" % (len(gots), len(wants))
        for k, (g, w) in enumerate(zip(gots, wants)):
            try:
                got = np.load(g)
            except Exception as e:  # a malformed .npy is a failure, not a crash
                return "out%d.npy: %s" % (k, e)
            why = compare(got, np.load(w), atol, rtol)
            if why:
                return "out%d.npy: %s" % (k, why)
        return None
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main():
    argv, extra = sys.argv[1:], []
    while len(argv) >= 2 and argv[0] == "--arg":
        extra.append(argv[1])
        argv = argv[2:]
    if len(argv) < 2:
        sys.stderr.write(__doc__)
        return 2
    tool, cases = argv[0], argv[1:]
    passed = failed = 0
    for d in cases:
        why = run_case(tool, d, extra)
        name = os.path.basename(os.path.normpath(d))
        if why is None:
            passed += 1
            print("PASS %s" % name)
        else:
            failed += 1
            print("FAIL %s: %s" % (name, why))
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
