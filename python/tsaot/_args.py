"""forward's arguments: the types NAME_signature names, and Python values
made into include/tsaot.h's slots (DLTensors over the caller's memory where
the value is an array or tensor, small arrays of ours for numbers, lists of
numbers and str)."""
import ctypes
import operator

from . import _dlpack as dl


class Error(Exception):
    """A failure of the compiler or of a compiled model. `last_error` is the
    model's NAME_last_error (or the compiler's message), `code` the C ABI's
    return code name ("TSAOT_E_INPUT", ...) or None."""

    def __init__(self, message, last_error=None, code=None):
        super().__init__(message)
        self.last_error = message if last_error is None else last_error
        self.code = code


# ------------------------------------------------------------------ types
#
# A type is a tuple: ("Tensor",), ("int",), ("float",), ("bool",), ("str",),
# ("Optional", T), ("List", T), ("Tuple", (T, ...)) or ("?", text) for one
# this package does not know.

_SCALARS = ("int", "float", "bool", "str")


def parse_type(text):
    """A type from NAME_signature's text (ts_type_print: Tensor, int, T?,
    T[], (A, B), a refined tensor such as Float(2, 3, strides=[3, 1], ...))."""
    pos = [0]

    def peek():
        return text[pos[0]] if pos[0] < len(text) else ""

    def skip_spaces():
        while peek() == " ":
            pos[0] += 1

    def balanced():
        # past a "(...)" whose contents do not matter (a tensor's refinement)
        depth = 0
        while pos[0] < len(text):
            c = text[pos[0]]
            pos[0] += 1
            depth += c in "([" and 1 or c in ")]" and -1 or 0
            if depth == 0:
                return
        raise ValueError("unbalanced brackets")

    def one():
        skip_spaces()
        if peek() == "(":
            pos[0] += 1
            elems = []
            skip_spaces()
            while peek() != ")":
                elems.append(one())
                skip_spaces()
                if peek() == ",":
                    pos[0] += 1
                elif peek() != ")":
                    raise ValueError("expected ',' or ')'")
            pos[0] += 1
            t = ("Tuple", tuple(elems))
        else:
            start = pos[0]
            while peek() and (peek().isalnum() or peek() in "_."):
                pos[0] += 1
            word = text[start:pos[0]]
            if not word:
                raise ValueError("expected a type")
            if word in _SCALARS:
                t = (word,)
            elif word == "NamedTuple" and peek() == "(":
                # NamedTuple(a : Tensor, b : int): a tuple to the ABI
                pos[0] += 1
                elems = []
                skip_spaces()
                while peek() != ")":
                    field = text.find(":", pos[0])
                    if field < 0:
                        raise ValueError("expected 'name : type'")
                    pos[0] = field + 1
                    elems.append(one())
                    skip_spaces()
                    if peek() == ",":
                        pos[0] += 1
                        skip_spaces()
                    elif peek() != ")":
                        raise ValueError("expected ',' or ')'")
                pos[0] += 1
                t = ("Tuple", tuple(elems))
            elif word == "Tensor" or word.endswith("Tensor") or (peek() == "(" and word not in (
                    "Dict", "Union", "Future", "RRef", "NamedTuple")):
                # Tensor, FloatTensor, Float(2, 3, ...): a tensor of any refinement
                if peek() == "(":
                    balanced()
                if text.startswith("[Undefined]", pos[0]):
                    pos[0] += len("[Undefined]")
                t = ("Tensor",)
            else:
                if peek() == "(":
                    balanced()
                t = ("?", text[start:pos[0]])
        while True:
            if text.startswith("[]", pos[0]):
                pos[0] += 2
                t = ("List", t)
            elif peek() == "?":
                pos[0] += 1
                t = ("Optional", t)
            else:
                return t

    t = one()
    skip_spaces()
    if pos[0] != len(text):
        raise ValueError("text after the type")
    return t


def type_name(t):
    """The type as Python's typing writes it (PyTorch's messages do too)."""
    k = t[0]
    if k == "Optional" or k == "List":
        return "%s[%s]" % (k, type_name(t[1]))
    if k == "Tuple":
        return "Tuple[%s]" % ", ".join(type_name(e) for e in t[1])
    return t[1] if k == "?" else k


def parse_signature(text):
    """[(name, type)] from NAME_signature's lines; names missing from the
    text become input0, input1, ..."""
    out = []
    for k, line in enumerate(text.split("\n")[:-1] if text.endswith("\n") else text.split("\n")):
        name, sep, ty = line.partition(":")
        if not sep:
            raise ValueError("line %d has no ':'" % (k + 1))
        out.append((name.strip() or "input%d" % k, parse_type(ty.strip())))
    return out


def number_list_kind(t):
    """'int', 'float' or 'bool' for List[int]/List[float]/List[bool] (one
    1-d tensor), else None."""
    return t[1][0] if t[0] == "List" and t[1][0] in ("int", "float", "bool") else None


def spec_count(t, specs, i):
    """The index past the specs of one argument of type t starting at
    specs[i] (include/tsaot.h: a None takes one, a list its length and
    elements, or one element's specs for any length)."""
    if i >= len(specs):
        raise ValueError("fewer specs than the signature needs")
    k = t[0]
    if k == "Optional":
        return i + 1 if specs[i].kind == "none" else spec_count(t[1], specs, i)
    if k == "Tuple":
        for e in t[1]:
            i = spec_count(e, specs, i)
        return i
    if k == "List" and not number_list_kind(t):
        n = specs[i].length
        i += 1
        for _ in range(1 if n is None else n):
            i = spec_count(t[1], specs, i)
        return i
    return i + 1


# ------------------------------------------------------------------ slots


def _numpy():
    import numpy
    return numpy


_NUMPY_DTYPES = {}


def _numpy_dtypes():
    """numpy dtype -> (code, bits), keyed by the dtype objects (faster than
    by their names)."""
    if not _NUMPY_DTYPES:
        np = _numpy()
        _NUMPY_DTYPES.update({np.dtype(n): k for n, k in dl.NUMPY_TO_DL.items()})
    return _NUMPY_DTYPES


def _is_torch_tensor(v):
    torch = __import__("sys").modules.get("torch")
    return torch is not None and isinstance(v, torch.Tensor)


class Slots:
    """The DLTensors of one call and everything they point into."""

    def __init__(self):
        self.tensors = []
        self.keep = []

    def array(self):
        arr = (dl.DLTensor * max(len(self.tensors), 1))(*self.tensors)
        return arr, len(self.tensors)

    def _ints(self, values):
        a = (ctypes.c_int64 * max(len(values), 1))(*values)
        self.keep.append(a)
        return a

    def none(self):
        t = dl.DLTensor()
        t.ndim = -1
        t.device = dl.DLDevice(dl.kDLCPU, 0)
        self.tensors.append(t)

    def numpy(self, a, where):
        """A numpy array's own memory; a copy only where the ABI cannot take
        the layout (negative or ragged strides, unaligned, byte-swapped)."""
        np = _numpy()
        if not a.dtype.isnative:
            a = a.astype(a.dtype.newbyteorder("="))
        key = _numpy_dtypes().get(a.dtype)
        if key is None:
            raise Error("argument '%s': %s" % (where, dl.NUMPY_REFUSED % ("numpy." + a.dtype.name)))
        es = a.dtype.itemsize
        if not a.flags.aligned or any(s < 0 or s % es for s in a.strides):
            a = np.ascontiguousarray(a)
        t = dl.DLTensor()
        t.data = a.__array_interface__["data"][0] or None
        t.device = dl.DLDevice(dl.kDLCPU, 0)
        t.ndim = a.ndim
        t.dtype = dl.DLDataType(key[0], key[1], 1)
        t.shape = self._ints(a.shape)
        t.strides = self._ints([s // es for s in a.strides])
        self.keep.append(a)
        self.tensors.append(t)

    def torch(self, v, where):
        """A torch tensor's own memory (data_ptr, sizes, strides); torch
        1.13's DLPack export refuses bool, this does not."""
        if str(v.layout) != "torch.strided" or v.is_quantized:
            raise Error("argument '%s': only dense (strided) tensors cross the C ABI, got a %s tensor" % (
                where, "quantized" if v.is_quantized else repr(v.layout)))
        if v.requires_grad:
            v = v.detach()
        if v.is_conj():
            v = v.resolve_conj()
        if v.is_neg():
            v = v.resolve_neg()
        key = dl.TORCH_TO_DL.get(repr(v.dtype).replace("torch.", ""))
        if key is None:
            raise Error("argument '%s': a tensor of dtype %s does not cross the C ABI" % (where, v.dtype))
        dev = v.device
        if dev.type == "cpu":
            device = dl.DLDevice(dl.kDLCPU, 0)
        elif dev.type == "cuda":
            device = dl.DLDevice(dl.kDLCUDA, dev.index or 0)
        else:
            raise Error("argument '%s': a tensor on %s does not cross the C ABI (cpu or cuda)" % (where, dev))
        t = dl.DLTensor()
        t.data = v.data_ptr() or None
        t.device = device
        t.ndim = v.dim()
        t.dtype = dl.DLDataType(key[0], key[1], 1)
        t.shape = self._ints(list(v.shape))
        t.strides = self._ints(list(v.stride()))
        self.keep.append(v)
        self.tensors.append(t)

    def dlpack(self, v, where):
        """Any object with __dlpack__: the DLTensor its capsule holds, the
        capsule kept until the call ends (its own destructor frees it)."""
        try:
            cap = v.__dlpack__()
        except Exception as e:
            raise Error("argument '%s': __dlpack__ failed: %s" % (where, e)) from None
        ptr = _capsule_pointer(cap, b"dltensor")
        if not ptr:
            raise Error("argument '%s': __dlpack__ did not return a 'dltensor' capsule" % where)
        self.keep.append(cap)
        self.tensors.append(dl.DLManagedTensor.from_address(ptr).dl_tensor)

    def tensor(self, v, where, decl="Tensor"):
        np = _numpy() if type(v).__module__.startswith("numpy") else None
        if np is not None and isinstance(v, np.ndarray):
            self.numpy(v, where)
        elif _is_torch_tensor(v):
            self.torch(v, where)
        elif hasattr(v, "__dlpack__"):
            self.dlpack(v, where)
        else:
            raise TypeMismatch(decl, v)

    def scalar(self, v, kind, decl):
        """A 0-d int64/float64/bool tensor for an int, float or bool: the
        values PyTorch takes there (bool for int, int for float and bool,
        numpy numbers, 0-d tensors and arrays)."""
        if _is_torch_tensor(v) or type(v).__module__.startswith("numpy"):
            if getattr(v, "ndim", 0) != 0 or getattr(v.dtype, "is_complex", False) or str(v.dtype).startswith(
                    ("complex", "torch.complex")):
                raise TypeMismatch(decl, v)
            v = v.item()
        np = _numpy()
        if kind == "int":
            if isinstance(v, float):
                raise TypeMismatch(decl, v)
            try:
                a = np.array(operator.index(v), dtype=np.int64)
            except (TypeError, OverflowError):
                raise TypeMismatch(decl, v) from None
        elif kind == "float":
            if not isinstance(v, (int, float)):
                raise TypeMismatch(decl, v)
            a = np.array(float(v), dtype=np.float64)
        else:
            if not isinstance(v, (int, float)):
                raise TypeMismatch(decl, v)
            a = np.array(bool(v), dtype=np.bool_)
        self.numpy(a, "")

    def value(self, v, t, where):
        """v as an argument of type t: its slots."""
        k = t[0]
        if k == "Optional":
            if v is None:
                self.none()
            else:
                self.value(v, t[1], where)
        elif k == "Tensor":
            self.tensor(v, where, type_name(t))
        elif k in ("int", "float", "bool"):
            self.scalar(v, k, type_name(t))
        elif k == "str":
            if isinstance(v, str):
                try:
                    v = v.encode("utf-8")
                except UnicodeEncodeError as e:
                    raise Error("argument '%s': the str is not valid UTF-8: %s" % (where, e)) from None
            if not isinstance(v, bytes):
                raise TypeMismatch(type_name(t), v)
            np = _numpy()
            self.numpy(np.frombuffer(v, dtype=np.uint8).copy(), where)
        elif number_list_kind(t):
            if not isinstance(v, (list, tuple)):
                raise TypeMismatch(type_name(t), v)
            np = _numpy()
            ek = number_list_kind(t)
            for e in v:
                bad = isinstance(e, float) and ek != "float" or not isinstance(e, (int, float)) and not (
                    type(e).__module__.startswith("numpy") and getattr(e, "ndim", 1) == 0)
                if bad:
                    raise TypeMismatch(type_name(t), v)
            dt = {"int": np.int64, "float": np.float64, "bool": np.bool_}[ek]
            self.numpy(np.array([x for x in v], dtype=dt).reshape(len(v)), where)
        elif k == "List":
            if not isinstance(v, (list, tuple)):
                raise TypeMismatch(type_name(t), v)
            np = _numpy()
            self.numpy(np.array(len(v), dtype=np.int64), where)
            for j, e in enumerate(v):
                self.value(e, t[1], "%s[%d]" % (where, j))
        elif k == "Tuple":
            if not isinstance(v, (list, tuple)) or len(v) != len(t[1]):
                raise TypeMismatch(type_name(t), v)
            for j, (e, et) in enumerate(zip(v, t[1])):
                self.value(e, et, "%s[%d]" % (where, j))
        else:
            raise Error("argument '%s': an argument of type %s does not cross the C ABI" % (where, type_name(t)))

    def guess(self, v, where):
        """v's slots by its own Python type, for a library without
        NAME_signature (older than it): the runtime checks them."""
        np = _numpy()
        if v is None:
            self.none()
        elif isinstance(v, bool) or isinstance(v, np.bool_):
            self.scalar(v, "bool", "bool")
        elif isinstance(v, (int, np.integer)):
            self.scalar(v, "int", "int")
        elif isinstance(v, (float, np.floating)):
            self.scalar(v, "float", "float")
        elif isinstance(v, (str, bytes)):
            self.value(v, ("str",), where)
        elif isinstance(v, tuple):
            for j, e in enumerate(v):
                self.guess(e, "%s[%d]" % (where, j))
        elif isinstance(v, list):
            if all(isinstance(e, (int, float)) for e in v) and v:
                ek = "bool" if all(isinstance(e, bool) for e in v) else "int" if all(
                    isinstance(e, int) for e in v) else "float"
                self.value(v, ("List", (ek,)), where)
            else:
                self.numpy(np.array(len(v), dtype=np.int64), where)
                for j, e in enumerate(v):
                    self.guess(e, "%s[%d]" % (where, j))
        else:
            self.tensor(v, where)


class TypeMismatch(Exception):
    """A value that is not of its argument's type; Model words it as
    PyTorch does, naming the argument."""

    def __init__(self, decl, value):
        super().__init__(decl)
        self.decl, self.value = decl, value


# private prototypes: ctypes.pythonapi's attributes are shared objects whose
# argtypes another module may set
_PyCapsule_GetPointer = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.py_object, ctypes.c_char_p)(
    ("PyCapsule_GetPointer", ctypes.pythonapi))
_PyCapsule_IsValid = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.py_object, ctypes.c_char_p)(
    ("PyCapsule_IsValid", ctypes.pythonapi))


def _capsule_pointer(cap, name):
    if not _PyCapsule_IsValid(cap, name):
        return None
    return _PyCapsule_GetPointer(cap, name)
