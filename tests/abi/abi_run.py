#!/usr/bin/python3
"""Models with Optional, List, Tuple and str arguments through tsaot-run and
compiled libraries, against PyTorch's outputs (include/tsaot.h's slots).

  abi_run.py TSAOT TSAOT_RUN CASE_DIR...

Each CASE_DIR (tests/fixtures/abi/<case>, made by make_abi_fixtures.py) holds
model.pt, case.txt (forms, alike, generic, atol, rtol) and a folder per form:
args.txt (tsaot-run's words) and PyTorch's out0.npy ... For every case:

  - each form through tsaot-run on model.pt, plain and with --optimize;
  - a library compiled for each form's example (tsaot --example ARGS), run
    on every form: the outputs match, and tsaot-run notes "ran in the
    interpreter" exactly for the forms that are not alike the example's;
  - a library compiled --no-fallback for the first form: the forms not alike
    it fail with exit status 1 and an "error: input N" line;
  - with "generic: yes", a library compiled without examples runs every form
    in compiled code (no note).

Prints one line per check that failed and a count; exit status 1 when any
failed.
"""
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np


def read_case(d):
    info = {"atol": "1e-5", "rtol": "1e-4", "alike": "", "generic": "yes", "forms": ""}
    with open(os.path.join(d, "case.txt"), encoding="utf-8") as f:
        for line in f:
            k, _, v = line.partition(":")
            info[k.strip()] = v.strip()
    forms = info["forms"].split()
    group = {fm: fm for fm in forms}
    for g in info["alike"].split(";"):
        g = g.split()
        for fm in g:
            group[fm] = g[0]
    return forms, group, info["generic"] == "yes", float(info["atol"]), float(info["rtol"])


def words(d, form):
    with open(os.path.join(d, form, "args.txt"), encoding="utf-8") as f:
        ws = f.read().split()
    return [os.path.join(d, form, w) if w.endswith(".npy") else w for w in ws]


def numbered(d, stem):
    out, i = [], 0
    while os.path.exists(os.path.join(d, "%s%d.npy" % (stem, i))):
        out.append(os.path.join(d, "%s%d.npy" % (stem, i)))
        i += 1
    return out


def compare(got_dir, want_dir, atol, rtol):
    """None if the outputs match, else what differs."""
    gots, wants = numbered(got_dir, "out"), numbered(want_dir, "out")
    if len(gots) != len(wants):
        return "wrote %d outputs, expected %d" % (len(gots), len(wants))
    for k, (g, w) in enumerate(zip(gots, wants)):
        got, want = np.load(g), np.load(w)
        if got.dtype != want.dtype or got.shape != want.shape:
            return "out%d.npy: %s%s, expected %s%s" % (k, got.dtype, got.shape, want.dtype, want.shape)
        if want.dtype.kind in "biu":
            ok = np.array_equal(got, want)
        else:
            ok = np.allclose(got.astype(np.float64), want.astype(np.float64), atol=atol, rtol=rtol, equal_nan=True)
        if not ok:
            return "out%d.npy: values differ (max |diff| %g)" % (
                k, float(np.max(np.abs(got.astype(np.float64) - want.astype(np.float64)))))
    return None


def run(cmd):
    try:
        return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=300)
    except subprocess.TimeoutExpired:
        return None


def main():
    if len(sys.argv) < 4:
        sys.stderr.write(__doc__)
        return 2
    tsaot, tsaot_run, cases = sys.argv[1], sys.argv[2], sys.argv[3:]
    failed, checks = [], 0
    work = tempfile.mkdtemp(prefix="tsaot-abi-")

    def check(ok, what):
        nonlocal checks
        checks += 1
        if not ok:
            failed.append(what)
            print("FAIL " + what)
        return ok

    def out_of(p):
        return p.stderr.decode("utf-8", "replace").strip()[-600:] if p else "timed out"

    try:
        for d in cases:
            name = os.path.basename(os.path.normpath(d))
            forms, group, generic, atol, rtol = read_case(d)
            model = os.path.join(d, "model.pt")
            for fm in forms:
                for extra in ([], ["--optimize"]):
                    o = os.path.join(work, "pt")
                    shutil.rmtree(o, ignore_errors=True)
                    p = run([tsaot_run] + extra + [model] + words(d, fm) + ["-o", o])
                    what = "%s %s: tsaot-run %s" % (name, fm, " ".join(extra + ["model.pt"]))
                    if check(p and p.returncode == 0, "%s: exit status %s: %s" % (what, p and p.returncode, out_of(p))):
                        why = compare(o, os.path.join(d, fm), atol, rtol)
                        check(why is None, "%s: %s" % (what, why))
            libs = [(fm, ["--example"] + words(d, fm), False) for fm in forms]
            libs.append((forms[0], ["--example"] + words(d, forms[0]) + ["--no-fallback"], True))
            if generic:
                libs.append((None, [], False))
            for cf, opts, nofb in libs:
                so = os.path.join(work, "m.so")
                label = "%s: library for %s%s" % (name, cf or "no example", " --no-fallback" if nofb else "")
                p = run([tsaot, model] + opts + ["-o", so])
                if not check(p and p.returncode == 0, "%s: tsaot failed: %s" % (label, out_of(p))):
                    continue
                for fm in forms:
                    o = os.path.join(work, "so")
                    shutil.rmtree(o, ignore_errors=True)
                    p = run([tsaot_run, so] + words(d, fm) + ["-o", o])
                    what = "%s, form %s" % (label, fm)
                    err = out_of(p)
                    on = cf is None or group[fm] == group[cf]
                    if nofb and not on:
                        check(p and p.returncode == 1 and "error: input " in err,
                              "%s: expected exit status 1 and 'error: input', got %s: %s" %
                              (what, p and p.returncode, err))
                        continue
                    if not check(p and p.returncode == 0, "%s: exit status %s: %s" % (what, p and p.returncode, err)):
                        continue
                    noted = "ran in the interpreter" in err
                    check(noted == (not on), "%s: %s" % (what, "ran in the interpreter: " + err if noted else
                                                           "no note of the interpreter, expected one"))
                    why = compare(o, os.path.join(d, fm), atol, rtol)
                    check(why is None, "%s: %s" % (what, why))
            print("done %s (%d forms)" % (name, len(forms)))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print("%d checks, %d failed" % (checks, len(failed)))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
