#!/usr/bin/env python3
"""bench/bench.py: tsaot against libtorch over a set of models (bench/run runs it).

    bench/bench.py --build BUILD [--torch-bench PATH] [--zoo DIR]... [--threads "1 2"]
                   [--iters N] [--warmup N] [--quick] [--no-fixtures] [--all-fixtures]
                   [--cases SUBSTR,...] [--out DIR]
    bench/bench.py --table RESULTS.json [--out DIR]     (only rewrite the table and plot)

For each case (the project's fixtures with inputs and PyTorch's outputs, and
every folder of cases in the ../shared/zoo layout) and each thread count it
runs BUILD/tsaot-bench --json (compiling once per case; later thread counts
reuse the library with --compiled) and torch_bench --json, plain and with
--optimize. It writes OUT/latest.json (every raw number), OUT/latest.md (the
table, also printed) and, where gnuplot is installed, OUT/ratios.png (the
speedups). Progress goes to stderr. Python 3 standard library only.
"""
import argparse
import datetime
import json
import math
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)

# Frontend fixtures that tsaot cannot compile yet (tests/runtime.cmake skips
# them too); the other fe_* fixtures are frontend coverage, not workloads,
# and run only with --all-fixtures.
UNSUPPORTED_FIXTURES = {"fe_classes", "fe_functions"}

STEP_TIMEOUT_S = 600


def log(msg):
    print(msg, file=sys.stderr, flush=True)


# ------------------------------------------------------------------ cases

def case_inputs(d):
    """in0.npy, in1.npy ... of a case folder, in argument order."""
    ins = []
    while os.path.exists(os.path.join(d, "in%d.npy" % len(ins))):
        ins.append(os.path.join(d, "in%d.npy" % len(ins)))
    return ins


def find_cases(fixtures_dir, zoo_dirs, all_fixtures):
    """[(label, folder)]: fixtures with model.pt, inputs and out0.npy, then each zoo's cases."""
    cases = []
    if fixtures_dir and os.path.isdir(fixtures_dir):
        for name in sorted(os.listdir(fixtures_dir)):
            d = os.path.join(fixtures_dir, name)
            if not all(os.path.exists(os.path.join(d, f)) for f in ("model.pt", "in0.npy", "out0.npy")):
                continue
            if name in UNSUPPORTED_FIXTURES or (name.startswith("fe_") and not all_fixtures):
                continue
            cases.append(("fixtures/" + name, d))
    for zoo in zoo_dirs:
        if not os.path.isdir(zoo):
            log("bench: %s: no such folder; skipped" % zoo)
            continue
        tag = os.path.basename(os.path.normpath(zoo))
        for name in sorted(os.listdir(zoo)):
            d = os.path.join(zoo, name)
            if os.path.exists(os.path.join(d, "model.pt")) and case_inputs(d):
                cases.append(("%s/%s" % (tag, name), d))
    return cases


# ---------------------------------------------------------------- running

def run_json(cmd, timeout=STEP_TIMEOUT_S):
    """Runs cmd; (the JSON object of its last '{' line on stdout, None) or (None, why)."""
    t0 = time.monotonic()
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, "timed out after %d s" % timeout
    except OSError as e:
        return None, str(e)
    wall = time.monotonic() - t0
    obj = None
    for line in p.stdout.splitlines():
        line = line.strip()
        if line.startswith("{"):
            try:
                obj = json.loads(line)
            except ValueError:
                pass
    if p.returncode != 0 or obj is None:
        lines = [ln for ln in p.stderr.splitlines() if ln.strip()]
        why = lines[-1].strip() if lines else "exit status %d, no JSON" % p.returncode
        return None, why[:300]
    obj["_wall_s"] = round(wall, 3)
    return obj, None


def bench_case(label, d, threads, args, tmp, step, nsteps):
    """The rows of one case, one per thread count."""
    model, ins = os.path.join(d, "model.pt"), case_inputs(d)
    extra = []
    if args.iters:
        extra += ["--iters", str(args.iters)]
    if args.warmup is not None:
        extra += ["--warmup", str(args.warmup)]
    keep = os.path.join(tmp, label.replace("/", "__"))
    so = os.path.join(keep, "model.so")
    rows, compile_s, compile_err = [], None, None
    for t in threads:
        row = {"case": label, "dir": d, "threads": t}
        head = "[%d/%d] %s, %d thread%s" % (step, nsteps, label, t, "" if t == 1 else "s")
        cmd = [args.tsaot_bench, model] + ins + ["--json", "--threads", str(t)] + extra
        if compile_err:
            row["tsaot"], row["tsaot_error"] = None, compile_err
        else:
            if os.path.exists(so):
                log("%s: tsaot-bench (interpreter and compiled, library reused)" % head)
                cmd += ["--compiled", so]
            else:
                log("%s: tsaot-bench (compiling, then interpreter and compiled)" % head)
                cmd += ["--keep", keep]
            res, err = run_json(cmd)
            if res is not None:
                if res.get("compile_s") is not None:
                    compile_s = res["compile_s"]
                elif compile_s is not None:
                    res["compile_s"] = compile_s
                    res["compile_s_reused"] = True
            elif not os.path.exists(so):
                compile_err = err
            row["tsaot"], row["tsaot_error"] = res, err
            if err:
                log("%s:   tsaot-bench failed: %s" % (head, err))
        for key, opt in (("torch", []), ("torch_opt", ["--optimize"])):
            if not args.torch_bench:
                row[key], row[key + "_error"] = None, "libtorch-dev not installed"
                continue
            log("%s: torch_bench%s" % (head, " --optimize" if opt else ""))
            res, err = run_json([args.torch_bench, d, "--json", "--threads", str(t)] + opt + extra)
            row[key], row[key + "_error"] = res, err
            if err:
                log("%s:   torch_bench%s failed: %s" % (head, " --optimize" if opt else "", err))
        rows.append(row)
    return rows


# ------------------------------------------------------------ the machine

def machine_info(torch_bench):
    info = {"cpu": "unknown", "cores": os.cpu_count(), "kernel": platform.release(),
            "date": datetime.datetime.now().astimezone().isoformat(timespec="seconds")}
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    info["cpu"] = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    try:
        with open("/proc/meminfo") as f:
            kb = int(f.readline().split()[1])
            info["mem_gib"] = round(kb / 1048576, 1)
    except (OSError, ValueError, IndexError):
        pass
    try:
        info["loadavg_start"] = os.getloadavg()[0]
    except OSError:
        pass
    try:
        v = subprocess.run(["dpkg-query", "-W", "-f", "${Version}", "libtorch-dev"], stdout=subprocess.PIPE,
                           stderr=subprocess.DEVNULL, text=True)
        info["libtorch"] = v.stdout.strip() if v.returncode == 0 and v.stdout.strip() else None
    except OSError:
        info["libtorch"] = None
    if not torch_bench:
        info["libtorch"] = None
    try:
        c = subprocess.run(["git", "-C", REPO, "rev-parse", "--short", "HEAD"], stdout=subprocess.PIPE,
                           stderr=subprocess.DEVNULL, text=True)
        s = subprocess.run(["git", "-C", REPO, "status", "--porcelain", "--untracked-files=no"],
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        if c.returncode == 0:
            info["commit"] = c.stdout.strip() + ("+changes" if s.stdout.strip() else "")
    except OSError:
        pass
    return info


# ------------------------------------------------------------ the table

def g(obj, key):
    """obj[key] as a float, None when absent, null or not a positive number where one is expected."""
    if not obj:
        return None
    v = obj.get(key)
    if isinstance(v, bool) or not isinstance(v, (int, float)) or math.isnan(v):
        return None
    return float(v)


def fmt_ms(v):
    """Three significant digits, never an exponent (0.000812, 0.0345, 2.31, 123)."""
    if v is None:
        return "n/a"
    if v >= 100:
        return "%.0f" % v
    digits = 2 - math.floor(math.log10(v)) if v > 0 else 3
    return "%.*f" % (max(0, min(digits, 9)), v)


def fmt_x(v):
    return "n/a" if v is None else "%.2fx" % v


def fmt_bytes(v):
    if v is None:
        return "n/a"
    if v < 1024:
        return "%d B" % v
    if v < 1048576:
        return "%.1f KiB" % (v / 1024)
    return "%.1f MiB" % (v / 1048576)


def fmt_mib(v):
    return "n/a" if v is None else "%.0f" % (v / 1048576)


def speedup(num, den):
    return num / den if num is not None and den else None


def row_speedups(r):
    c = g(r.get("tsaot"), "compiled_median_ms")
    return (speedup(g(r.get("torch"), "median_ms"), c), speedup(g(r.get("torch_opt"), "median_ms"), c))


def row_notes(r):
    notes = []
    ts = r.get("tsaot")
    if r.get("tsaot_error"):
        notes.append("tsaot: " + r["tsaot_error"])
    if ts:
        if ts.get("bailout"):
            notes.append("bailout (ran in its interpreter)")
        d = g(ts, "max_abs_diff")
        if d is not None and d > 1e-4:
            notes.append("max diff %.2g" % d)
    # a median far above the minimum: runs waited (a loaded machine, a pool
    # thread descheduled); such a row says little
    for obj, med, lo, name in ((ts, "interp_median_ms", "interp_min_ms", "interp"),
                               (ts, "compiled_median_ms", "compiled_min_ms", "compiled"),
                               (r.get("torch"), "median_ms", "min_ms", "libtorch"),
                               (r.get("torch_opt"), "median_ms", "min_ms", "libtorch opt")):
        m, lo_v = g(obj, med), g(obj, lo)
        if m and lo_v and m > 3 * lo_v:
            notes.append("noisy: %s median %.0fx its min %s ms" % (name, m / lo_v, fmt_ms(lo_v)))
    for key, name in (("torch_error", "libtorch"), ("torch_opt_error", "libtorch opt")):
        e = r.get(key)
        if e and e != "libtorch-dev not installed":
            notes.append("%s: %s" % (name, e))
    return "; ".join(n.replace("|", "/") for n in notes)


def write_table(res):
    """The markdown text of a results object (as latest.json holds it)."""
    m = res.get("machine", {})
    out = []
    out.append("# tsaot benchmarks")
    out.append("")
    out.append("- machine: %s, %s cores%s, Linux %s" % (
        m.get("cpu", "unknown"), m.get("cores", "?"),
        ", %s GiB" % m["mem_gib"] if m.get("mem_gib") else "", m.get("kernel", "?")))
    out.append("- date: %s; tsaot %s" % (m.get("date", "?"), m.get("commit", "?")))
    tv = m.get("libtorch")
    out.append("- libtorch: %s" % (("Debian libtorch-dev " + tv) if tv else "n/a (libtorch-dev not installed)"))
    s = res.get("settings", {})
    iters = "iterations: %s" % (s.get("iters") or "adaptive (about 1 s per side, at least 5)")
    la = [m.get("loadavg_start"), m.get("loadavg_end")]
    load = ", load average %s" % " -> ".join("%.2f" % x for x in la if x is not None) if any(
        x is not None for x in la) else ""
    out.append("- %s, warm-up %s%s" % (iters, s.get("warmup") if s.get("warmup") is not None else 3, load))
    out.append("")
    out.append("Times are medians of the timed runs, in ms. *vs libtorch* is libtorch's median over the "
               "compiled model's (above 1: tsaot is faster); *opt* is libtorch after "
               "`torch::jit::optimize_for_inference`. First result and peak RSS are of a fresh process that "
               "loads the model and runs it once (tsaot: the compiled library; libtorch: torch::jit::load).")
    out.append("")
    hdr = ["case", "thr", "interp", "compiled", "libtorch", "libtorch opt", "vs libtorch", "vs opt",
           "compile s", "arena", "first result ms (tsaot / libtorch)", "peak RSS MiB (tsaot / libtorch)", "notes"]
    out.append("| " + " | ".join(hdr) + " |")
    out.append("|" + "|".join(["---"] + ["---:"] * (len(hdr) - 2) + ["---"]) + "|")
    for r in res.get("rows", []):
        ts, tt, to = r.get("tsaot"), r.get("torch"), r.get("torch_opt")
        vs, vso = row_speedups(r)
        comp = g(ts, "compile_s")
        cells = [
            r.get("case", "?"), str(r.get("threads", "?")),
            fmt_ms(g(ts, "interp_median_ms")), fmt_ms(g(ts, "compiled_median_ms")),
            fmt_ms(g(tt, "median_ms")), fmt_ms(g(to, "median_ms")),
            fmt_x(vs), fmt_x(vso),
            "n/a" if comp is None else "%.2f" % comp,
            fmt_bytes(g(ts, "arena_bytes")),
            "%s / %s" % (fmt_ms(g(ts, "first_result_ms")), fmt_ms(g(tt, "first_result_ms"))),
            "%s / %s" % (fmt_mib(g(ts, "peak_rss_bytes")), fmt_mib(g(tt, "peak_rss_bytes"))),
            row_notes(r),
        ]
        out.append("| " + " | ".join(cells) + " |")
    # bandwidth says something for the memory-bound cases only; latest.json has it for every case
    bw = [r for r in res.get("rows", []) if g(r.get("tsaot"), "achieved_gbps") is not None and
          "elementwise" in r.get("case", "")]
    if bw:
        out.append("")
        out.append("Bandwidth of the compiled elementwise models: their inputs' and outputs' bytes per run over "
                   "the median time, against a memcpy of buffers of the same size in the same process.")
        out.append("")
        for r in bw:
            ts = r["tsaot"]
            a, c = g(ts, "achieved_gbps"), g(ts, "copy_gbps")
            out.append("- %s, %d thread%s: %s per run, %.2f GB/s%s" % (
                r["case"], r["threads"], "" if r["threads"] == 1 else "s", fmt_bytes(g(ts, "bytes_moved")), a,
                " (memcpy %.2f GB/s, %.0f%%)" % (c, 100 * a / c) if c else ""))
    geo = []
    for t in res.get("settings", {}).get("threads", []):
        for idx, name in ((0, "libtorch"), (1, "libtorch opt")):
            v = [row_speedups(r)[idx] for r in res.get("rows", []) if r.get("threads") == t]
            v = [x for x in v if x]
            if v:
                geo.append("%s, %d thread%s: %.2fx over %d case%s" % (
                    name, t, "" if t == 1 else "s", math.exp(sum(math.log(x) for x in v) / len(v)), len(v),
                    "" if len(v) == 1 else "s"))
    if geo:
        out.append("")
        out.append("Geometric mean speedup of the compiled model: " + "; ".join(geo) + ".")
    return "\n".join(out) + "\n"


# -------------------------------------------------------------- the plot

def write_plot(res, outdir):
    """OUT/ratios.png with gnuplot; the reason when there is none."""
    rows = [r for r in res.get("rows", []) if any(row_speedups(r))]
    if not rows:
        return "no speedups to plot (no libtorch numbers)"
    gp = shutil.which("gnuplot")
    if not gp:
        return "gnuplot not installed (apt-get install gnuplot-nox); no plot"
    dat = os.path.join(outdir, "ratios.dat")
    # tab-separated: the labels hold spaces
    with open(dat, "w") as f:
        f.write("# case (threads)\tvs libtorch\tvs libtorch optimized\n")
        for r in rows:
            vs, vso = row_speedups(r)
            f.write("%s (%d)\t%s\t%s\n" % (r["case"], r["threads"],
                                           "%.4f" % vs if vs else "?", "%.4f" % vso if vso else "?"))
    png = os.path.join(outdir, "ratios.png")
    width = max(900, 45 * len(rows) + 200)
    script = "\n".join([
        "set terminal png size %d,650 font ',10' noenhanced" % width,
        "set output '%s'" % png.replace("'", "''"),
        "set title 'tsaot compiled model: speedup over libtorch (median latency; threads in parentheses)'",
        "set datafile separator '\t'",
        "set datafile missing '?'",
        "set style data histograms",
        "set style histogram clustered gap 1",
        "set style fill solid 0.8 border -1",
        "set boxwidth 0.9",
        "set logscale y 2",
        "set yrange [0.03:*]",
        "set xrange [-0.7:%g]" % (len(rows) - 0.3),
        "set ylabel 'libtorch median / compiled median (log scale; above 1: tsaot faster)'",
        "set xtics rotate by -45 scale 0",
        "set grid ytics",
        "set key top left",
        "plot '%s' using 2:xtic(1) title 'vs libtorch', '' using 3 title 'vs libtorch optimize_for_inference', "
        "1 with lines lw 2 lc rgb 'black' notitle" % dat.replace("'", "''"),
        "",
    ])
    p = subprocess.run([gp], input=script, text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if p.returncode != 0 or not os.path.exists(png):
        return "gnuplot failed: %s" % (p.stderr.strip().splitlines() or ["?"])[-1]
    return None


def write_outputs(res, outdir, write_json=True):
    os.makedirs(outdir, exist_ok=True)
    if write_json:
        with open(os.path.join(outdir, "latest.json"), "w") as f:
            json.dump(res, f, indent=1, sort_keys=True)
            f.write("\n")
    md = write_table(res)
    with open(os.path.join(outdir, "latest.md"), "w") as f:
        f.write(md)
    sys.stdout.write(md)
    sys.stdout.flush()
    why = write_plot(res, outdir)
    log("bench: %s" % (why if why else "wrote " + os.path.join(outdir, "ratios.png")))
    log("bench: wrote %s" % ", ".join(os.path.join(outdir, n) for n in (
        ["latest.json"] if write_json else []) + ["latest.md"]))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0], formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--build", default=os.path.join(REPO, "build"), help="the build folder with tsaot-bench")
    ap.add_argument("--torch-bench", default=None, help="the torch_bench program (none: no libtorch columns)")
    ap.add_argument("--zoo", action="append", default=None,
                    help="a folder of cases in the ../shared/zoo layout (repeatable; default ../shared/zoo)")
    ap.add_argument("--no-zoo", action="store_true", help="the project's fixtures only")
    ap.add_argument("--fixtures", default=os.path.join(REPO, "tests", "fixtures"))
    ap.add_argument("--no-fixtures", action="store_true", help="the zoo only")
    ap.add_argument("--all-fixtures", action="store_true", help="also the frontend fixtures (fe_*)")
    ap.add_argument("--cases", default=None, help="comma-separated substrings: only the cases naming one")
    ap.add_argument("--threads", default="1 2", help='thread counts, e.g. "1 2" (default)')
    ap.add_argument("--iters", type=int, default=None, help="timed runs per side (default: adaptive, ~1 s)")
    ap.add_argument("--warmup", type=int, default=None, help="warm-up runs per side (default 3)")
    ap.add_argument("--quick", action="store_true", help="5 timed runs per side (warm-up stays 3)")
    ap.add_argument("--out", default=os.path.join(HERE, "results"), help="where latest.{md,json} go")
    ap.add_argument("--table", metavar="RESULTS.json", help="only write the table and plot of these results")
    args = ap.parse_args()

    if args.table:
        try:
            with open(args.table) as f:
                res = json.load(f)
        except (OSError, ValueError) as e:
            log("bench: %s: %s" % (args.table, e))
            return 1
        write_outputs(res, args.out, write_json=False)
        return 0

    try:
        threads = [int(t) for t in args.threads.replace(",", " ").split()]
        if not threads or min(threads) < 1:
            raise ValueError
    except ValueError:
        log("bench: --threads: expected thread counts like \"1 2\", got %r" % args.threads)
        return 2
    # libtorch's first runs profile and optimize the graph and, with threads,
    # start the pool: fewer than 3 warm-up runs time those
    if args.quick:
        args.iters = args.iters or 5
    args.tsaot_bench = os.path.join(args.build, "tsaot-bench")
    if not os.access(args.tsaot_bench, os.X_OK):
        log("bench: %s not found (build the project first: bash bench/run builds it)" % args.tsaot_bench)
        return 1
    if args.torch_bench in (None, "", "none") or not os.access(args.torch_bench, os.X_OK):
        if args.torch_bench not in (None, "", "none"):
            log("bench: %s not found; no libtorch columns" % args.torch_bench)
        args.torch_bench = None
    zoos = [] if args.no_zoo else (args.zoo if args.zoo is not None else
                                   [p for p in [os.path.join(os.path.dirname(REPO), "shared", "zoo")]
                                    if os.path.isdir(p)])
    cases = find_cases(None if args.no_fixtures else args.fixtures, zoos, args.all_fixtures)
    if args.cases:
        subs = [s for s in args.cases.split(",") if s]
        cases = [c for c in cases if any(s in c[0] for s in subs)]
    if not cases:
        log("bench: no cases")
        return 1

    machine = machine_info(args.torch_bench)
    log("bench: %d case(s) x threads %s on %s (%s cores)%s" % (
        len(cases), " ".join(map(str, threads)), machine["cpu"], machine["cores"],
        "" if args.torch_bench else "; libtorch: n/a"))
    t0 = time.monotonic()
    rows = []
    with tempfile.TemporaryDirectory(prefix="tsaot-bench-") as tmp:
        for i, (label, d) in enumerate(cases, 1):
            rows += bench_case(label, d, threads, args, tmp, i, len(cases))
    try:
        machine["loadavg_end"] = os.getloadavg()[0]
    except OSError:
        pass
    res = {
        "machine": machine,
        "settings": {"threads": threads, "iters": args.iters, "warmup": args.warmup, "zoo": zoos,
                     "fixtures": None if args.no_fixtures else args.fixtures, "build": args.build,
                     "torch_bench": args.torch_bench, "wall_s": round(time.monotonic() - t0, 1)},
        "rows": rows,
    }
    write_outputs(res, args.out)
    log("bench: %d rows in %.0f s" % (len(rows), time.monotonic() - t0))
    return 0


if __name__ == "__main__":
    sys.exit(main())
