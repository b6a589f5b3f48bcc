#!/usr/bin/python3
"""Times the reference interpreter against PyTorch on the zoo (or any cases).

    /usr/bin/python3 scripts/time-interp.py [BUILD/tsaot-run] [CASE_DIR...]

For each case folder (model.pt, in*.npy): the median wall time of the whole
`tsaot-run` process (load the archive, compile the TorchScript source,
run forward once, write the outputs), and in this same script PyTorch's
torch.jit.load + first forward and its steady-state forward (median of the
runs after a warm-up). Prints one row per case. Needs Debian's python3-torch;
tsaot's tests never run this. Until tsaot-bench exists this is the figure.
"""
import glob
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np
import torch

REPS = 5


def inputs_of(d):
    files = sorted(glob.glob(os.path.join(d, "in*.npy")), key=lambda p: int(os.path.basename(p)[2:-4]))
    return files


def as_arg(a):
    if a.ndim == 0 and a.dtype in (np.int64, np.float64, np.bool_):
        return a.item()
    return torch.from_numpy(a)


def main():
    run = sys.argv[1] if len(sys.argv) > 1 else "build/tsaot-run"
    cases = sys.argv[2:] or sorted(d for d in glob.glob("../shared/zoo/*") if os.path.isdir(d))
    torch.set_grad_enabled(False)
    print("%-22s %12s %14s %14s" % ("case", "tsaot-run ms", "torch load+1 ms", "torch fwd ms"))
    for d in cases:
        ins = inputs_of(d)
        with tempfile.TemporaryDirectory() as out:
            ts = []
            for _ in range(REPS):
                t0 = time.perf_counter()
                r = subprocess.run([run, os.path.join(d, "model.pt")] + ins + ["-o", out], capture_output=True)
                ts.append(time.perf_counter() - t0)
                if r.returncode != 0:
                    print("%s: tsaot-run failed: %s" % (d, r.stderr.decode()[:200]))
                    break
        args = [as_arg(np.load(p)) for p in ins]
        loads = []
        for _ in range(REPS):
            t0 = time.perf_counter()
            m = torch.jit.load(os.path.join(d, "model.pt"))
            m(*args)
            loads.append(time.perf_counter() - t0)
        fw = []
        for _ in range(3):
            m(*args)
        for _ in range(REPS * 2):
            t0 = time.perf_counter()
            m(*args)
            fw.append(time.perf_counter() - t0)
        print("%-22s %12.1f %14.1f %14.2f" % (os.path.basename(d), 1e3 * statistics.median(ts),
                                              1e3 * statistics.median(loads), 1e3 * statistics.median(fw)))


if __name__ == "__main__":
    main()
