#!/usr/bin/python3
"""Compares the node kinds of tsaot-dump's graph with PyTorch's graph.

    kinds_check.py TSAOT_DUMP CASE_DIR[...] [--graph NAME] [--verbose]

For each case folder (model.pt plus a graph PyTorch printed for it: by
default inlined_graph.txt, else torch_graph.txt), runs
`TSAOT_DUMP model.pt --inlined` and compares the multisets of aten::/prim::
node kinds. A case folder may hold `kinds_expected_diff.txt`: lines
`KIND +N` / `KIND -N` (ours minus PyTorch's) with a reason after '#', for
differences that are understood; those must then match exactly.
Prints one line per case and a last line 'N passed, N failed'.
"""
import collections
import os
import re
import subprocess
import sys

KIND = re.compile(r"=\s+((?:aten|prim)::[A-Za-z_0-9]+)")


def kinds(text):
    c = collections.Counter()
    for line in text.splitlines():
        m = KIND.search(line)
        if m:
            c[m.group(1)] += 1
    return c


def expected_diff(case):
    p = os.path.join(case, "kinds_expected_diff.txt")
    out = {}
    if os.path.exists(p):
        for line in open(p):
            line = line.split("#", 1)[0].strip()
            if line:
                k, n = line.split()
                out[k] = int(n)
    return out


def main(argv):
    verbose = "--verbose" in argv
    argv = [a for a in argv if a != "--verbose"]
    graph_name = None
    if "--graph" in argv:
        i = argv.index("--graph")
        graph_name = argv[i + 1]
        del argv[i:i + 2]
    dump, cases = argv[0], argv[1:]
    passed = failed = 0
    for case in cases:
        name = os.path.basename(os.path.normpath(case))
        names = [graph_name] if graph_name else ["inlined_graph.txt", "torch_graph.txt"]
        ref = next((os.path.join(case, n) for n in names if os.path.exists(os.path.join(case, n))), None)
        if ref is None:
            print("%s: no reference graph" % name)
            failed += 1
            continue
        p = subprocess.run([dump, os.path.join(case, "model.pt"), "--inlined"], capture_output=True, text=True)
        if p.returncode != 0:
            print("%s: FAIL: tsaot-dump exit %d\n%s" % (name, p.returncode, p.stderr.strip()[:3000]))
            failed += 1
            continue
        ours, theirs = kinds(p.stdout), kinds(open(ref).read())
        diff = {k: ours[k] - theirs[k] for k in set(ours) | set(theirs) if ours[k] != theirs[k]}
        want = expected_diff(case)
        if diff == want:
            passed += 1
            note = " (%d understood differences)" % len(want) if want else ""
            print("%s: ok, %d nodes%s" % (name, sum(theirs.values()), note))
        else:
            failed += 1
            print("%s: FAIL: kind counts differ (ours - PyTorch's):" % name)
            for k in sorted(set(diff) | set(want)):
                if diff.get(k, 0) != want.get(k, 0):
                    print("    %-32s %+d (expected %+d)" % (k, diff.get(k, 0), want.get(k, 0)))
            if verbose:
                print(p.stdout)
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
