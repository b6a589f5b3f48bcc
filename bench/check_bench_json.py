#!/usr/bin/env python3
"""bench/check_bench_json.py: runs a tsaot-bench --json command and checks its object.

    check_bench_json.py TSAOT-BENCH MODEL.pt in0.npy ... --json [options]

The ctest bench.json. Checks that stdout's JSON parses, that every field of
tsaot-bench's --json contract is there, and that the values are sane: times,
sizes and counts positive, minimum not above median, the ratio what the
medians say, min <= p50 <= p90 <= p99 with p50 the median, no bailout, the
compiled model's outputs agree with the interpreter's. bytes_moved, achieved_gbps and copy_gbps are optional.
Nothing about speed is asserted. Exit status 0 when all hold, 1 otherwise.
"""
import json
import math
import subprocess
import sys

POSITIVE = ["interp_median_ms", "interp_min_ms", "compiled_median_ms", "compiled_min_ms", "ratio", "compile_s",
            "so_bytes", "first_result_ms", "init_ms", "first_run_ms", "peak_rss_bytes", "bench_peak_rss_bytes"]
NONNEGATIVE = ["arena_bytes", "max_abs_diff"]
OPTIONAL_NONNEGATIVE = ["bytes_moved", "achieved_gbps", "copy_gbps"]
MAX_ABS_DIFF = 1e-4


def is_num(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def check(obj, want_threads):
    errs = []
    for k in ["model", "threads", "iters", "outputs", "bailout"] + POSITIVE + NONNEGATIVE:
        if k not in obj:
            errs.append("missing field %s" % k)
    for k in POSITIVE:
        if k in obj and not (is_num(obj[k]) and obj[k] > 0):
            errs.append("%s = %r, expected a number > 0" % (k, obj[k]))
    for k in NONNEGATIVE + [k for k in OPTIONAL_NONNEGATIVE if k in obj]:
        if k in obj and not (is_num(obj[k]) and obj[k] >= 0):
            errs.append("%s = %r, expected a number >= 0" % (k, obj[k]))
    if not isinstance(obj.get("model"), str) or not obj.get("model"):
        errs.append("model = %r, expected the model's path" % obj.get("model"))
    for k in ("threads", "iters", "outputs"):
        if not (isinstance(obj.get(k), int) and not isinstance(obj.get(k), bool) and obj[k] >= 1):
            errs.append("%s = %r, expected an integer >= 1" % (k, obj.get(k)))
    if want_threads is not None and obj.get("threads") != want_threads:
        errs.append("threads = %r, --threads said %d" % (obj.get("threads"), want_threads))
    if obj.get("bailout") is not False:
        errs.append("bailout = %r, expected false (the compiled code ran)" % obj.get("bailout"))
    if is_num(obj.get("max_abs_diff")) and obj["max_abs_diff"] > MAX_ABS_DIFF:
        errs.append("max_abs_diff = %g, above %g" % (obj["max_abs_diff"], MAX_ABS_DIFF))
    for side in ("interp", "compiled"):
        lo, med = obj.get(side + "_min_ms"), obj.get(side + "_median_ms")
        if is_num(lo) and is_num(med) and lo > med:
            errs.append("%s_min_ms %g above %s_median_ms %g" % (side, lo, side, med))
        # the percentiles: present, ordered min <= p50 <= p90 <= p99, p50 the median
        pcts = [obj.get("%s_p%d_ms" % (side, q)) for q in (50, 90, 99)]
        if not all(is_num(x) and x > 0 for x in pcts):
            errs.append("%s_p50/p90/p99_ms = %r, expected numbers > 0" % (side, pcts))
        elif not (is_num(lo) and lo <= pcts[0] <= pcts[1] <= pcts[2]):
            errs.append("%s: min %r, p50 %g, p90 %g, p99 %g are not in order" % (side, lo, *pcts))
        elif is_num(med) and abs(pcts[0] - med) > 1e-6 * med + 1e-9:
            errs.append("%s_p50_ms %g is not %s_median_ms %g" % (side, pcts[0], side, med))
    i, c, r = obj.get("interp_median_ms"), obj.get("compiled_median_ms"), obj.get("ratio")
    if all(is_num(x) and x > 0 for x in (i, c, r)) and abs(i / c - r) > 0.01 * r + 1e-3:
        errs.append("ratio %g is not interp_median_ms / compiled_median_ms = %g" % (r, i / c))
    if is_num(obj.get("first_result_ms")) and is_num(obj.get("init_ms")) and obj["init_ms"] > obj["first_result_ms"]:
        errs.append("init_ms %g above first_result_ms %g" % (obj["init_ms"], obj["first_result_ms"]))
    return errs


def main():
    cmd = sys.argv[1:]
    if not cmd or "--json" not in cmd:
        print("usage: check_bench_json.py TSAOT-BENCH MODEL.pt in0.npy ... --json [options]", file=sys.stderr)
        return 2
    want_threads = int(cmd[cmd.index("--threads") + 1]) if "--threads" in cmd[:-1] else 1
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=600)
    sys.stderr.write(p.stderr)
    if p.returncode != 0:
        print("bench.json: %s exited with %d" % (cmd[0], p.returncode))
        return 1
    lines = [ln for ln in p.stdout.splitlines() if ln.strip()]
    if len(lines) != 1:
        print("bench.json: expected one line of JSON on stdout, got %d:\n%s" % (len(lines), p.stdout))
        return 1
    try:
        obj = json.loads(lines[0])
    except ValueError as e:
        print("bench.json: stdout is not JSON (%s):\n%s" % (e, lines[0]))
        return 1
    if not isinstance(obj, dict):
        print("bench.json: expected a JSON object, got %s" % type(obj).__name__)
        return 1
    errs = check(obj, want_threads)
    for e in errs:
        print("bench.json: " + e)
    if errs:
        print(lines[0])
        return 1
    print("bench.json: %d fields, all sane (compiled %.4f ms, interpreter %.4f ms, %d iterations)" % (
        len(obj), obj["compiled_median_ms"], obj["interp_median_ms"], obj["iters"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
