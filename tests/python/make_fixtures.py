#!/usr/bin/python3
"""Makes tests/python/fixtures/: models called in two forms each, with
PyTorch's outputs (ctest python.package, test_package.py):
  kinds/    forward takes an argument of every kind the C ABI passes
            (include/tsaot.h's slots) and returns its input, views of it and
            values of several dtypes
  inplace/  forward adds into its second argument in place (PyTorch writes
            the caller's tensor: so must a library given the caller's memory)
  dtypes/   forward returns its input transposed, or as bfloat16 (saved as
            float32, which numpy's .npy can hold), for each dtype of the ABI
  unbind/   forward returns a list as long as its input's first size (a
            count of outputs only a run knows)

Run with Debian's PyTorch 1.13: /usr/bin/python3 tests/python/make_fixtures.py

It writes tests/python/fixtures/CASE/:
  model.pt        torch.jit.save of the scripted module
  forms.json      {form: [argument, ...]}: each argument of forward after
                  self as JSON: a number, true/false, a string, null (None),
                  a list, {"npy": "FORM/inK.npy"} (an array) or
                  {"tuple": [...]}
  FORM/in*.npy    the arrays forms.json names
  FORM/out*.npy   what torch.jit.load(model.pt)(*args) returned, flattened
                  depth-first as tsaot-run writes outputs
  FORM/after*.npy each in*.npy as the call left it

The models are compiled from a source string under the file name
"python_models.py", so the archives do not depend on where the checkout
is; the seed is fixed, so a rerun with the same PyTorch gives the same
files.
"""
import json
import linecache
import os
import shutil
import sys
import types

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "fixtures")

try:
    import numpy as np
    import torch
except ImportError as e:  # pragma: no cover
    sys.exit("make_fixtures.py: %s; run it with /usr/bin/python3 after "
             "'apt-get install python3-torch python3-numpy'" % e)

SOURCE = '''
from typing import List, Optional, Tuple

import torch


class Kinds(torch.nn.Module):
    def forward(self, x: torch.Tensor, mask: Optional[torch.Tensor], n: int, scale: float, flag: bool,
                sizes: List[int], xs: List[torch.Tensor], name: str, pair: Tuple[torch.Tensor, torch.Tensor]):
        y = x * scale + n
        if mask is not None:
            y = y.masked_fill(mask, 0.0)
        if flag:
            y = torch.relu(y)
        if name == "négatif":
            y = -y
        total = pair[0] + pair[1]
        for t in xs:
            total = total + t.sum()
        return x, x.t(), x[1:], y.reshape(sizes), total, y > 0, n + len(xs)


class Unbind(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> List[torch.Tensor]:
        return x.unbind(0)


class Dtypes(torch.nn.Module):
    def forward(self, x: torch.Tensor, bf16: bool):
        if bf16:
            return x.to(torch.bfloat16).t()
        return x.t()


class InPlace(torch.nn.Module):
    def forward(self, x: torch.Tensor, acc: torch.Tensor):
        acc.add_(x)
        return acc * 2
'''


def load_models():
    """Compiles SOURCE as the module python_models (file "python_models.py")."""
    name = "python_models"
    linecache.cache[name + ".py"] = (len(SOURCE), None, SOURCE.splitlines(True), name + ".py")
    mod = types.ModuleType(name)
    mod.__file__ = name + ".py"
    sys.modules[name] = mod
    exec(compile(SOURCE, name + ".py", "exec"), mod.__dict__)
    return mod


def flatten(v, out):
    """A forward's result flattened depth-first (tsaot-run's outputs)."""
    if isinstance(v, (tuple, list)):
        for e in v:
            flatten(e, out)
    elif isinstance(v, torch.Tensor):
        out.append(v.detach().float().numpy() if v.dtype == torch.bfloat16 else v.detach().numpy())
    elif isinstance(v, bool):
        out.append(np.array(v))
    elif isinstance(v, int):
        out.append(np.array(v, dtype=np.int64))
    elif isinstance(v, float):
        out.append(np.array(v, dtype=np.float64))
    elif v is not None:
        raise TypeError("cannot flatten %r" % (v,))
    return out


def make_case(case, model, forms):
    d0 = os.path.join(OUT, case)
    os.makedirs(d0)
    m = torch.jit.script(model.eval())
    path = os.path.join(d0, "model.pt")
    torch.jit.save(m, path)
    m = torch.jit.load(path)
    described = {}
    for form, args in forms.items():
        d = os.path.join(d0, form)
        os.makedirs(d)
        tensors = []

        def describe(a):
            if isinstance(a, torch.Tensor):
                fn = "in%d.npy" % len(tensors)
                tensors.append(a)
                np.save(os.path.join(d, fn), a.numpy())
                return {"npy": form + "/" + fn}
            if isinstance(a, tuple):
                return {"tuple": [describe(e) for e in a]}
            if isinstance(a, list):
                return [describe(e) for e in a]
            return a

        described[form] = [describe(a) for a in args]
        outs = flatten(m(*args), [])
        for i, o in enumerate(outs):
            np.save(os.path.join(d, "out%d.npy" % i), o)
        for i, t in enumerate(tensors):
            np.save(os.path.join(d, "after%d.npy" % i), t.numpy())
    with open(os.path.join(d0, "forms.json"), "w", encoding="utf-8") as f:
        f.write("{\n%s\n}\n" % ",\n".join(" %s: %s" % (json.dumps(k), json.dumps(v, ensure_ascii=False))
                                          for k, v in sorted(described.items())))


def main():
    torch.manual_seed(0)
    mod = load_models()
    shutil.rmtree(OUT, ignore_errors=True)
    r = lambda *s: torch.randn(*s)
    make_case("kinds", mod.Kinds(), {
        # every argument given; a mask, relu, a two-element list, the str
        # branch taken (not ASCII)
        "full": [r(3, 4), torch.rand(3, 4) > 0.5, 2, 0.5, True, [4, 3], [r(2), r(3)], "négatif", (r(3, 4), r(4))],
        # None for the mask, no relu, an empty list, the other branch
        "other": [r(3, 4), None, -1, 2.0, False, [12], [], "positif", (r(3, 4), r(3, 4))],
    })
    make_case("inplace", mod.InPlace(), {
        "same": [r(3, 4), r(3, 4)],
        # x broadcast into acc
        "bcast": [r(4), r(2, 4)],
    })
    make_case("unbind", mod.Unbind(), {"many": [r(12, 3)], "few": [r(2, 3)]})
    x = r(3, 2) * 10
    dtypes = {str(dt).replace("torch.", ""): [x.to(dt), False] for dt in (
        torch.float16, torch.float32, torch.float64, torch.int8, torch.uint8, torch.int16, torch.int32, torch.int64,
        torch.bool)}
    dtypes.update({str(dt).replace("torch.", ""): [torch.complex(x, -x).to(dt), False] for dt in (
        torch.complex64, torch.complex128)})
    dtypes["bfloat16"] = [x, True]
    make_case("dtypes", mod.Dtypes(), dtypes)


if __name__ == "__main__":
    main()
