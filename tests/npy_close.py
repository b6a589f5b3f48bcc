#!/usr/bin/python3
"""Compares .npy files pairwise with compare_npy.py's rule.

  npy_close.py ATOL RTOL GOT.npy WANT.npy [GOT.npy WANT.npy ...]

Exits 1 (printing what differs) unless every GOT matches its WANT: same
dtype and shape, values within ATOL + RTOL * |WANT| (exact for integers
and bools; NaN matches NaN; complex values part by part)."""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from compare_npy import compare  # noqa: E402

if len(sys.argv) < 5 or len(sys.argv) % 2 == 0:
    print(__doc__.strip(), file=sys.stderr)
    sys.exit(2)
atol, rtol = float(sys.argv[1]), float(sys.argv[2])
bad = 0
for got, want in zip(sys.argv[3::2], sys.argv[4::2]):
    why = compare(np.load(got), np.load(want), atol, rtol)
    if why:
        print("%s: %s" % (got, why))
        bad += 1
sys.exit(1 if bad else 0)
