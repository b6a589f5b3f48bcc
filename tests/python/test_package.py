#!/usr/bin/python3
"""The Python package (python/tsaot) on the project's fixtures, against
PyTorch's outputs (ctest python.package).

  PYTHONPATH=python TSAOT=build/tsaot /usr/bin/python3 tests/python/test_package.py [-v] [TEST ...]

Compiles with tsaot.compile, runs with tsaot.load on numpy arrays, Python
values and (where torch imports) torch tensors, and checks:
  - outputs equal PyTorch's (tests/fixtures/*/out*.npy, the abi/ cases with
    their arguments as Python numbers, lists, str, None and tuples, and
    tests/python/fixtures, made by make_fixtures.py);
  - zero-copy: each numpy output's data is the DLTensor the library made
    (the array's base owns it), each torch output's data_ptr is too; inputs
    are the caller's memory: a model adding into its argument in place
    writes the caller's array, strided view or tensor, as PyTorch does;
  - every dtype of the ABI in and out (bfloat16 through torch only);
  - specs and names (m.inputs, m.outputs), keyword arguments, set_threads,
    runs from four threads at once, a count of outputs only a run knows;
  - errors: wrong dtype, shape and count, values of the wrong type, a model
    that raises, a compiler that fails: tsaot.Error with the message.
Exit status 77 (skipped) when numpy is missing; without torch its tests
are skipped.
"""
import gc
import json
import os
import shutil
import sys
import tempfile
import unittest
import warnings
import weakref

try:
    import numpy as np
except ImportError:
    print("numpy is missing (apt-get install python3-numpy): skipped")
    sys.exit(77)

try:
    import torch
except ImportError:
    torch = None

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
FIX = os.path.join(ROOT, "tests", "fixtures")
PYFIX = os.path.join(HERE, "fixtures")

import tsaot  # noqa: E402
from tsaot import _model  # noqa: E402

WORK = tempfile.mkdtemp(prefix="tsaot-python-")


def numbered(d, stem):
    out, i = [], 0
    while os.path.exists(os.path.join(d, "%s%d.npy" % (stem, i))):
        out.append(np.load(os.path.join(d, "%s%d.npy" % (stem, i))))
        i += 1
    return out


def tolerances(d):
    tol = {"atol": 1e-5, "rtol": 1e-4}
    path = os.path.join(d, "case.txt")
    if os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            for line in f:
                k, _, v = line.partition(":")
                if k.strip() in tol:
                    tol[k.strip()] = float(v)
    return tol


def lib(stem):
    return os.path.join(WORK, stem + ".so")


def form_args(d, form):
    """forms.json's arguments as Python values."""
    with open(os.path.join(d, "forms.json"), encoding="utf-8") as f:
        desc = json.load(f)[form]

    def val(v):
        if isinstance(v, dict) and "npy" in v:
            return np.load(os.path.join(d, v["npy"]))
        if isinstance(v, dict):
            return tuple(val(e) for e in v["tuple"])
        if isinstance(v, list):
            return [val(e) for e in v]
        return v

    return [val(v) for v in desc]


def abi_args(d, form):
    """tests/fixtures/abi's args.txt (tsaot-run's words) as Python values;
    0-d and 1-d arrays stay arrays (made numbers and lists by the caller)."""
    with open(os.path.join(d, form, "args.txt"), encoding="utf-8") as f:
        words = f.read().split()
    pos = [0]

    def one():
        w = words[pos[0]]
        pos[0] += 1
        if w in ("[", "("):
            items = []
            while words[pos[0]] != {"[": "]", "(": ")"}[w]:
                items.append(one())
            pos[0] += 1
            return items if w == "[" else tuple(items)
        if w == "none":
            return None
        if w.startswith("str:"):
            return w[4:]
        return np.load(os.path.join(d, form, w))

    out = []
    while pos[0] < len(words):
        out.append(one())
    return out


def pythonic(v, t):
    """A value as a Python caller would write it for type t (tsaot's parsed
    type): numbers for int/float/bool, lists for List[int]/..."""
    k = t[0]
    if v is None:
        return None
    if k == "Optional":
        return pythonic(v, t[1])
    if k in ("int", "float", "bool"):
        return v.item()
    if k == "str" and isinstance(v, np.ndarray):
        return v.tobytes()  # str_branch's form "bytes": PyTorch takes bytes too
    if k == "List" and t[1][0] in ("int", "float", "bool"):
        return v.tolist()
    if k == "List":
        return [pythonic(e, t[1]) for e in v]
    if k == "Tuple":
        return tuple(pythonic(e, et) for e, et in zip(v, t[1]))
    return v


class Case(unittest.TestCase):
    def assertOutputs(self, got, want, atol=1e-5, rtol=1e-4, what=""):
        self.assertEqual(len(got), len(want), what)
        for i, (g, w) in enumerate(zip(got, want)):
            if torch is not None and isinstance(g, torch.Tensor):
                g = g.numpy()
            self.assertEqual((g.dtype, g.shape), (w.dtype, w.shape), "%s output %d" % (what, i))
            if w.dtype.kind in "biu":
                self.assertTrue(np.array_equal(g, w), "%s output %d: %s != %s" % (what, i, g, w))
            else:
                self.assertTrue(np.allclose(g, w, atol=atol, rtol=rtol, equal_nan=True),
                                "%s output %d: max |diff| %g" % (what, i, np.max(np.abs(g - w))))

    def assertOwned(self, arr):
        """arr's memory is the DLTensor the library handed out, owned by
        arr's base."""
        base = arr.base
        self.assertIsInstance(base, _model._Output)
        t = base.ptr.contents.dl_tensor
        self.assertEqual(arr.__array_interface__["data"][0], t.data + t.byte_offset)


class Types(unittest.TestCase):
    """NAME_signature's type texts (ts_type_print) as the package reads them."""

    def test_parse(self):
        from tsaot._args import parse_signature, parse_type, type_name
        T, i = ("Tensor",), ("int",)
        for text, want, name in (
                ("Tensor", T, "Tensor"),
                ("Float(2, *, strides=[3, 1], requires_grad=0, device=cpu)", T, "Tensor"),
                ("FloatTensor", T, "Tensor"),
                ("Tensor?[]", ("List", ("Optional", T)), "List[Optional[Tensor]]"),
                ("Tensor[]?", ("Optional", ("List", T)), "Optional[List[Tensor]]"),
                ("(Tensor, (int, float[]))", ("Tuple", (T, ("Tuple", (i, ("List", ("float",)))))),
                 "Tuple[Tensor, Tuple[int, List[float]]]"),
                ("NamedTuple(a : Tensor, b : int?)", ("Tuple", (T, ("Optional", i))), "Tuple[Tensor, Optional[int]]"),
                ("str", ("str",), "str"),
                ("Dict(str, Tensor)", ("?", "Dict(str, Tensor)"), "Dict(str, Tensor)")):
            self.assertEqual(parse_type(text), want, text)
            self.assertEqual(type_name(parse_type(text)), name, text)
        self.assertEqual(parse_signature("x: Tensor\n: int[]\n"), [("x", T), ("input1", ("List", i))])
        for bad in ("", "(Tensor", "Tensor)", "Tensor x"):
            with self.assertRaises(ValueError):
                parse_type(bad)


class Fixtures(Case):
    """tests/fixtures cases compiled for their inputs, run on numpy."""

    def test_fixtures(self):
        for case in ("small_mlp", "tiny_cnn", "tiny_cnn_traced", "lstm_cell", "if_add", "loops"):
            d = os.path.join(FIX, case)
            ins, want = numbered(d, "in"), numbered(d, "out")
            out = tsaot.compile(os.path.join(d, "model.pt"), lib(case), example=ins)
            self.assertEqual(out, lib(case))
            m = tsaot.load(out)
            got = m.run(*ins)
            self.assertOutputs(got, want, what=case, **tolerances(d))
            self.assertFalse(m.last_bailout, case)
            for g in got:
                if g.size:
                    self.assertOwned(g)

    def test_input_specs(self):
        d = os.path.join(FIX, "small_mlp")
        x = np.load(os.path.join(d, "in0.npy"))
        spec = "f32[N,%d]" % x.shape[1]
        m = tsaot.load(tsaot.compile(os.path.join(d, "model.pt"), lib("mlp_spec"), input=[spec], name="mlp"))
        self.assertEqual(m.name, "mlp")
        self.assertEqual([(i.name, i.type) for i in m.inputs], [("x", "Tensor")])
        self.assertEqual((m.inputs[0].dtype, m.inputs[0].shape), ("float32", (None, x.shape[1])))
        self.assertEqual(str(m.inputs[0].specs[0]), "f32[?,%d]" % x.shape[1])
        y = m(x)
        self.assertOutputs([y], numbered(d, "out"), what="small_mlp by spec")
        self.assertFalse(m.last_bailout)
        # the other batch size runs compiled too
        self.assertEqual(m(np.concatenate([x, x])).shape[0], 2 * x.shape[0])
        self.assertFalse(m.last_bailout)

    def test_two_models_one_process(self):
        a = tsaot.load(tsaot.compile(os.path.join(FIX, "small_mlp", "model.pt"), lib("two_a"),
                                     example=numbered(os.path.join(FIX, "small_mlp"), "in")))
        b = tsaot.load(tsaot.compile(os.path.join(FIX, "tiny_cnn", "model.pt"), lib("two_b"),
                                     example=numbered(os.path.join(FIX, "tiny_cnn"), "in")))
        # --name defaults to the output's stem
        self.assertEqual((a.name, b.name), ("two_a", "two_b"))
        for m, case in ((a, "small_mlp"), (b, "tiny_cnn"), (a, "small_mlp")):
            d = os.path.join(FIX, case)
            self.assertOutputs(m.run(*numbered(d, "in")), numbered(d, "out"), what=case)

    def test_abi_cases_python_values(self):
        """tests/fixtures/abi: every form with Python numbers, lists, str,
        None and tuples where forward declares them, through a library
        compiled without examples and one compiled for the first form."""
        root = os.path.join(FIX, "abi")
        for case in sorted(os.listdir(root)):
            d = os.path.join(root, case)
            if not os.path.exists(os.path.join(d, "case.txt")):
                continue
            info = {}
            with open(os.path.join(d, "case.txt"), encoding="utf-8") as f:
                for line in f:
                    k, _, v = line.partition(":")
                    info[k.strip()] = v.strip()
            forms = info["forms"].split()
            tol = tolerances(d)
            libs = [("example", dict(example=abi_args(d, forms[0])))]
            if info.get("generic") == "yes":
                libs.append(("generic", {}))
            for how, kw in libs:
                m = tsaot.load(tsaot.compile(os.path.join(d, "model.pt"), lib("abi_%s_%s" % (case, how)), **kw))
                self.assertIsNotNone(m.signature, case)
                for fm in forms:
                    args = [pythonic(v, t) for v, (_, t) in zip(abi_args(d, fm), m.signature)]
                    self.assertOutputs(m.run(*args), numbered(os.path.join(d, fm), "out"),
                                       what="%s %s (%s)" % (case, fm, how), **tol)


class Kinds(Case):
    """tests/python/fixtures/kinds: every kind of argument; outputs that
    are the input, views of it, bool and int."""
    d = os.path.join(PYFIX, "kinds")

    @classmethod
    def setUpClass(cls):
        cls.m = tsaot.load(tsaot.compile(os.path.join(cls.d, "model.pt"), lib("kinds"),
                                         example=form_args(cls.d, "full")))

    def test_forms(self):
        for fm, bailout in (("full", False), ("other", True)):
            got = self.m.run(*form_args(self.d, fm))
            self.assertOutputs(got, numbered(os.path.join(self.d, fm), "out"), what=fm)
            self.assertEqual(self.m.last_bailout, bailout, fm)
            for g in got:
                self.assertOwned(g)
        self.assertEqual(self.m.last_error, "input 1 (mask): expected bool[3,4], got None")

    def test_specs_and_names(self):
        m = self.m
        self.assertEqual([(i.name, i.type) for i in m.inputs], [
            ("x", "Tensor"), ("mask", "Optional[Tensor]"), ("n", "int"), ("scale", "float"), ("flag", "bool"),
            ("sizes", "List[int]"), ("xs", "List[Tensor]"), ("name", "str"), ("pair", "Tuple[Tensor, Tensor]")])
        self.assertEqual([[str(s) for s in i.specs] for i in m.inputs], [
            ["f32[3,4]"], ["bool[3,4] or None"], ["int"], ["float"], ["bool"], ["List[int]"],
            ["a list of 2", "f32[2]", "f32[3]"], ["str"], ["f32[3,4]", "f32[4]"]])
        self.assertEqual([s.name for i in m.inputs for s in i.specs],
                         ["x", "mask", "n", "scale", "flag", "sizes", "xs", "xs[0]", "xs[1]", "name", "pair[0]",
                          "pair[1]"])
        self.assertEqual(m.inputs[6].specs[0].length, 2)
        self.assertEqual([str(s) for s in m.outputs],
                         ["f32[3,4]", "f32[4,3]", "f32[2,4]", "f32[...]", "f32[3,4]", "bool[3,4]", "int"])
        self.assertEqual(m.outputs[3].shape, None)
        self.assertEqual((m.outputs[6].kind, m.outputs[6].dtype, m.outputs[6].shape), ("int", "int64", ()))

    def test_generic_library(self):
        m = tsaot.load(tsaot.compile(os.path.join(self.d, "model.pt"), lib("kinds_generic")))
        self.assertEqual(m.inputs[6].specs[0].length, None)
        self.assertEqual([str(s) for s in m.outputs[:3]], ["f32[...]"] * 3)  # any rank
        for fm in ("full", "other"):
            self.assertOutputs(m.run(*form_args(self.d, fm)), numbered(os.path.join(self.d, fm), "out"), what=fm)
            self.assertFalse(m.last_bailout, fm)

    def test_keywords_and_call(self):
        args = form_args(self.d, "full")
        names = [i.name for i in self.m.inputs]
        got = self.m(*args[:3], **dict(zip(names[3:], args[3:])))
        self.assertIsInstance(got, tuple)
        self.assertOutputs(list(got), numbered(os.path.join(self.d, "full"), "out"))

    def test_strided_and_readonly_inputs(self):
        args = form_args(self.d, "full")
        x = args[0]
        big = np.zeros((x.shape[0], 2 * x.shape[1]), np.float32)
        big[:, ::2] = x
        args[0] = big[:, ::2]
        args[8][0].setflags(write=False)
        swapped = args[8][1].astype(">f4")  # another byte order: copied
        args[8] = (args[8][0], swapped)
        self.assertOutputs(self.m.run(*args), numbered(os.path.join(self.d, "full"), "out"))
        self.assertFalse(self.m.last_bailout)

    def test_number_kinds(self):
        """int from bool, numpy integers and 0-d arrays; float from int;
        bool from int; List[int] from a tuple: as PyTorch takes them."""
        args = form_args(self.d, "full")
        want = numbered(os.path.join(self.d, "full"), "out")
        for i, v in ((2, np.int32(2)), (2, np.array(2)), (3, np.float32(0.5)), (4, 1), (5, (4, 3))):
            a = list(args)
            a[i] = v
            self.assertOutputs(self.m.run(*a), want, what="argument %d as %r" % (i, v))
        a = list(args)
        a[2] = True  # n = 1: another sum
        self.assertEqual(self.m.run(*a)[6], 3)

    def test_without_signature(self):
        """A library older than NAME_signature: arguments by their Python
        types."""
        m = tsaot.load(lib("kinds"))
        m.signature = None
        self.assertOutputs(m.run(*form_args(self.d, "full")), numbered(os.path.join(self.d, "full"), "out"))

    def test_output_lifetime(self):
        outs = self.m.run(*form_args(self.d, "full"))
        owner = weakref.ref(outs[4].base)
        view = outs[4][1:]
        del outs
        gc.collect()
        self.assertIsNotNone(owner(), "a view keeps the output alive")
        del view
        gc.collect()
        self.assertIsNone(owner(), "the output is released with its last view")

    def test_errors(self):
        m = self.m
        args = form_args(self.d, "full")

        def raises(args, kwargs=None):
            with self.assertRaises(tsaot.Error) as cm:
                m.run(*args, **(kwargs or {}))
            return str(cm.exception)

        self.assertRegex(raises(args + [1]), r"^forward\(\) expected at most 10 argument\(s\) but received 11 "
                                             r"argument\(s\). Declaration: forward\(x: Tensor, mask: Optional")
        self.assertRegex(raises(args[:3]), r"^forward\(\) is missing value for argument 'scale'")
        self.assertRegex(raises(args[:8], {"pair": args[8], "sizes": [1]}),
                         r"^forward\(\) got an unexpected keyword argument 'sizes'")
        for i, v, decl, found in ((0, 3, "Tensor", "int"), (1, 3, "Optional[Tensor]", "int"),
                                  (2, 2.0, "int", "float"), (5, [4.0, 3], "List[int]", "list"),
                                  (6, [args[6][0], 1], "List[Tensor]", "list"), (7, 7, "str", "int"),
                                  (8, (args[8][0],), "Tuple[Tensor, Tensor]", "tuple")):
            a = list(args)
            a[i] = v
            self.assertEqual(raises(a).split("\n")[:2], [
                "forward() Expected a value of type '%s' for argument '%s' but instead found type '%s'." % (
                    decl, m.inputs[i].name, found), "Position: %d" % (i + 1)])
        a = list(args)
        a[0] = args[0].astype(np.uint16)
        self.assertIn("can't convert np.ndarray of type numpy.uint16", raises(a))
        # off the specialisation the fallback runs, and raises as PyTorch does
        a = list(args)
        a[5] = [5, 5]
        with self.assertRaises(tsaot.Error) as cm:
            m.run(*a)
        self.assertIn("shape '[5, 5]' is invalid for input of size 12", str(cm.exception))
        self.assertEqual(cm.exception.code, "TSAOT_E_RUN")
        self.assertEqual(cm.exception.last_error, m.last_error)

    def test_no_fallback_errors(self):
        args = form_args(self.d, "full")
        m = tsaot.load(tsaot.compile(os.path.join(self.d, "model.pt"), lib("kinds_nofb"), example=args,
                                     no_fallback=True, name="kinds"))
        self.assertEqual(m.name, "kinds")
        for i, v, why in ((0, args[0].astype(np.float64), "input 0: expected f32[3,4], got f64[3,4]"),
                          (0, args[0][:2], "input 0: expected f32[3,4], got f32[2,4]"),
                          (1, None, "input 1 (mask): expected bool[3,4], got None")):
            a = list(args)
            a[i] = v
            with self.assertRaises(tsaot.Error) as cm:
                m.run(*a)
            self.assertEqual((str(cm.exception), cm.exception.code), (why, "TSAOT_E_INPUT"))
            self.assertEqual(m.last_error, why)

    def test_threads_and_device(self):
        m = tsaot.load(lib("kinds"))
        want = numbered(os.path.join(self.d, "full"), "out")
        m.set_threads(2)
        self.assertOutputs(m.run(*form_args(self.d, "full")), want)
        m.set_threads(1)
        m.set_device("cpu")
        with self.assertRaises(tsaot.Error) as cm:
            m.set_device("tpu")
        self.assertEqual(cm.exception.code, "TSAOT_E_DEVICE")
        self.assertOutputs(m.run(*form_args(self.d, "full")), want)

    def test_concurrent_runs(self):
        """Runs from four Python threads at once (ctypes lets go of the
        GIL): each thread's results, and its own last_error."""
        import threading
        args = form_args(self.d, "full")
        want = numbered(os.path.join(self.d, "full"), "out")
        bad = list(args)
        bad[5] = [5, 5]
        problems = []

        def work(k):
            for i in range(15):
                try:
                    if (i + k) % 3 == 0:
                        try:
                            self.m.run(*bad)
                            problems.append("thread %d: no error" % k)
                        except tsaot.Error as e:
                            if "shape '[5, 5]' is invalid" not in e.last_error:
                                problems.append("thread %d: %s" % (k, e.last_error))
                    else:
                        self.assertOutputs(self.m.run(*args), want)
                        if self.m.last_error:
                            problems.append("thread %d: last_error %r after a run" % (k, self.m.last_error))
                except Exception as e:  # a thread's failure, reported below
                    problems.append("thread %d: %s" % (k, e))

        threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(problems, [])

    def test_dlpack_object(self):
        """An object with only __dlpack__ (numpy's, wrapped)."""

        class Wrapped:
            def __init__(self, a):
                self.a = a

            def __dlpack__(self, stream=None):
                return self.a.__dlpack__()

        args = form_args(self.d, "full")
        args[0] = Wrapped(args[0])
        self.assertOutputs(self.m.run(*args), numbered(os.path.join(self.d, "full"), "out"))
        self.assertFalse(self.m.last_bailout)


class InPlace(Case):
    """tests/python/fixtures/inplace: forward adds into its argument, so the
    caller's memory must be what the compiled code read and wrote."""
    d = os.path.join(PYFIX, "inplace")

    @classmethod
    def setUpClass(cls):
        cls.m = tsaot.load(tsaot.compile(os.path.join(cls.d, "model.pt"), lib("inplace"),
                                         example=form_args(cls.d, "same")))

    def check(self, fm, wrap, bailout):
        x, acc = form_args(self.d, fm)
        after = np.load(os.path.join(self.d, fm, "after1.npy"))
        x, acc, view = wrap(x, acc)
        got = self.m.run(x, acc)
        self.assertOutputs(got, numbered(os.path.join(self.d, fm), "out"), what=fm)
        self.assertEqual(self.m.last_bailout, bailout)
        v = view()
        self.assertTrue(np.allclose(v.numpy() if torch is not None and isinstance(v, torch.Tensor) else v, after),
                        "%s: the caller's tensor was not written" % fm)

    def test_numpy(self):
        self.check("same", lambda x, a: (x, a, lambda: a), False)
        self.check("bcast", lambda x, a: (x, a, lambda: a), True)

    def test_strided(self):
        def strided(x, a):
            big = np.zeros((a.shape[0], 3 * a.shape[1]), np.float32)
            big[:, 1::3] = a
            return x, big[:, 1::3], lambda: big[:, 1::3]

        self.check("same", strided, False)

    @unittest.skipIf(torch is None, "torch is not installed")
    def test_torch(self):
        x, a = form_args(self.d, "same")
        ta = torch.from_numpy(a.T.copy()).t()  # column-major
        self.assertFalse(ta.is_contiguous())
        ptr = ta.data_ptr()
        got = self.m.run(torch.from_numpy(x), ta, as_torch=True)
        self.assertTrue(torch.allclose(ta, torch.from_numpy(np.load(os.path.join(self.d, "same", "after1.npy")))))
        self.assertEqual(ta.data_ptr(), ptr)
        self.assertOutputs(got, numbered(os.path.join(self.d, "same"), "out"))

    def test_dlpack_object(self):
        class Wrapped:
            def __init__(self, a):
                self.a = a

            def __dlpack__(self, stream=None):
                return self.a.__dlpack__()

        self.check("same", lambda x, a: (x, Wrapped(a), lambda: a), False)


class Unbind(Case):
    """tests/python/fixtures/unbind: as many outputs as the input's first
    size, a count only a run knows (NAME_num_outputs -1)."""
    d = os.path.join(PYFIX, "unbind")

    def test_output_count(self):
        m = tsaot.load(tsaot.compile(os.path.join(self.d, "model.pt"), lib("unbind")))
        self.assertIsNone(m.outputs)
        for fm, n in (("many", 12), ("few", 2), ("many", 12)):
            got = m.run(*form_args(self.d, fm))
            self.assertEqual(len(got), n)
            self.assertOutputs(got, numbered(os.path.join(self.d, fm), "out"), what=fm)


class Dtypes(Case):
    """tests/python/fixtures/dtypes: every dtype of the ABI in and out."""
    d = os.path.join(PYFIX, "dtypes")

    @classmethod
    def setUpClass(cls):
        cls.m = tsaot.load(tsaot.compile(os.path.join(cls.d, "model.pt"), lib("dtypes")))
        with open(os.path.join(cls.d, "forms.json"), encoding="utf-8") as f:
            cls.forms = sorted(json.load(f))

    def test_numpy(self):
        for fm in self.forms:
            args = form_args(self.d, fm)
            if fm == "bfloat16":
                with self.assertRaises(tsaot.Error) as cm:
                    self.m.run(*args)
                self.assertEqual(str(cm.exception), "output 0 is bfloat16, which numpy has no dtype for: run with "
                                                    "as_torch=True")
                continue
            self.assertEqual(args[0].dtype.name, fm)
            got = self.m.run(*args)
            self.assertOutputs(got, numbered(os.path.join(self.d, fm), "out"), what=fm)
            self.assertOwned(got[0])

    @unittest.skipIf(torch is None, "torch is not installed")
    def test_torch(self):
        for fm in self.forms:
            x, flag = form_args(self.d, fm)
            want = np.load(os.path.join(self.d, fm, "out0.npy"))
            got = self.m.run(torch.from_numpy(x), flag, as_torch=True)[0]
            self.assertEqual(str(got.dtype), "torch." + fm, fm)
            self.assertTrue(np.array_equal((got.float() if fm == "bfloat16" else got).numpy(), want), fm)
            if fm == "complex64":
                # a conjugate view: its memory holds the unconjugated values
                x_conj = torch.from_numpy(np.conj(x)).conj()
                self.assertTrue(x_conj.is_conj())
                again = self.m.run(x_conj, flag, as_torch=True)[0]
                self.assertTrue(np.array_equal(again.numpy(), want), fm)
            if fm == "bfloat16":
                # a bfloat16 input, which only torch can give
                again = self.m.run(torch.from_numpy(x).to(torch.bfloat16), False, as_torch=True)[0]
                self.assertTrue(torch.equal(again, got))


@unittest.skipIf(torch is None, "torch is not installed")
class Torch(Case):
    """torch tensors in, torch tensors out (as_torch=True)."""
    d = os.path.join(PYFIX, "kinds")

    def test_kinds(self):
        m = tsaot.load(tsaot.compile(os.path.join(self.d, "model.pt"), lib("kinds_torch"),
                                     example=[torch.from_numpy(a) if isinstance(a, np.ndarray) else a
                                              for a in form_args(self.d, "full")]))
        seen = []
        orig = _model._Output.torch

        def spy(self, index):
            t = self.ptr.contents.dl_tensor
            seen.append(t.data + t.byte_offset)
            return orig(self, index)

        def to_torch(v):
            if isinstance(v, np.ndarray):
                return torch.from_numpy(v)
            if isinstance(v, (list, tuple)):
                return type(v)(to_torch(e) for e in v)
            return v

        _model._Output.torch = spy
        try:
            for fm in ("full", "other"):
                args = to_torch(form_args(self.d, fm))
                args[0] = args[0].clone().requires_grad_(True)
                del seen[:]
                got = m.run(*args, as_torch=True)
                self.assertTrue(all(isinstance(g, torch.Tensor) for g in got))
                self.assertEqual([g.dtype for g in got], [torch.float32] * 5 + [torch.bool, torch.int64])
                self.assertOutputs(got, numbered(os.path.join(self.d, fm), "out"), what=fm)
                self.assertEqual([g.data_ptr() for g in got], seen, "%s: torch outputs are the library's memory" % fm)
        finally:
            _model._Output.torch = orig
        # torch outputs outlive the model call and free on their own
        got = m.run(*to_torch(form_args(self.d, "full")), as_torch=True)
        y = got[3] * 1
        del got
        gc.collect()
        self.assertEqual(y.shape, (4, 3))

    def test_fixture_compiled_from_torch(self):
        d = os.path.join(FIX, "lstm_cell")
        ins = [torch.from_numpy(a) for a in numbered(d, "in")]
        m = tsaot.load(tsaot.compile(os.path.join(d, "model.pt"), lib("lstm_torch"), example=ins))
        self.assertOutputs(m.run(*ins, as_torch=True), numbered(d, "out"), **tolerances(d))
        self.assertFalse(m.last_bailout)


class Compile(Case):
    def test_compiler_errors(self):
        with self.assertRaises(tsaot.Error) as cm:
            tsaot.compile(os.path.join(WORK, "missing.pt"), lib("missing"))
        self.assertIn("cannot open", str(cm.exception))
        self.assertEqual(cm.exception.last_error, str(cm.exception))
        with self.assertRaises(tsaot.Error) as cm:
            tsaot.compile(os.path.join(FIX, "small_mlp", "model.pt"), lib("bad"), input=["f32[1,2"])
        self.assertIn("error", str(cm.exception))
        with self.assertRaises(tsaot.Error):
            tsaot.compile(os.path.join(FIX, "small_mlp", "model.pt"), lib("bad"), example=[], input=[])
        with self.assertRaises(tsaot.Error) as cm:
            tsaot.compile(os.path.join(FIX, "small_mlp", "model.pt"), lib("bad"), tsaot=os.path.join(WORK, "nope"))
        self.assertIn("cannot run", str(cm.exception))

    def test_warnings(self):
        d = os.path.join(FIX, "unknown_reach")
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            tsaot.compile(os.path.join(d, "model.pt"), lib("unknown_reach"), example=numbered(d, "in"))
        self.assertTrue(any(issubclass(x.category, tsaot.CompileWarning) for x in w), [str(x.message) for x in w])

    def test_object(self):
        d = os.path.join(FIX, "small_mlp")
        out = tsaot.compile(os.path.join(d, "model.pt"), os.path.join(WORK, "mlp.o"), example=numbered(d, "in"),
                            name="mlp", opt_level=1)
        self.assertTrue(os.path.exists(out) and os.path.exists(os.path.join(WORK, "mlp.h")))
        with open(os.path.join(WORK, "mlp.h"), encoding="utf-8") as f:
            self.assertIn("TSAOT_DECLARE_MODEL(mlp)", f.read())

    def test_load_errors(self):
        with self.assertRaises(tsaot.Error):
            tsaot.load(os.path.join(WORK, "missing.so"))
        d = os.path.join(FIX, "small_mlp")
        p = tsaot.compile(os.path.join(d, "model.pt"), lib("mlp_named"), example=numbered(d, "in"), name="mlp2")
        self.assertEqual(tsaot.load(p).name, "mlp2")
        with self.assertRaises(tsaot.Error) as cm:
            tsaot.load(p, name="other")
        self.assertIn("no other_init", str(cm.exception))


if __name__ == "__main__":
    try:
        prog = unittest.main(exit=False, verbosity=2 if "-v" in sys.argv else 1)
    finally:
        shutil.rmtree(WORK, ignore_errors=True)
    sys.exit(0 if prog.result.wasSuccessful() else 1)
