#!/usr/bin/python3
"""Every hostile file through the compiler itself (ctest hostile.cli).

    hostile_cli.py TSAOT HOSTILE_DIR [--sanitized]

HOSTILE_DIR is tests/fixtures/hostile (written by
tests/fixtures/make_hostile.py). Each *.pt there and in compile/ is compiled
with `tsaot FILE -o OUT.so`; each compile/*.npy as an example input of
compile/ok_relu.pt (`tsaot compile/ok_relu.pt --example FILE.npy -o OUT.so`).
A hostile file must end with:
  - exit status exactly 1 (not a crash, not a usage error);
  - stderr of exactly one line holding "error:", optionally followed by the
    source excerpt and caret lines of the project's diagnostic format;
  - no OUT.so written;
  - within TIME_LIMIT seconds (ten times that with --sanitized) of CPU time
    (user + system), and within WALL_SCALE times that of wall time in one of
    up to three runs: wall time only guards against a hang or a sleep, since
    on a busy machine (CI, a 2-core box running other builds) the time a run
    waits for a core is not the compiler's;
  - within MEMORY_LIMIT_MIB of peak resident memory (not checked with
    --sanitized: ASan's shadow memory counts there).
Files named ok_* must compile instead (exit status 0), within the same
memory bound and OK_TIME_LIMIT (they run LLVM and the linker).
Every failure is printed with the file, what went wrong and the stderr seen.
"""
import os
import subprocess
import sys
import tempfile
import time

TIME_LIMIT = 1.0
OK_TIME_LIMIT = 10.0
MEMORY_LIMIT_MIB = 512
SANITIZED_SCALE = 10
WALL_SCALE = 20


def run(cmd):
    """(exit status, stderr text, wall seconds, CPU seconds, peak RSS in MiB) of one run."""
    t0 = time.monotonic()
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    err = p.stderr.read()
    _, status, usage = os.wait4(p.pid, 0)
    wall = time.monotonic() - t0
    p.stderr.close()
    p.returncode = os.waitstatus_to_exitcode(status)
    return (p.returncode, err.decode("utf-8", "replace"), wall, usage.ru_utime + usage.ru_stime,
            usage.ru_maxrss / 1024.0)


def one_reason(err):
    """None if stderr is one error line (plus a source excerpt and caret), else why not."""
    lines = err.splitlines()
    if not lines:
        return "nothing on stderr"
    if "error:" not in lines[0]:
        return "the first line does not say 'error:'"
    if len(lines) == 1:
        return None
    if len(lines) == 3 and lines[2].strip() == "^" and "error:" not in lines[1]:
        return None
    return "%d lines on stderr (one error line, or one with its source excerpt and caret)" % len(lines)


def check(label, cmd, out, expect_ok, sanitized):
    """Runs cmd; a list of failure messages."""
    limit = (OK_TIME_LIMIT if expect_ok else TIME_LIMIT) * (SANITIZED_SCALE if sanitized else 1)
    wall_limit = limit * WALL_SCALE
    rc, err, wall, cpu, rss = run(cmd)
    for _ in range(2):
        if wall <= wall_limit or cpu > limit or rc not in (0, 1):
            break
        if os.path.exists(out):
            os.unlink(out)
        again = run(cmd)
        if again[2] < wall:
            rc, err, wall, cpu, rss = again
    bad = []
    if expect_ok:
        if rc != 0:
            bad.append("exit status %d, expected 0" % rc)
    else:
        if rc != 1:
            bad.append("exit status %d, expected 1" % rc)
        why = one_reason(err)
        if why:
            bad.append(why)
        if os.path.exists(out):
            bad.append("%s was written" % os.path.basename(out))
    if cpu > limit:
        bad.append("took %.2f s of CPU time, limit %.1f s" % (cpu, limit))
    elif wall > wall_limit:
        bad.append("took %.2f s (%.2f s of CPU time) in each of three runs, wall limit %.1f s" % (wall, cpu, wall_limit))
    if not sanitized and rss > MEMORY_LIMIT_MIB:
        bad.append("peak memory %.0f MiB, limit %d MiB" % (rss, MEMORY_LIMIT_MIB))
    if os.path.exists(out):
        os.unlink(out)
    msgs = ["%s: %s" % (label, b) for b in bad]
    if msgs:
        msgs.append("  stderr: " + (err.rstrip().replace("\n", "\n          ")[:2000] or "(empty)"))
    print("%-40s rc=%d %.3f s (CPU %.3f s) %5.0f MiB%s" % (label, rc, wall, cpu, rss, "  FAIL" if bad else ""))
    return msgs


def main(argv):
    if len(argv) < 3:
        sys.stderr.write(__doc__)
        return 2
    tsaot, root = argv[1], argv[2]
    sanitized = "--sanitized" in argv[3:]
    cdir = os.path.join(root, "compile")
    cases = []
    for d, rel in ((root, ""), (cdir, "compile/")):
        for name in sorted(os.listdir(d)):
            path = os.path.join(d, name)
            if name.endswith(".pt"):
                cases.append((rel + name, [path], name.startswith("ok_")))
            elif name.endswith(".npy"):
                cases.append((rel + name, [os.path.join(cdir, "ok_relu.pt"), "--example", path], False))
    failures = []
    with tempfile.TemporaryDirectory(prefix="tsaot-hostile-") as tmp:
        out = os.path.join(tmp, "out.so")
        for label, args, ok in cases:
            failures += check(label, [tsaot] + args + ["-o", out], out, ok, sanitized)
    nbad = sum(1 for f in failures if not f.startswith("  "))
    if len(cases) < 40:
        failures.append("only %d files in %s and compile/ (make_hostile.py writes more)" % (len(cases), root))
    if failures:
        print("\n".join(failures))
        print("hostile.cli: %d problems in %d files" % (nbad, len(cases)))
        return 1
    print("hostile.cli: %d files, each rejected (or, ok_*, compiled) within bounds" % len(cases))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
