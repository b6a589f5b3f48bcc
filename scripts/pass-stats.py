#!/usr/bin/python3
"""Node counts before and after the optimization pipeline, per model.

  scripts/pass-stats.py [--build DIR] CASE_DIR...

Each CASE_DIR holds model.pt and in0.npy.. (the zoo's cases, tests/fixtures'
cases). For each, `tsaot-opt MODEL --example in*.npy -p none` and `-p default`
print the inlined forward graph before and after the pipeline, specialised to
the inputs; the script counts their nodes (nested blocks and fusion subgraphs
included, as ts_pass_count_nodes does) and some kinds, and prints a Markdown
table.
"""
import glob
import os
import re
import subprocess
import sys

# "%a : T, %b : T = kind[...](...)" or "kind(...)" (no outputs); types may
# hold "=" (strides=[...]) but never " = ".
NODE = re.compile(r"(?:^\s*| = )([a-z_]+::[A-Za-z_0-9]+)[\[(]")


def counts(text):
    """Nodes and per-kind counts of a printed graph (subgraphs included)."""
    kinds = {}
    n = sub = 0
    in_sub = False
    for line in text.splitlines():
        if line.startswith("with "):
            in_sub = True
        s = line.strip()
        if s.startswith("graph(") or s.startswith("return") or s.startswith("with ") or s.startswith("block") \
                or s.startswith("->") or not s:
            continue
        m = NODE.search(line)
        if not m:
            continue
        k = m.group(1)
        if k.startswith("prim::FusionGroup"):
            k = "prim::FusionGroup"
        kinds[k] = kinds.get(k, 0) + 1
        n += 1
        sub += in_sub
    return n, kinds, sub


def main():
    args = sys.argv[1:]
    build = "build"
    if len(args) >= 2 and args[0] == "--build":
        build, args = args[1], args[2:]
    if not args:
        sys.stderr.write(__doc__)
        return 2
    opt = os.path.join(build, "tsaot-opt")
    print("| case | nodes before | nodes after (top level + in groups) | prim::FusionGroup | prim::GetAttr before -> after | batch_norm before -> after |")
    print("| --- | ---: | ---: | ---: | --- | --- |")
    bad = 0
    for d in args:
        if not os.path.isfile(os.path.join(d, "model.pt")):
            continue
        name = os.path.basename(os.path.normpath(d))
        ins = sorted(glob.glob(os.path.join(d, "in*.npy")), key=lambda p: int(re.findall(r"\d+", os.path.basename(p))[0]))
        ex = []
        for i in ins:
            ex += ["--example", i]
        res = []
        for p in ("none", "default"):
            r = subprocess.run([opt, os.path.join(d, "model.pt")] + ex + ["-p", p], capture_output=True, text=True)
            if r.returncode != 0:
                res.append(None)
                sys.stderr.write("%s -p %s: %s\n" % (name, p, r.stderr.strip()[-500:]))
            else:
                res.append(counts(r.stdout))
        if None in res:
            print("| %s | failed | | | | |" % name)
            bad += 1
            continue
        (n0, k0, _), (n1, k1, g1) = res
        print("| %s | %d | %d (%d + %d) | %d | %d -> %d | %d -> %d |" % (
            name, n0, n1, n1 - g1, g1, k1.get("prim::FusionGroup", 0), k0.get("prim::GetAttr", 0),
            k1.get("prim::GetAttr", 0), k0.get("aten::batch_norm", 0), k1.get("aten::batch_norm", 0)))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
