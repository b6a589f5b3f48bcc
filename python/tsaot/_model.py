"""A library `tsaot -o M.so` wrote, opened with ctypes: its specs, and runs
on numpy arrays, torch tensors and Python values with the outputs handed
over without a copy (include/tsaot.h is the other side)."""
import ctypes
import importlib
import os
import re

from . import _dlpack as dl
from ._args import Error, Slots, TypeMismatch, number_list_kind, parse_signature, spec_count, type_name

_PTR = ctypes.POINTER(dl.DLManagedTensor)

# PyCapsule functions as private prototypes (ctypes.pythonapi's attributes
# are shared objects whose argtypes another module may set)
_CAPSULE_DESTRUCTOR = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
_PyCapsule_New = ctypes.PYFUNCTYPE(ctypes.py_object, ctypes.c_void_p, ctypes.c_void_p, _CAPSULE_DESTRUCTOR)(
    ("PyCapsule_New", ctypes.pythonapi))
_PyCapsule_IsValid = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p)(
    ("PyCapsule_IsValid", ctypes.pythonapi))
_PyCapsule_GetPointer = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p)(
    ("PyCapsule_GetPointer", ctypes.pythonapi))
# the capsule keeps the name's pointer: it must live as long as the module
_DLTENSOR_NAME = ctypes.create_string_buffer(b"dltensor")


@_CAPSULE_DESTRUCTOR
def _capsule_destructor(cap):
    # A consumer that took the tensor renamed the capsule "used_dltensor"
    # and calls the deleter itself; one that did not leaves it to us.
    name = ctypes.addressof(_DLTENSOR_NAME)
    if _PyCapsule_IsValid(cap, name):
        p = ctypes.cast(_PyCapsule_GetPointer(cap, name), _PTR)
        if p and p.contents.deleter:
            p.contents.deleter(p)


class _Output:
    """Owns one output's DLManagedTensor: a numpy array made from it keeps
    this as its base, and the deleter runs when the last view of it goes."""
    __slots__ = ("ptr", "__array_interface__", "__weakref__")

    def __init__(self, ptr):
        self.ptr = ptr

    def release(self):
        p, self.ptr = self.ptr, None
        if p and p.contents.deleter:
            p.contents.deleter(p)

    def __del__(self):
        self.release()

    def dtype_names(self, index):
        t = self.ptr.contents.dl_tensor
        names = dl.DTYPES.get((t.dtype.code, t.dtype.bits)) if t.dtype.lanes == 1 else None
        if names is None or t.device.device_type != dl.kDLCPU:
            raise Error("output %d: a tensor the package does not know (dtype code %d, %d bits, %d lanes; device "
                        "type %d)" % (index, t.dtype.code, t.dtype.bits, t.dtype.lanes, t.device.device_type))
        return names

    def numpy(self, index):
        import numpy as np
        t = self.ptr.contents.dl_tensor
        npname = self.dtype_names(index)[0]
        if npname is None:
            raise Error("output %d is bfloat16, which numpy has no dtype for: run with as_torch=True" % index)
        dtype = np.dtype(npname)
        shape = tuple(t.shape[i] for i in range(t.ndim))
        strides = tuple(t.strides[i] * dtype.itemsize for i in range(t.ndim)) if t.strides else None
        if any(s == 0 for s in shape) or not t.data:
            # nothing to share (and numpy wants no NULL data)
            self.release()
            return np.empty(shape, dtype)
        self.__array_interface__ = {"version": 3, "shape": shape, "typestr": dtype.str,
                                    "data": (t.data + t.byte_offset, False), "strides": strides}
        return np.asarray(self)

    def torch(self, index):
        import torch
        import torch.utils.dlpack
        if self.dtype_names(index)[2] == "bool":
            # torch 1.13's DLPack import refuses bool: through numpy, which
            # torch.from_numpy shares
            return torch.from_numpy(self.numpy(index))
        p, self.ptr = self.ptr, None
        cap = _PyCapsule_New(ctypes.cast(p, ctypes.c_void_p).value, ctypes.addressof(_DLTENSOR_NAME),
                             _capsule_destructor)
        return torch.utils.dlpack.from_dlpack(cap)


class Spec:
    """What one input slot or output must be (tsaot_spec).

    kind      "tensor", "int", "float", "bool" (a 0-d tensor), "none", "length"
              (a list's length), "str" or "list" (a list of numbers)
    dtype     numpy's name of the slot's dtype ("float32", "bfloat16"), None
              for "none"
    shape     the sizes, None for a size the code does not fix; None for any
              rank; () for a number
    length    for "length": the list length compiled for, None for any
    optional  a None may stand here (the argument, or a list element, is
              Optional)
    name      the slot's path: "x", "xs[1]", "pair[0]"; "out0" ... for outputs
    """

    def __init__(self, raw, name):
        kind = raw.kind & dl.SPEC_KIND_MASK
        self.kind = dl.SPEC_KINDS[kind] if kind < len(dl.SPEC_KINDS) else "kind %d" % kind
        self.optional = bool(raw.kind & dl.SPEC_OPTIONAL)
        names = dl.DTYPES.get((raw.dtype.code, raw.dtype.bits))
        self.dtype = None if kind == dl.SPEC_NONE or not names else (names[0] or names[2])
        self._short = names[1] if names else "?"
        sizes = [raw.shape[i] for i in range(raw.ndim)] if raw.shape and raw.ndim > 0 else []
        self.length = None
        if kind == dl.SPEC_LENGTH:
            # one entry, whatever ndim says
            self.length = raw.shape[0] if raw.shape and raw.shape[0] >= 0 else None
            self.shape = ()
        else:
            self.shape = None if raw.ndim < 0 else tuple(None if s < 0 else s for s in sizes)
        self.name = name

    def __str__(self):
        if self.kind == "none":
            return "None"
        if self.kind == "length":
            return "a list of %s" % ("any length" if self.length is None else self.length)
        if self.kind == "tensor":
            text = self._short + ("[...]" if self.shape is None else
                                  "[%s]" % ",".join("?" if s is None else str(s) for s in self.shape))
        elif self.kind == "list":
            text = "List[%s]" % {"i64": "int", "f64": "float", "bool": "bool"}.get(self._short, self._short)
        else:
            text = self.kind
        return text + (" or None" if self.optional else "")

    def __repr__(self):
        return "<tsaot.Spec %s: %s>" % (self.name, self)


class Input:
    """One argument of forward: its name, its declared type ("Tensor",
    "Optional[Tensor]", "List[int]", ...) and the specs of its slots."""

    def __init__(self, name, type_, specs):
        self.name, self.type, self.specs = name, type_, specs

    @property
    def dtype(self):
        """The dtype of a one-slot argument (a tensor or a number)."""
        return self.specs[0].dtype if len(self.specs) == 1 else None

    @property
    def shape(self):
        return self.specs[0].shape if len(self.specs) == 1 else None

    def __repr__(self):
        return "<tsaot.Input %s: %s = %s>" % (self.name, self.type, ", ".join(str(s) for s in self.specs))


def _name_specs(t, specs, i, path):
    """Names specs[i:] of one argument of type t by path; the index past them."""
    k = t[0]
    if k == "Optional":
        if specs[i].kind == "none":
            specs[i].name = path
            return i + 1
        return _name_specs(t[1], specs, i, path)
    if k == "Tuple":
        for j, e in enumerate(t[1]):
            i = _name_specs(e, specs, i, "%s[%d]" % (path, j))
        return i
    if k == "List" and not number_list_kind(t):
        specs[i].name = path
        n = specs[i].length
        i += 1
        for j in range(1 if n is None else n):
            i = _name_specs(t[1], specs, i, "%s[%s]" % (path, "*" if n is None else j))
        return i
    specs[i].name = path
    return i + 1


class Model:
    """A compiled model: `tsaot.load(path)`.

    m(*args) / m.run(*args): forward on numpy arrays, torch tensors, objects
    with __dlpack__ and Python values, as forward's declared types need;
    see run. m.inputs, m.outputs: the specialisation's specs.
    """

    def __init__(self, path, name=None):
        self.path = os.path.abspath(path)
        try:
            self._lib = ctypes.CDLL(self.path)
        except OSError as e:
            raise Error("cannot load %s: %s" % (path, e)) from None
        lib = self._lib
        if name is None:
            try:
                name = ctypes.cast(ctypes.addressof(ctypes.c_char.in_dll(lib, "tsaot_model_name")),
                                   ctypes.c_char_p).value.decode("utf-8")
            except ValueError:
                name = "model"
        self.name = name

        def fn(suffix, restype, *argtypes, optional=False):
            try:
                f = getattr(lib, "%s_%s" % (name, suffix))
            except AttributeError:
                if optional:
                    return None
                raise Error("%s is not a library tsaot wrote for the name %r: it has no %s_%s" % (
                    path, name, name, suffix)) from None
            f.restype, f.argtypes = restype, list(argtypes)
            return f

        c_int, c_char_p = ctypes.c_int, ctypes.c_char_p
        self._init = fn("init", c_int)
        self._num_inputs = fn("num_inputs", c_int)
        self._num_outputs = fn("num_outputs", c_int)
        self._input_spec = fn("input_spec", c_int, c_int, ctypes.POINTER(dl.Spec))
        self._output_spec = fn("output_spec", c_int, c_int, ctypes.POINTER(dl.Spec))
        self._set_threads = fn("set_threads", None, c_int)
        self._set_device = fn("set_device", c_int, c_char_p)
        self._run = fn("run", c_int, ctypes.POINTER(dl.DLTensor), c_int, ctypes.POINTER(_PTR), c_int,
                       ctypes.POINTER(c_int))
        self._last_error = fn("last_error", c_char_p)
        self._last_bailout = fn("last_bailout", c_int)
        self._signature = fn("signature", c_char_p, optional=True)

        rc = self._init()
        if rc:
            self._fail(rc)
        self.signature = None
        if self._signature:
            text = self._signature().decode("utf-8")
            try:
                self.signature = parse_signature(text)
            except ValueError as e:
                raise Error("%s_signature does not read (%s): %r" % (name, e, text)) from None
        self.inputs = self._read_inputs()
        n = self._num_outputs()
        self.outputs = None if n < 0 else [self._spec(self._output_spec, i, "out%d" % i) for i in range(n)]
        self._room = max(n, 8)

    def _spec(self, f, i, name):
        raw = dl.Spec()
        if f(i, ctypes.byref(raw)):
            return None
        return Spec(raw, name)

    def _read_inputs(self):
        n = self._num_inputs()
        specs = []
        # -1: input_spec(0), (1), ... until it fails give one form
        for i in range(n if n >= 0 else 1 << 16):
            s = self._spec(self._input_spec, i, "input %d" % i)
            if s is None:
                if n >= 0:
                    raise Error("%s_input_spec(%d) failed: %s" % (self.name, i, self.last_error))
                break
            specs.append(s)
        if self.signature is None:
            # older libraries: one argument per slot, named by position
            return [Input("input%d" % i, s.kind if s.kind != "tensor" else "Tensor", [s])
                    for i, s in enumerate(specs)]
        out, i = [], 0
        for name, t in self.signature:
            try:
                j = spec_count(t, specs, i)
                _name_specs(t, specs, i, name)
            except (ValueError, IndexError):
                raise Error("%s's specs do not fit its signature at argument %r" % (self.path, name)) from None
            out.append(Input(name, type_name(t), specs[i:j]))
            i = j
        return out

    @property
    def last_error(self):
        """NAME_last_error: why this thread's last call failed, or why its
        last run left the compiled code ("" if it did not)."""
        return (self._last_error() or b"").decode("utf-8", "replace")

    @property
    def last_bailout(self):
        """Whether this thread's last run ran in the embedded interpreter
        (its inputs were off the specialisation)."""
        return bool(self._last_bailout())

    def _fail(self, rc):
        why = self.last_error
        raise Error(why or "%s failed with %s" % (self.name, dl.RC_NAMES.get(rc, rc)), why, dl.RC_NAMES.get(rc, rc))

    def set_threads(self, n):
        """Threads for the kernels (<= 0: every processor; default 1). Not
        while runs of the model go on."""
        self._set_threads(int(n))

    def set_device(self, device):
        """"cpu", "cuda" or "cuda:N" (a library built with --device cuda)."""
        rc = self._set_device(str(device).encode("utf-8"))
        if rc:
            self._fail(rc)

    def _declaration(self):
        return "forward(%s)" % ", ".join("%s: %s" % (n, type_name(t)) for n, t in self.signature)

    def _slots(self, args, kwargs):
        s = Slots()
        if self.signature is None:
            if kwargs:
                raise Error("this library has no %s_signature (an older tsaot wrote it): its arguments have no "
                            "names; pass them by position" % self.name)
            for k, a in enumerate(args):
                s.guess(a, "input%d" % k)
            return s
        sig = self.signature
        if len(args) > len(sig):
            raise Error("forward() expected at most %d argument(s) but received %d argument(s). Declaration: %s" % (
                len(sig) + 1, len(args) + 1, self._declaration()))
        values = list(args)
        for k in range(len(args), len(sig)):
            if sig[k][0] not in kwargs:
                raise Error("forward() is missing value for argument '%s'. Declaration: %s" % (
                    sig[k][0], self._declaration()))
            values.append(kwargs.pop(sig[k][0]))
        if kwargs:
            extra = sorted(kwargs)[0]
            raise Error("forward() got an unexpected keyword argument '%s'%s. Declaration: %s" % (
                extra, " (given by position too)" if any(n == extra for n, _ in sig) else "", self._declaration()))
        for k, ((name, t), v) in enumerate(zip(sig, values)):
            try:
                s.value(v, t, name)
            except TypeMismatch:
                raise Error("forward() Expected a value of type '%s' for argument '%s' but instead found type "
                            "'%s'.\nPosition: %d\nDeclaration: %s" % (
                                type_name(t), name, type(v).__name__, k + 1,
                                self._declaration())) from None
        return s

    def run(self, *args, as_torch=False, **kwargs):
        """forward(*args): a list of the outputs, flattened depth-first as
        include/tsaot.h says (tuples and lists element by element, numbers
        as 0-d arrays, None as nothing); numpy arrays, or torch tensors with
        as_torch=True, sharing the memory the model wrote (no copy).

        Arguments by forward's declared types: a Tensor from a numpy array,
        a torch tensor or any object with __dlpack__ (its memory is passed,
        not copied); int, float and bool from Python or numpy numbers;
        List[int]/List[float]/List[bool] from a list; str from a str;
        Optional from None or the value; Tuple from a tuple; other lists
        from a list. Keyword arguments by forward's parameter names."""
        if as_torch:
            try:
                importlib.import_module("torch.utils.dlpack")
            except ImportError:
                raise Error("as_torch=True needs torch, which does not import here") from None
        slots = self._slots(args, kwargs)
        inputs, n = slots.array()
        for _ in range(3):
            room = self._room
            outs = (_PTR * room)()
            nout = ctypes.c_int(0)
            rc = self._run(inputs, n, outs, room, ctypes.byref(nout))
            if rc == dl.E_OUTPUT:
                # more outputs than room (the count is known only when the
                # model runs): once more with room for all
                more = re.match(r"the model gave (\d+) outputs, room for", self.last_error)
                if more and int(more.group(1)) > room:
                    self._room = int(more.group(1))
                    continue
            break
        del slots
        if rc:
            self._fail(rc)
        owners = [_Output(outs[i]) for i in range(nout.value)]
        return [o.torch(i) if as_torch else o.numpy(i) for i, o in enumerate(owners)]

    def __call__(self, *args, as_torch=False, **kwargs):
        """run(*args), but one output alone rather than a list of one, and a
        tuple for several."""
        outs = self.run(*args, as_torch=as_torch, **kwargs)
        return outs[0] if len(outs) == 1 else tuple(outs)

    def __repr__(self):
        return "<tsaot.Model %s (%s): %s>" % (self.name, self.path, ", ".join(repr(i) for i in self.inputs))


def load(path, name=None):
    """Opens a library `tsaot MODEL.pt -o PATH` wrote. NAME (the prefix of
    its functions) is read from the library's tsaot_model_name; name=
    overrides it."""
    return Model(path, name)
