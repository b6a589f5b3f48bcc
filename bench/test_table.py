#!/usr/bin/env python3
"""bench/test_table.py: bench/bench.py's table writer on a canned result (ctest bench.table).

Feeds bench/testdata/canned.json (made-up numbers) to write_table and to
`bench.py --table`, and checks the cells that the numbers fix: speedups,
n/a where a side is missing, notes, the bandwidth line, the header. Needs
neither libtorch nor gnuplot; times nothing.
"""
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.dont_write_bytecode = True  # no __pycache__ in the source tree
import bench  # noqa: E402

CANNED = os.path.join(HERE, "testdata", "canned.json")


def rows_of(md):
    """{(case, threads): [cells]} of the markdown table."""
    out = {}
    for line in md.splitlines():
        if line.startswith("| ") and not line.startswith("| case "):
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            out[(cells[0], cells[1])] = cells
    return out


def main():
    fails = []

    def want(cond, what):
        if not cond:
            fails.append(what)

    with open(CANNED) as f:
        res = json.load(f)
    md = bench.write_table(res)
    rows = rows_of(md)
    want(len(rows) == 3, "3 table rows, got %d" % len(rows))
    a = rows.get(("zoo/elementwise_chain", "1"), [])
    # case thr interp compiled libtorch opt vs vs-opt compile arena first rss notes
    want(a[2:10] == ["4.00", "0.500", "1.00", "0.750", "2.00x", "1.50x", "1.25", "2.0 MiB"],
         "row 1 cells: %r" % a[2:10])
    want(a[10:12] == ["12.5 / 450", "20 / 170"], "row 1 first result / RSS: %r" % a[10:12])
    want(a[12] == "", "row 1 has no notes: %r" % a[12:])
    b = rows.get(("zoo/elementwise_chain", "2"), [])
    want(b[6:8] == ["4.00x", "n/a"], "row 2 speedups: %r" % b[6:8])
    want("bailout" in b[12] and "max diff 0.5" in b[12] and "libtorch opt: forward failed: boom" in b[12],
         "row 2 notes: %r" % b[12:])
    c = rows.get(("fixtures/broken", "1"), [])
    want(c[2:8] == ["n/a"] * 6, "row 3 without numbers: %r" % c[2:8])
    want("tsaot: tsaot-bench: compiling model.pt failed" in c[12] and "libtorch-dev" not in c[12],
         "row 3 notes: %r" % c[12:])
    want("Canned CPU 9000, 2 cores" in md, "machine line")
    want("Debian libtorch-dev 1.13.1+dfsg-4" in md, "libtorch line")
    want("- zoo/elementwise_chain, 1 thread: 8.0 MiB per run, 16.78 GB/s (memcpy 33.55 GB/s, 50%)" in md,
         "bandwidth line")
    want("libtorch, 1 thread: 2.00x over 1 case;" in md and "libtorch, 2 threads: 4.00x over 1 case." in md,
         "geometric means")
    noisy = json.loads(json.dumps(res["rows"][0]))
    noisy["torch"]["min_ms"] = 0.1
    want(bench.row_notes(noisy) == "noisy: libtorch median 10x its min 0.100 ms", "noisy note: %r" %
         bench.row_notes(noisy))
    want(bench.fmt_ms(0.000812) == "0.000812" and bench.fmt_ms(123.4) == "123" and bench.fmt_ms(2.3456) == "2.35",
         "fmt_ms")

    # the command line: --table writes latest.md only (the plot where gnuplot is)
    with tempfile.TemporaryDirectory() as tmp:
        p = subprocess.run([sys.executable, os.path.join(HERE, "bench.py"), "--table", CANNED, "--out", tmp],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        want(p.returncode == 0, "bench.py --table exit status %d: %s" % (p.returncode, p.stderr))
        want(p.stdout == md, "bench.py --table prints the table")
        mdpath = os.path.join(tmp, "latest.md")
        want(os.path.exists(mdpath) and open(mdpath).read() == md, "latest.md written")
        want(not os.path.exists(os.path.join(tmp, "latest.json")), "--table does not write latest.json")

    for f in fails:
        print("bench.table: FAIL: " + f)
    if fails:
        print(md)
        return 1
    print("bench.table: ok (%d rows)" % len(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
