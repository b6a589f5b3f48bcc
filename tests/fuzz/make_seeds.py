#!/usr/bin/python3
"""tests/fuzz/make_seeds.py OUT: writes raw seed inputs for every fuzz target
into OUT/<target>/ from the project's fixtures; scripts/fuzz.sh --seed merges
them (libFuzzer -merge=1 keeps only inputs that add coverage) into
tests/fuzz/corpus/<target>/.

  zip     every tests/fixtures/**/*.pt (hostile ones included)
  pickle  their data.pkl and constants.pkl
  script  their code/**/*.py, each file's own qualifier renamed __torch__.m
          (the fuzz target stores its input as code/__torch__/m.py)
  ir      tests/fixtures/graphs/*.txt, tests/lit/**/Inputs/*.ir and the graph
          files inside lit tests (split-file sections starting "graph(")
  npy     every tests/fixtures/**/*.npy
Files over 256 KiB are skipped. Needs only the standard library."""
import hashlib
import pathlib
import re
import sys
import zipfile

ROOT = pathlib.Path(__file__).resolve().parents[2]
FIX = ROOT / "tests" / "fixtures"
MAX = 256 * 1024


def put(out, target, data):
    if len(data) > MAX:
        return
    d = out / target
    d.mkdir(parents=True, exist_ok=True)
    (d / hashlib.sha1(data).hexdigest()).write_bytes(data)


def main():
    out = pathlib.Path(sys.argv[1])
    for pt in sorted(FIX.rglob("*.pt")):
        data = pt.read_bytes()
        put(out, "zip", data)
        try:
            z = zipfile.ZipFile(pt)
            names = z.namelist()
        except Exception:
            continue
        for n in names:
            try:
                body = z.read(n)
            except Exception:
                continue
            rel = n.split("/", 1)[1] if "/" in n else n
            if rel in ("data.pkl", "constants.pkl"):
                put(out, "pickle", body)
            elif rel.startswith("code/") and rel.endswith(".py"):
                qual = rel[len("code/"):-len(".py")].replace("/", ".")
                put(out, "script", body.replace(qual.encode() + b".", b"__torch__.m."))
    for g in sorted((FIX / "graphs").glob("*.txt")):
        put(out, "ir", g.read_bytes())
    for g in sorted((ROOT / "tests" / "lit").rglob("Inputs/*.ir")):
        put(out, "ir", g.read_bytes())
    for t in sorted((ROOT / "tests" / "lit").rglob("*.test")):
        parts = re.split(rb"(?m)^#--- [^\n]*\n", t.read_bytes())[1:]
        for p in parts:
            if p.lstrip().startswith(b"graph("):
                put(out, "ir", p)
    for npy in sorted(FIX.rglob("*.npy")):
        put(out, "npy", npy.read_bytes())


if __name__ == "__main__":
    main()
