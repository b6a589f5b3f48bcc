#!/usr/bin/python3
"""Runs PyTorch's OpInfo / ModuleInfo cases (tests/fixtures/opinfo,
tests/fixtures/moduleinfo; made by tests/fixtures/make_opinfo_cases.py)
through tsaot and compares with PyTorch's outputs.

  run_opinfo.py --mode interp|compiled --cases DIR --tsaot-run TSAOT_RUN
                [--tsaot TSAOT --rt LIB --link SCRIPT] [--name NAME --floor FILE]
                [--write-floor] [--json FILE] [-j N] [--every N] [--only NAME,...] [-v]

--mode interp runs each model with `tsaot-run MODEL.pt in0.npy ...`;
--mode compiled compiles it with `tsaot MODEL.pt --example in0.npy ... -o
M.so` and runs `tsaot-run M.so ...`. With --rt and --link, tsaot links the
library against the runtime as one shared library (LIB, made by
tests/opinfo/opinfo.cmake) through the link script (tests/opinfo/link_rt.sh,
as TSAOT_CC) instead of the static runtime libraries: the same generated
code, a link 20 times faster.

Each output is compared as PyTorch's assertEqual compares by default: same
dtype and shape, values within atol + rtol * |expected| (float32 1e-5 and
1.3e-6, float64 1e-7 and 1e-7, float16 1e-5 and 1e-3; the op's own float32
toleranceOverride where OpInfo has one; exact for integers and bools; NaN
equals NaN), atol at least 3 times PyTorch's own float32 error on the
output where the generator measured one (VARIANT.err in OP.npz: against the
same call in float64; a GEMM's cancellation); outputs the manifest marks
noval (random ops, unspecified values) by dtype and shape only.

Prints `ops N/M` (ops whose every variant passes every sample; M: ops with
a case), the count per variant, every failing op grouped by reason, the
30 most common reasons, the ops without a case and why, and with --json a
summary in JSON. Exits 1 when any output is wrong (a wrong value, dtype,
shape or count, or a crash: a failure must be an error message), or when a
count is below the floor: the line NAME in FILE (`opinfo.interp ops=139
function=130 ...`); --write-floor rewrites that line with this run's
counts. An op tsaot does not support does not fail the test. --every N
runs every Nth op only (the sanitizer build), without the floor.
"""
import argparse
import collections
import concurrent.futures
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile

import numpy as np

TIMEOUT = 400  # seconds a tool may take on one case (a hang guard: nn.Transformer compiles in 15-70 s on a loaded 2-core machine)

DEFAULT_TOL = {"float16": (1e-5, 1e-3), "float32": (1e-5, 1.3e-6), "float64": (1e-7, 1e-7),
               "complex64": (1e-5, 1.3e-6), "complex128": (1e-7, 1e-7)}


class Case:
    def __init__(self, key, variant, fields):
        self.key, self.variant = key, variant
        self.samples = int(fields["samples"])
        self.ids = [int(x) for x in fields["ids"].split(",")]
        self.inputs = [] if fields["inputs"] == "-" else [int(x) for x in fields["inputs"].split(",")]
        self.per = [int(x) for x in fields["outputs"].split(",")]
        self.noval = set() if fields["noval"] == "-" else {int(x) for x in fields["noval"].split(",")}
        self.tol = None if fields["tol"] == "-" else tuple(float(x) for x in fields["tol"].split(","))
        self.via = "script %s, trace %s" % (fields["script"], fields["trace"])


def read_manifest(d):
    """(cases, skipped): skipped maps an op with no case to its reasons."""
    cases, skips = [], collections.defaultdict(list)
    with open(os.path.join(d, "manifest.txt")) as f:
        for line in f:
            if line.startswith("case "):
                w = line.split()
                cases.append(Case(w[1], w[2], dict(x.split("=", 1) for x in w[3:])))
            elif line.startswith("skip "):
                _, key, variant, why = line.rstrip("\n").split(" ", 3)
                skips[key].append((variant, why))
    with_case = {c.key for c in cases}
    skipped = {}
    for key, whys in skips.items():
        if key not in with_case:
            skipped[key] = "; ".join(sorted({("" if v == "-" else v + ": ") + w for v, w in whys}))
    return cases, skipped


def tol_of(dtype, override):
    a, r = DEFAULT_TOL.get(dtype.name, (0.0, 0.0))
    if override and dtype.name in ("float32", "complex64"):
        a, r = max(a, override[0]), max(r, override[1])
    return a, r


def compare(got, want, noval, override, own):
    """None if got matches want, else what differs. own: PyTorch's own
    float32 error on this output (the generator's VARIANT.err): the atol is
    at least 3 times it (ours within twice PyTorch's error of the exact
    value)."""
    if got.dtype != want.dtype:
        return "dtype %s, expected %s" % (got.dtype, want.dtype)
    if got.shape != want.shape:
        return "shape %s, expected %s" % (list(got.shape), list(want.shape))
    if noval or want.size == 0:
        return None
    if want.dtype.kind in "biu":
        bad = int(np.count_nonzero(got != want))
        return None if bad == 0 else "%d of %d elements differ" % (bad, want.size)
    atol, rtol = tol_of(want.dtype, override)
    atol = max(atol, 3 * own)
    ok = np.isclose(got, want, atol=atol, rtol=rtol, equal_nan=True)
    if ok.all():
        return None
    # the element furthest past its bound
    # flat, so that a 0-d output (a numpy scalar after abs) indexes too
    err = (np.abs(got.astype(np.complex128) - want.astype(np.complex128)) - (atol + rtol * np.abs(want))).reshape(-1)
    err[np.isnan(err)] = np.inf
    i = int(np.argmax(np.where(ok.reshape(-1), -np.inf, err)))
    return "%d of %d elements off (atol %g, rtol %g); worst at flat index %d: got %r, expected %r" % (
        ok.size - int(ok.sum()), ok.size, atol, rtol, i, got.flat[i].item(), want.flat[i].item())


# ----------------------------------------------------------------- reasons

LOC = re.compile(r"^\S+:\d+:\d+: error: ")


def messages(text):
    """The error lines of a tool's stderr, locations and excerpts dropped."""
    out = []
    for line in text.splitlines():
        if LOC.match(line):
            out.append(LOC.sub("", line).strip())
        elif line.startswith(("error: ", "tsaot: error: ", "tsaot-run: error: ")):
            out.append(line.split("error: ", 1)[1].strip())
        elif line.startswith(("tsaot: ", "tsaot-run: ")) and "note:" not in line:
            out.append(line.split(": ", 1)[1].strip())
    return out or [t for t in (text.strip().splitlines()[:1]) if t]


def classify(text, stage):
    """(kind, [reasons]) of a failed tool run: kind is unknown op, no
    overload, no kernel or stage (load error, compile error, run error);
    each reason a grouping key (numbers as N)."""
    msgs = messages(text)
    unknown = sorted({m.group(1) for m in re.finditer(r"unknown operator (\S+?)[:,]?(?:\s|$)", text)})
    if unknown:
        return "unknown op", ["unknown op " + u for u in unknown]
    over = sorted({m.group(1) for m in re.finditer(r"no overload (?:matches|of) ([A-Za-z_:.0-9]+)", text)})
    if over:
        return "no overload", ["no overload matches " + o for o in over]
    nok = sorted({m.group(1) for m in re.finditer(r"operator (\S+) (?:is not supported by the interpreter "
                                                  r"\(no kernel\)|has no kernel)", text)})
    if nok:
        return "no kernel", ["no kernel for " + o for o in nok]
    m = msgs[0] if msgs else "exit status 1 without a message"
    key = re.sub(r"\d+", "N", m)[:110]
    return stage, ["%s: %s" % (stage, key)]


# ------------------------------------------------------------------- a run

def run_tool(cmd, env=None):
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=TIMEOUT, env=env)
    except subprocess.TimeoutExpired:
        return None, "timed out after %d s" % TIMEOUT
    return p.returncode, p.stderr.decode(errors="replace")


SANITIZER = re.compile(r"ERROR: (Address|Leak|Thread)Sanitizer|: runtime error: ")


def crashed(rc, err):
    """A signal, an exit status other than 0 and 1, or a sanitizer's report
    (ASan exits 1 too)."""
    return rc is not None and (rc not in (0, 1) or bool(SANITIZER.search(err)))


def run_case(case, d, a, env):
    """Result of one case: dict(status=pass|fail|wrong|crash, kind, reasons,
    detail)."""
    model = os.path.join(d, "%s.%s.pt" % (case.key, case.variant))
    work = tempfile.mkdtemp(prefix="tsaot-opinfo-")
    try:
        with zipfile.ZipFile(os.path.join(d, case.key + ".npz")) as z:
            def arr(name):
                with z.open(name + ".npy") as f:
                    return np.lib.format.read_array(f, allow_pickle=False)
            ins = []
            for k, s in enumerate(case.inputs):
                p = os.path.join(work, "in%d.npy" % k)
                np.save(p, arr("a%d" % s))
                ins.append(p)
            wants = [arr("%s.o%d" % (case.variant, k)) for k in range(sum(case.per))]
            own = arr(case.variant + ".err") if case.variant + ".err.npy" in z.namelist() else np.zeros(len(wants))
        out = os.path.join(work, "out")
        if a.mode == "interp":
            rc, err = run_tool([a.tsaot_run, model] + ins + ["-o", out])
            stage = "run error"
            if rc == 1 and classify(err, "x")[0] == "x":
                # an error before the run is a load error
                lrc, _ = run_tool([a.tsaot_opt, model, "-p", "none"])
                stage = "load error" if lrc == 1 else stage
        else:
            so = os.path.join(work, "m.so")
            cmd = [a.tsaot, model] + (["--example"] + ins if ins else []) + ["--no-fallback", "-o", so]
            rc, err = run_tool(cmd, env)
            stage = "compile error"
            if rc == 0:
                rc, err = run_tool([a.tsaot_run, so] + ins + ["-o", out])
                stage = "run error"
        if rc is None:
            return dict(status="fail", kind="timeout", reasons=["timeout (%s)" % stage], detail=err)
        if crashed(rc, err):
            return dict(status="crash", kind="crash", reasons=["crash (%s): exit status %d" % (stage, rc)],
                        detail=err.strip()[-1500:])
        if rc != 0:
            kind, reasons = classify(err, stage)
            return dict(status="fail", kind=kind, reasons=reasons, detail=err.strip()[:500])
        got = []
        while os.path.exists(os.path.join(out, "out%d.npy" % len(got))):
            got.append(os.path.join(out, "out%d.npy" % len(got)))
        if len(got) != len(wants):
            return dict(status="wrong", kind="wrong value", reasons=["wrong value: output count"],
                        detail="wrote %d outputs, PyTorch returns %d" % (len(got), len(wants)))
        sample, first = 0, 0
        for k, w in enumerate(wants):
            while k >= first + case.per[sample]:
                first += case.per[sample]
                sample += 1
            try:
                g = np.load(got[k], allow_pickle=False)
            except Exception as e:
                return dict(status="wrong", kind="wrong value", reasons=["wrong value: unreadable output"],
                            detail="out%d.npy: %s" % (k, e))
            why = compare(g, w, k in case.noval, case.tol, float(own[k]))
            if why:
                what = "dtype" if why.startswith("dtype") else "shape" if why.startswith("shape") else "value"
                return dict(status="wrong", kind="wrong value", reasons=["wrong value: " + what],
                            detail="out%d (OpInfo sample %d): %s" % (k, case.ids[sample], why))
        return dict(status="pass", kind="pass", reasons=[], detail="")
    finally:
        shutil.rmtree(work, ignore_errors=True)


# -------------------------------------------------------------------- floor

def read_floor(path, name):
    if not path or not os.path.exists(path):
        return None
    with open(path) as f:
        for line in f:
            w = line.split()
            if w and w[0] == name:
                return {k: int(v) for k, v in (x.split("=") for x in w[1:])}
    return None


def write_floor(path, name, counts):
    lines = []
    if os.path.exists(path):
        with open(path) as f:
            lines = [line for line in f if not (line.split() and line.split()[0] == name)]
    lines.append("%s %s\n" % (name, " ".join("%s=%d" % kv for kv in counts.items())))
    head = [line for line in lines if line.startswith("#")]
    body = sorted(line for line in lines if not line.startswith("#"))
    with open(path, "w") as f:
        f.writelines(head + body)


# --------------------------------------------------------------------- main

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mode", choices=("interp", "compiled"), required=True)
    ap.add_argument("--cases", required=True, help="tests/fixtures/opinfo or tests/fixtures/moduleinfo")
    ap.add_argument("--tsaot-run", required=True)
    ap.add_argument("--tsaot-opt", help="tsaot-opt (interp: tells load errors from run errors)")
    ap.add_argument("--tsaot")
    ap.add_argument("--rt", help="the runtime as one shared library (compiled, with --link)")
    ap.add_argument("--link", help="the link script tsaot runs as TSAOT_CC (tests/opinfo/link_rt.sh)")
    ap.add_argument("--name", default=None, help="this test's line in the floor file (default: from --cases "
                    "and --mode)")
    ap.add_argument("--floor", help="the floor file (tests/opinfo/floor.txt)")
    ap.add_argument("--write-floor", action="store_true", help="rewrite the floor line with this run's counts")
    ap.add_argument("--json", help="write the summary as JSON to this file")
    ap.add_argument("-j", type=int, default=os.cpu_count() or 2, help="cases run at once (default: CPUs)")
    ap.add_argument("--every", type=int, default=1, help="run every Nth op only (no floor then)")
    ap.add_argument("--only", help="run these ops only (comma-separated keys; no floor then)")
    ap.add_argument("-v", action="store_true", help="one line per case")
    a = ap.parse_args()
    if a.mode == "compiled" and not a.tsaot:
        ap.error("--mode compiled needs --tsaot")
    a.tsaot_opt = a.tsaot_opt or os.path.join(os.path.dirname(a.tsaot_run), "tsaot-opt")
    what = "moduleinfo" if os.path.basename(os.path.normpath(a.cases)) == "moduleinfo" else "opinfo"
    unit = "modules" if what == "moduleinfo" else "ops"
    name = a.name or "%s.%s" % (what, a.mode)
    env = None
    if a.mode == "compiled" and a.rt and a.link:
        env = dict(os.environ, TSAOT_CC=a.link, TSAOT_OPINFO_RT=os.path.abspath(a.rt))

    cases, skipped = read_manifest(a.cases)
    keys = sorted({c.key for c in cases})
    subset = a.every > 1 or a.only
    if a.every > 1:
        keys = keys[::a.every]
    if a.only:
        keys = [k for k in keys if k in a.only.split(",")]
    keep = set(keys)
    cases = [c for c in cases if c.key in keep]

    t0 = time.time()
    results = {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, a.j)) as ex:
        futs = {ex.submit(run_case, c, a.cases, a, env): c for c in cases}
        for f in concurrent.futures.as_completed(futs):
            c = futs[f]
            results[(c.key, c.variant)] = r = f.result()
            if a.v:
                print("%-5s %s %s%s" % (r["status"].upper(), c.key, c.variant,
                                        (": " + r["detail"].splitlines()[0][:200]) if r["detail"] else ""),
                      flush=True)
    elapsed = time.time() - t0

    variants = sorted({c.variant for c in cases}, key=lambda v: ("function", "method", "inplace",
                                                                 "module").index(v))
    per_variant = {v: [0, 0] for v in variants}
    op_ok = {}
    for c in cases:
        r = results[(c.key, c.variant)]
        per_variant[c.variant][1] += 1
        per_variant[c.variant][0] += r["status"] == "pass"
        op_ok[c.key] = op_ok.get(c.key, True) and r["status"] == "pass"
    n_ok = sum(op_ok.values())
    wrong = [(c, results[(c.key, c.variant)]) for c in cases if results[(c.key, c.variant)]["status"] == "wrong"]
    crashes = [(c, results[(c.key, c.variant)]) for c in cases if results[(c.key, c.variant)]["status"] == "crash"]

    # failing ops by their first reason; reasons counted over ops
    by_kind = collections.defaultdict(lambda: collections.defaultdict(set))
    reason_ops = collections.defaultdict(set)
    for c in cases:
        r = results[(c.key, c.variant)]
        if r["status"] == "pass":
            continue
        by_kind[r["kind"]][r["reasons"][0]].add(c.key if len(variants) == 1 else "%s(%s)" % (c.key, c.variant))
        for why in r["reasons"]:
            reason_ops[why].add(c.key)

    print("%s.%s: %s %d/%d" % (what, a.mode, unit, n_ok, len(op_ok)) +
          (" (every %dth op)" % a.every if a.every > 1 else "") + (" (only %s)" % a.only if a.only else ""))
    if len(variants) > 1 or variants != ["module"]:
        print("  by variant: " + ", ".join("%s %d/%d" % (v, p, t) for v, (p, t) in per_variant.items()))
    print("  %d cases, %d samples, %.0f s, %d at a time" % (len(cases), sum(c.samples for c in cases), elapsed, a.j))
    order = ["wrong value", "crash", "timeout", "unknown op", "no overload", "no kernel", "load error",
             "compile error", "run error"]
    for kind in sorted(by_kind, key=lambda k: order.index(k) if k in order else len(order)):
        groups = by_kind[kind]
        print("failing (%s): %d cases" % (kind, sum(len(s) for s in groups.values())))
        for why, who in sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0])):
            print("  %s [%d]: %s" % (why, len(who), " ".join(sorted(who))))
    print("top reasons (%s blocked):" % unit)
    top = sorted(reason_ops.items(), key=lambda kv: (-len(kv[1]), kv[0]))[:30]
    for why, who in top:
        print("  %4d  %s" % (len(who), why))
    for c, r in wrong:
        print("WRONG %s %s: %s" % (c.key, c.variant, r["detail"]))
    for c, r in crashes:
        print("CRASH %s %s: %s" % (c.key, c.variant, r["reasons"][0]))
        print("      " + r["detail"].replace("\n", "\n      "))
    if skipped and not subset:
        print("no case (%d %s, reasons from %s):" % (len(skipped), unit, os.path.join(a.cases, "manifest.txt")))
        for key in sorted(skipped):
            print("  %s: %s" % (key, skipped[key][:300]))

    counts = collections.OrderedDict([(unit, n_ok)])
    for v, (p, _) in per_variant.items():
        if v != "module":
            counts[v] = p
    if a.json:
        with open(a.json, "w") as f:
            json.dump({
                "test": name, "mode": a.mode, unit: {"passed": n_ok, "total": len(op_ok)},
                "variants": {v: {"passed": p, "total": t} for v, (p, t) in per_variant.items()},
                "seconds": round(elapsed, 1), "subset": bool(subset),
                "wrong": ["%s %s: %s" % (c.key, c.variant, r["detail"]) for c, r in wrong],
                "crashes": ["%s %s: %s" % (c.key, c.variant, r["reasons"][0]) for c, r in crashes],
                "top_reasons": [{"reason": w, unit: len(s)} for w, s in top],
                "cases": {"%s %s" % k: {"status": r["status"], "reasons": r["reasons"]}
                          for k, r in sorted(results.items())},
                "no_case": skipped,
            }, f, indent=1, sort_keys=True)

    failed = False
    if wrong or crashes:
        print("FAIL: %d wrong, %d crashed (a result that differs from PyTorch's, or a crash, is a bug; "
              "an op tsaot does not support is not)" % (len(wrong), len(crashes)))
        failed = True
    if a.write_floor and not subset:
        write_floor(a.floor, name, counts)
        print("floor: %s %s written to %s" % (name, " ".join("%s=%d" % kv for kv in counts.items()), a.floor))
    elif a.floor and not subset:
        floor = read_floor(a.floor, name)
        if floor is None:
            print("FAIL: no line %s in %s (run with --write-floor)" % (name, a.floor))
            failed = True
        else:
            low = ["%s %d < %d" % (k, counts.get(k, 0), v) for k, v in floor.items() if counts.get(k, 0) < v]
            if low:
                print("FAIL: below the floor in %s: %s" % (a.floor, ", ".join(low)))
                failed = True
            elif any(counts.get(k, 0) > v for k, v in floor.items()):
                print("note: above the floor (%s): raise it with --write-floor" %
                      " ".join("%s=%d" % kv for kv in counts.items()))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
