#!/usr/bin/env python3
"""bench/check_trace.py: runs tsaot-bench --trace on a model and checks the trace file.

    check_trace.py TSAOT-BENCH TSAOT-DUMP OUT.json MODEL.pt in0.npy ...

The ctests bench.trace.*. Runs `TSAOT-BENCH MODEL.pt in0.npy ... --trace OUT.json
--profile --json --iters 2 --warmup 1`, loads OUT.json with Python's json and
checks that it is a Chrome trace (Trace Event Format) as Perfetto reads it:
an object with a traceEvents list; every event a metadata ("M") or complete
("X") event with a name, numbers ts and dur >= 0, integers pid and tid, an
args object. For each side (pid 1 the interpreter, pid 2 the compiled
model): one "forward" run event; node events inside it, in order and not
overlapping; their count the run event's `nodes` and the node runs of one
run that --profile counted separately (its calls per run, summed over its
rows); every node event's name an op of the model (`TSAOT-DUMP MODEL.pt
--inlined`), a fusion group's the ops it fuses joined by '+'; its args the
op, the source `code/__torch__/...py:LINE` where known and the output types.
Nothing about speed is asserted. Exit status 0 when all hold, 1 otherwise.
"""
import json
import math
import re
import subprocess
import sys

ROUND_US = 0.002  # the trace prints microseconds with 3 decimals: two roundings


def is_num(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def model_ops(dump, model):
    p = subprocess.run([dump, model, "--inlined"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                       timeout=300)
    if p.returncode != 0:
        raise SystemExit("bench.trace: %s failed: %s" % (dump, p.stderr))
    return set(re.findall(r"= ([a-z_]+::[A-Za-z_0-9]+)[\[(]", p.stdout))


def check_side(errs, events, pid, side, ops, profile_calls):
    run = [e for e in events if e.get("pid") == pid and e.get("cat") == "run"]
    nodes = [e for e in events if e.get("pid") == pid and e.get("cat") in ("node", "fusion")]
    if len(run) != 1:
        errs.append("%s: %d run events, expected 1" % (side, len(run)))
        return 0
    run = run[0]
    if run["name"] != "forward" or run["ts"] != 0:
        errs.append("%s: the run event is %r at %r, expected forward at 0" % (side, run["name"], run["ts"]))
    if not nodes:
        errs.append("%s: no node events" % side)
    if run["args"].get("nodes") != len(nodes) or run["args"].get("dropped") != 0:
        errs.append("%s: %d node events, the run event says %r (dropped %r)" % (
            side, len(nodes), run["args"].get("nodes"), run["args"].get("dropped")))
    if abs(profile_calls - len(nodes)) > 0.05:
        errs.append("%s: %d node events, but --profile counted %.2f node runs per run" % (
            side, len(nodes), profile_calls))
    end = 0.0
    for k, e in enumerate(nodes):
        where = "%s event %d (%s)" % (side, k, e["name"])
        if e["ts"] + ROUND_US < end:
            errs.append("%s starts at %g us, before the one before it ended (%g)" % (where, e["ts"], end))
        end = e["ts"] + e["dur"]
        if end > run["dur"] + ROUND_US:
            errs.append("%s ends at %g us, after its run (%g)" % (where, end, run["dur"]))
        a = e["args"]
        if e["cat"] == "fusion":
            short = {o.split("::", 1)[1] for o in ops}
            if a.get("op") != "prim::FusionGroup" or not all(x in short for x in e["name"].split("+")):
                errs.append("%s: a fusion event of %r, not ops of the model joined by '+'" % (where, a.get("op")))
        elif e["name"] not in ops or a.get("op") != e["name"]:
            errs.append("%s: not an op of the model (args.op %r)" % (where, a.get("op")))
        src = a.get("source")
        if src is not None and not re.fullmatch(r"code/__torch__/\S+\.py:[0-9]+", src):
            errs.append("%s: source %r is not code/__torch__/...py:LINE" % (where, src))
        outs = a.get("outputs")
        if not (isinstance(outs, list) and all(isinstance(o, str) and o for o in outs)):
            errs.append("%s: outputs %r, expected a list of types" % (where, outs))
        if pid == 2 and not isinstance(a.get("native"), bool):
            errs.append("%s: native %r, expected true or false" % (where, a.get("native")))
    return len(nodes)


def main():
    if len(sys.argv) < 5:
        print("usage: check_trace.py TSAOT-BENCH TSAOT-DUMP OUT.json MODEL.pt in0.npy ...", file=sys.stderr)
        return 2
    bench, dump, out, model = sys.argv[1:5]
    cmd = [bench, model] + sys.argv[5:] + ["--trace", out, "--profile", "--json", "--iters", "2", "--warmup", "1"]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=600)
    sys.stderr.write(p.stderr)
    if p.returncode != 0:
        print("bench.trace: %s exited with %d" % (bench, p.returncode))
        return 1
    prof = json.loads(p.stdout)
    with open(out) as f:
        trace = json.load(f)
    errs = []
    events = trace.get("traceEvents") if isinstance(trace, dict) else None
    if not isinstance(events, list) or not events:
        print("bench.trace: %s has no traceEvents list" % out)
        return 1
    for k, e in enumerate(events):
        if not isinstance(e, dict) or e.get("ph") not in ("X", "M"):
            errs.append("event %d: %r is not a complete or metadata event" % (k, e))
            continue
        if not (isinstance(e.get("name"), str) and e["name"]) or not isinstance(e.get("args"), dict):
            errs.append("event %d: no name or no args: %r" % (k, e))
        if not all(isinstance(e.get(x), int) and not isinstance(e.get(x), bool) for x in ("pid", "tid")):
            errs.append("event %d: pid/tid not integers: %r" % (k, e))
        if e["ph"] == "X" and not all(is_num(e.get(x)) and e[x] >= 0 for x in ("ts", "dur")):
            errs.append("event %d: ts %r dur %r, expected numbers >= 0" % (k, e.get("ts"), e.get("dur")))
    if errs:
        print("\n".join("bench.trace: " + e for e in errs[:20]))
        return 1
    ops = model_ops(dump, model)
    n = {}
    for pid, side, key in ((1, "interpreter", "interp_profile"), (2, "compiled", "compiled_profile")):
        calls = sum(r["calls"] for r in prof.get(key, []))
        n[side] = check_side(errs, events, pid, side, ops, calls)
    for e in errs[:20]:
        print("bench.trace: " + e)
    if errs:
        return 1
    print("bench.trace: %d events: %d interpreter node runs, %d compiled, all well-formed" % (
        len(events), n["interpreter"], n["compiled"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
