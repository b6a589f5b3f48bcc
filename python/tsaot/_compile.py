"""tsaot.compile: the `tsaot` compiler run on a .pt, example values written
to temporary .npy files."""
import os
import shutil
import subprocess
import sys
import tempfile
import warnings

from ._args import Error


class CompileWarning(UserWarning):
    """A warning the compiler printed (operators without a kernel, ...)."""


def find_compiler(tsaot=None):
    """The tsaot executable: `tsaot` if given, else $TSAOT, else bin/tsaot
    of the prefix this package is installed under (PREFIX/lib/python3/
    dist-packages/tsaot, PREFIX/lib/pythonX.Y/site-packages/tsaot), else
    tsaot on PATH."""
    if tsaot:
        return tsaot
    if os.environ.get("TSAOT"):
        return os.environ["TSAOT"]
    here = os.path.dirname(os.path.abspath(__file__))
    up = here
    for _ in range(5):
        up = os.path.dirname(up)
        cand = os.path.join(up, "bin", "tsaot")
        if os.path.isfile(cand) and os.access(cand, os.X_OK):
            return cand
    found = shutil.which("tsaot")
    if found:
        return found
    raise Error("the tsaot compiler was not found: give compile(..., tsaot=PATH), set TSAOT, or put it on PATH")


def _example_words(v, tmp, count):
    """tsaot's words for one example value: X.npy, none, str:TEXT, [ ... ],
    ( ... ); a list of numbers is one 1-d array (a List[int]/List[float]
    argument)."""
    import numpy as np
    if v is None:
        return ["none"]
    if isinstance(v, str):
        return ["str:" + v]
    if isinstance(v, tuple):
        return ["("] + [w for e in v for w in _example_words(e, tmp, count)] + [")"]
    if isinstance(v, list) and not (v and all(isinstance(e, (int, float)) for e in v)):
        return ["["] + [w for e in v for w in _example_words(e, tmp, count)] + ["]"]
    if isinstance(v, bool):
        a = np.array(v)
    elif isinstance(v, int):
        a = np.array(v, dtype=np.int64)
    elif isinstance(v, float):
        a = np.array(v, dtype=np.float64)
    elif isinstance(v, list):
        kind = bool if all(isinstance(e, bool) for e in v) else np.int64 if all(
            isinstance(e, int) for e in v) else np.float64
        a = np.array(v, dtype=kind)
    elif type(v).__module__ == "torch" and hasattr(v, "detach"):
        if str(v.dtype) == "torch.bfloat16":
            raise Error("example %d is bfloat16, which a .npy file cannot hold: give its spec with input= instead"
                        % count[0])
        a = v.detach().cpu().resolve_conj().resolve_neg().numpy()
    elif hasattr(v, "__dlpack__") and not isinstance(v, np.ndarray):
        a = np.from_dlpack(v)
    else:
        a = np.asarray(v)
    path = os.path.join(tmp, "example%d.npy" % count[0])
    count[0] += 1
    np.save(path, a)
    return [path]


def _input_words(v):
    """tsaot's words for one input spec: a spec text (split at spaces, so
    "[ f32[2] f32[3] ]" is one list), None, or a list or tuple of specs."""
    if v is None:
        return ["none"]
    if isinstance(v, tuple):
        return ["("] + [w for e in v for w in _input_words(e)] + [")"]
    if isinstance(v, list):
        return ["["] + [w for e in v for w in _input_words(e)] + ["]"]
    return str(v).split()


def _option_words(key, value):
    if key in ("O", "opt_level"):
        return ["-O%d" % int(value)]
    flag = "--" + key.replace("_", "-")
    if value is True:
        return [flag]
    if value is False or value is None:
        return []
    if isinstance(value, (list, tuple)):
        return [w for v in value for w in (flag, str(v))]
    return [flag, str(value)]


def compile(model, output, example=None, input=None, tsaot=None, **options):
    """Compiles MODEL (a .pt torch.jit.save wrote) to OUTPUT: a shared
    library, or an object and header when OUTPUT ends in ".o". Returns
    OUTPUT.

    example: forward's arguments after self, to specialise the code to:
      numpy arrays, torch tensors, Python numbers, None, str, lists and
      tuples of them (a list of numbers is one List[int]/List[float]).
    input: spec texts instead ("f32[1,3,224,224]", "i64[]", "f32[N,3]",
      None, lists and tuples of them).
    options: tsaot's options by name: name="m" (--name m), opt_level=2
      (-O2), no_fallback=True, strict=True, device="cuda", cpu="native",
      time_limit=60, ...: True gives the flag alone, a list repeats it.
    tsaot: the compiler (else find_compiler()).

    Raises tsaot.Error with the compiler's message when it fails; its
    warnings become CompileWarning, and with verbose=True its report goes
    to sys.stderr."""
    if example is not None and input is not None:
        raise Error("give example= or input=, not both")
    # one argument given bare, not in a list
    if example is not None and not isinstance(example, (list, tuple)):
        example = [example]
    if isinstance(input, str):
        input = [input]
    exe = find_compiler(tsaot)
    cmd = [exe, os.fspath(model), "-o", os.fspath(output)]
    if str(output).endswith(".o"):
        cmd.append("-c")
    verbose = bool(options.get("verbose"))
    for k, v in options.items():
        cmd += _option_words(k, v)
    with tempfile.TemporaryDirectory(prefix="tsaot-") as tmp:
        if example is not None:
            count = [0]
            cmd.append("--example")
            for v in example:
                cmd += _example_words(v, tmp, count)
        if input is not None:
            for v in input:
                cmd += ["--input"] + _input_words(v)
        try:
            p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        except OSError as e:
            raise Error("cannot run %s: %s" % (exe, e)) from None
    text = p.stderr.decode("utf-8", "replace")
    if p.returncode != 0:
        msg = text.strip() or "%s exited with status %d" % (exe, p.returncode)
        raise Error(msg, msg)
    if verbose:
        sys.stderr.write(text)
    else:
        for line in text.splitlines():
            if "warning:" in line:
                warnings.warn(line, CompileWarning, stacklevel=2)
    return os.fspath(output)
