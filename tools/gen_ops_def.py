#!/usr/bin/python3
"""Generate candidate TS_OP entries for ir/ops.def from PyTorch's registry.

ir/ops.def is the maintained source; this script only seeds it. It collects
op kinds ("aten::add") from graph text files, plain lists (one kind per line,
'#' comments allowed), the printed code of archives (--code) and --kinds,
looks up every overload that PyTorch registers for each, and prints TS_OP
entries sorted by namespace, then name.

    /usr/bin/python3 tools/gen_ops_def.py --existing ir/ops.def \\
        ../shared/zoo/*/torch_graph.txt --kinds aten::relu_,aten::sub \\
        --code ../shared/zoo/*/model.pt --emitter

--code reads code/**/*.py inside each archive (a torch.jit.save zip; any
other file is read as printed code itself): `torch.X(` is aten::X,
`ops.NS.X(` is NS::X (every namespace), `torch.autograd.grad(` and
`torch.autograd.backward(` are aten::grad and aten::backward, and the forms
the printer writes for some builtins (int(...), print(...), isinstance(...),
fork(...), x.tolist(), `with`, ...) count as their kinds (PRINTED_FORMS).

With --existing, the kinds already in that ops.def are included too and keep
their flags, and an entry that is TS_NO_SCHEMA there stays so; the kinds of
its pointwise rows (TS_PW, and their in-place kinds) are left out, since a
row is written by hand (ops.def's header says how).

--inplace-of FILE adds the in-place kinds (aten::foo_) of overloads that have
a kernel: FILE lists overload names ("aten::add.Tensor", "aten::relu"), and
every in-place overload PyTorch registers that pairs with a listed one the
way ir/variant.c pairs them (the kind without its '_', the same argument
types) brings its kind. (out= overloads need nothing: every entry holds all
of its kind's overloads.) --only-new prints only the entries --existing
lacks, to be placed in the file by their sort order. Schemas come
from `torch._C._jit_get_all_schemas()` (Debian's python3-torch 1.13: run
with /usr/bin/python3), or from --schemas FILE holding one schema per line
as str(schema) prints it.
"""
import argparse
import re
import sys
import zipfile

KIND_RE = re.compile(r"\b([a-z_]+)::([A-Za-z_][A-Za-z0-9_]*)")

# Effects beyond what alias annotations say (see TS_OPF_SIDE_EFFECT): the
# first six, and what PyTorch's Node::hasSideEffects or its conservative
# alias analysis keeps as well (with-blocks, fork/wait, grad mode).
SIDE_EFFECT = {
    "prim::RaiseException",
    "aten::warn",
    "prim::Print",
    "prim::CallFunction",
    "prim::CallMethod",
    "prim::SetAttr",
    "prim::Enter",
    "prim::Exit",
    "prim::fork",
    "aten::wait",
    "aten::set_grad_enabled",
}

# Kinds with no schema whose input count varies (set by the node).
VARIADIC_NO_SCHEMA = {
    "prim::fork",
}


# Kinds the IR emitter creates itself, or maps Python builtins and printed
# forms to, whether or not some archive at hand uses them (--emitter).
EMITTER_KINDS = [
    "prim::Constant", "prim::ListConstruct", "prim::ListUnpack", "prim::TupleConstruct",
    "prim::TupleUnpack", "prim::TupleIndex", "prim::TupleSlice", "prim::DictConstruct",
    "prim::If", "prim::Loop", "prim::CallFunction", "prim::CallMethod", "prim::GetAttr",
    "prim::SetAttr", "prim::Uninitialized", "prim::unchecked_cast", "prim::RaiseException",
    "prim::isinstance", "prim::NumToTensor", "prim::Print", "prim::dtype", "prim::device",
    "prim::layout", "prim::requires_grad", "prim::data", "prim::min", "prim::max", "prim::abs",
    "prim::CreateObject", "prim::Enter", "prim::Exit", "prim::EnumName", "prim::EnumValue",
    "prim::AutogradZero",
    "aten::Int", "aten::Float", "aten::Bool", "aten::str", "aten::len", "aten::__getitem__",
    "aten::_set_item", "aten::append", "aten::insert", "aten::pop", "aten::extend",
    "aten::format", "aten::list", "aten::dict", "aten::keys", "aten::values", "aten::items",
    "aten::get", "aten::setdefault", "aten::__contains__", "aten::__is__", "aten::__isnot__",
    "aten::__not__", "aten::__and__", "aten::__or__", "aten::__xor__",
    "aten::__round_to_zero_floordiv", "aten::floordiv", "aten::remainder", "aten::neg",
    "aten::slice", "aten::size", "aten::dim", "aten::numel", "aten::warn", "aten::tensor",
    "aten::ScalarImplicit", "aten::IntImplicit", "aten::FloatImplicit", "aten::Delete",
    "aten::__range_length", "aten::__derive_index", "aten::add", "aten::sub", "aten::mul",
    "aten::div", "aten::pow", "aten::eq", "aten::ne", "aten::lt", "aten::le", "aten::gt",
    "aten::ge", "aten::min", "aten::max", "aten::abs", "aten::sqrt", "aten::log", "aten::exp",
    "aten::floor", "aten::ceil", "aten::round", "aten::copy_", "aten::zeros", "aten::ones",
    "aten::empty", "aten::full", "aten::arange", "aten::stack", "aten::cat", "aten::chunk",
    "aten::split", "aten::tensor_split", "aten::unbind", "aten::join", "aten::strip",
    "aten::lower", "aten::upper", "aten::startswith", "aten::endswith", "aten::replace",
]


# What TorchScript's Python printer writes instead of `torch.X(` /
# `ops.NS.X(` for some kinds (python_print.cpp), matched in code with its
# string literals blanked out.
PRINTED_FORMS = [
    (r"(?<![\w.])int\(", ["aten::Int"]),
    (r"(?<![\w.])float\(", ["aten::Float"]),
    (r"(?<![\w.])bool\(", ["aten::Bool"]),
    (r"(?<![\w.])str\(", ["aten::str"]),
    (r"(?<![\w.])sorted\(", ["aten::sorted"]),
    (r"(?<![\w.])print\(", ["prim::Print"]),
    (r"(?<![\w.])isinstance\(", ["prim::isinstance"]),
    (r"(?<![\w.])unchecked_cast\(", ["prim::unchecked_cast"]),
    (r"(?<![\w.])uninitialized\(", ["prim::Uninitialized"]),
    (r"(?<![\w.])fork\(", ["prim::fork"]),
    (r"(?<![\w.])getattr\(", ["prim::GetAttr"]),
    (r"(?<![\w.])annotate\(int, ", ["aten::IntImplicit"]),
    (r"(?<![\w.])annotate\(float, ", ["aten::FloatImplicit"]),
    (r"(?<![\w.])annotate\(number, ", ["aten::ScalarImplicit"]),
    (r"\.tolist\(\)", ["prim::tolist"]),
    (r"\.__new__\(", ["prim::CreateObject"]),
    (r"\)\.value\b", ["prim::EnumValue"]),
    (r"\)\.name\b", ["prim::EnumName"]),
    (r"^\s*with\s", ["prim::Enter", "prim::Exit"]),
]
PRINTED_FORMS = [(re.compile(p, re.M), ks) for p, ks in PRINTED_FORMS]

STRING_RE = re.compile(r'"(?:[^"\\\n]|\\.)*"' + r"|'(?:[^'\\\n]|\\.)*'")
CODE_CALL_RES = [
    (re.compile(r"(?<![\w.])torch\.autograd\.(grad|backward)\s*\("), lambda m: "aten::" + m.group(1)),
    (re.compile(r"(?<![\w.])torch\.([A-Za-z_][A-Za-z0-9_]*)\s*\("), lambda m: "aten::" + m.group(1)),
    (re.compile(r"(?<![\w.])ops\.([A-Za-z_][A-Za-z0-9_]*)\.([A-Za-z_][A-Za-z0-9_]*)\s*\("),
     lambda m: m.group(1) + "::" + m.group(2)),
]


def code_texts(path):
    """The printed code of an archive (code/**/*.py in the zip), or of a file."""
    if zipfile.is_zipfile(path):
        with zipfile.ZipFile(path) as z:
            for n in sorted(z.namelist()):
                parts = n.split("/")
                if n.endswith(".py") and len(parts) > 2 and parts[1] == "code":
                    yield z.read(n).decode("utf-8")
    else:
        with open(path, encoding="utf-8") as f:
            yield f.read()


def code_kinds(text):
    """Kinds a printed TorchScript source refers to."""
    kinds = set()
    text = STRING_RE.sub('""', text)
    for rx, kind in CODE_CALL_RES:
        kinds.update(kind(m) for m in rx.finditer(text))
    for rx, ks in PRINTED_FORMS:
        if rx.search(text):
            kinds.update(ks)
    return kinds


def load_schemas(path):
    if path:
        with open(path) as f:
            return [l.rstrip("\n") for l in f if l.strip()]
    import torch  # noqa: imported only when no dump is given

    return [str(s) for s in torch._C._jit_get_all_schemas()]


def schema_kind(s):
    """'aten::add.Tensor(...) -> ...' -> 'aten::add'."""
    head = s.split("(", 1)[0]
    return head.split(".", 1)[0]


def is_opaque(s):
    """A schema that says nothing: '(...) -> ...'."""
    return s.split("(", 1)[1].startswith("...) -> ...")


def read_existing(path):
    """Kinds, flags and whether the entry is TS_NO_SCHEMA, from an ops.def."""
    text = open(path).read()
    out = {}
    for m in re.finditer(r"^TS_OP\((\w+),\s*(\w+),\s*([^,]+),\s*(TS_NO_SCHEMA)?", text, re.M):
        ns, name, flags, nosch = m.groups()
        out[f"{ns}::{name}"] = (flags.strip(), bool(nosch))
    return out


def schema_parts(s):
    """'aten::add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> ...'
    -> ('aten::add_', 'Tensor', ['Tensor', 'Tensor', 'Scalar'], alias of arg 0)."""
    head, rest = s.split("(", 1)
    kind, _, overload = head.partition(".")
    depth, cur, args = 0, "", []
    for ch in rest:
        if ch in "([":
            depth += 1
        elif ch in ")]":
            if depth == 0:
                break
            depth -= 1
        if ch == "," and depth == 0:
            args.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        args.append(cur.strip())
    args = [a for a in args if a != "*"]
    types = [re.sub(r"\([^)]*\)", "", a.rsplit(" ", 1)[0].split("=")[0]).strip() for a in args]
    # int[2] and int[] are one type (List[int]) to the pairing
    types = [re.sub(r"\[[0-9]+\]", "[]", t) for t in types]
    writes = [bool(re.search(r"\([a-z]+!\)", a.rsplit(" ", 1)[0])) for a in args]
    return kind, overload, types, writes


def inplace_kinds(schemas, with_kernels):
    """In-place kinds one of whose overloads pairs with an overload in
    with_kernels (ir/variant.c's rule: same argument types, the overload
    of the same name first, else the only one that fits)."""
    parts = [schema_parts(s) for s in schemas]
    by_kind = {}
    for p in parts:
        by_kind.setdefault(p[0], []).append(p)
    found = set()
    for kind, ov, types, writes in parts:
        if not kind.endswith("_") or kind.endswith("__") or not writes or not writes[0] or any(writes[1:]):
            continue
        fits = [b for b in by_kind.get(kind[:-1], []) if b[2] == types and not any(b[3])]
        named = [b for b in fits if b[1] == ov]
        pick = named[0] if named else fits[0] if len(fits) == 1 else None
        if pick and (pick[0] + ("." + pick[1] if pick[1] else "")) in with_kernels:
            found.add(kind)
    return found


def read_pointwise_rows(path):
    """The kinds an ops.def declares by TS_PW rows (with IP, name_ too)."""
    text = open(path).read()
    out = set()
    for m in re.finditer(r"^TS_PW\((\w+),\s*(\w+),\s*(IP|NOIP),", text, re.M):
        ns, name, ip = m.groups()
        out.add(f"{ns}::{name}")
        if ip == "IP":
            out.add(f"{ns}::{name}_")
    return out


def c_string(s):
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def entry(kind, flags, schemas):
    ns, name = kind.split("::")
    if not schemas:
        return f"TS_OP({ns}, {name}, {flags}, TS_NO_SCHEMA)"
    lines = [f"TS_OP({ns}, {name}, {flags},"]
    lines += ["      " + c_string(s) + ("," if i + 1 < len(schemas) else ")") for i, s in enumerate(schemas)]
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("files", nargs="*", help="graph text files or kind lists")
    ap.add_argument("--code", nargs="+", action="extend", default=[], metavar="ARCHIVE",
                    help="archives (or printed code files) whose code's kinds to add")
    ap.add_argument("--kinds", default="", help="comma-separated kinds to add")
    ap.add_argument("--emitter", action="store_true", help="add EMITTER_KINDS")
    ap.add_argument("--existing", help="an ops.def whose kinds and flags are kept")
    ap.add_argument("--schemas", help="a dump of str(schema), one per line (default: ask torch)")
    ap.add_argument("--namespaces", default="aten,prim", help="namespaces to take from files")
    ap.add_argument("--ns-order", default="prim,aten", help="order of the namespace sections")
    ap.add_argument("--inplace-of", metavar="FILE",
                    help="overloads with kernels, one a line: add the in-place kinds that pair with them")
    ap.add_argument("--only-new", action="store_true", help="print only the entries --existing lacks")
    args = ap.parse_args()

    namespaces = set(args.namespaces.split(","))
    kinds = set()
    for path in args.files:
        with open(path) as f:
            for line in f:
                line = line.split("#", 1)[0] if not line.lstrip().startswith("%") else line
                for ns, name in KIND_RE.findall(line):
                    if ns in namespaces:
                        kinds.add(f"{ns}::{name}")
    for path in args.code:
        for text in code_texts(path):
            kinds.update(code_kinds(text))
    kinds.update(k for k in args.kinds.split(",") if k)
    if args.emitter:
        kinds.update(EMITTER_KINDS)
    existing = read_existing(args.existing) if args.existing else {}
    kinds.update(existing)
    # a pointwise row (TS_PW) is written by hand: its kinds are not printed
    pointwise = read_pointwise_rows(args.existing) if args.existing else set()
    kinds -= pointwise

    by_kind = {}
    all_schemas = load_schemas(args.schemas)
    for s in all_schemas:
        by_kind.setdefault(schema_kind(s), []).append(s)
    if args.inplace_of:
        with open(args.inplace_of) as f:
            with_kernels = {l.split("#", 1)[0].strip() for l in f} - {""}
        kinds.update(inplace_kinds(all_schemas, with_kernels) - pointwise)

    # "prim::FusionGroup_0", "prim::fork_0": the graph printer numbers the
    # nodes that hold a subgraph (printed below as "with prim::fork_0 = graph(").
    for k in sorted(kinds):
        base = re.sub(r"_[0-9]+$", "", k)
        if k not in by_kind and k not in existing and base != k:
            kinds.discard(k)
            kinds.add(base)

    order = {ns: i for i, ns in enumerate(args.ns_order.split(","))}
    sections = {}
    for k in kinds:
        ns = k.split("::")[0]
        sections.setdefault(ns, []).append(k)
    unknown = []
    for ns in sorted(sections, key=lambda n: (order.get(n, len(order)), n)):
        if not args.only_new:
            print(f"/* {ns} */")
        for k in sorted(sections[ns], key=lambda k: k.split("::")[1]):
            if args.only_new and k in existing:
                continue
            schemas = by_kind.get(k, [])
            flags, keep_none = existing.get(k, (None, False))
            opaque = bool(schemas) and all(is_opaque(s) for s in schemas)
            if keep_none or opaque:
                schemas = []
            if flags is None:
                f = []
                if not by_kind.get(k) or opaque:
                    f.append("TS_OPF_SPECIAL")
                if k in SIDE_EFFECT:
                    f.append("TS_OPF_SIDE_EFFECT")
                if opaque or any("..." in s for s in by_kind.get(k, [])) or k in VARIADIC_NO_SCHEMA:
                    f.append("TS_OPF_VARIADIC")
                flags = " | ".join(f) if f else "TS_OPF_NONE"
                if not by_kind.get(k):
                    unknown.append(k)
            print(entry(k, flags, schemas))
        if not args.only_new:
            print()
    for k in unknown:
        print(f"warning: torch registers no schema for {k}; emitted as TS_NO_SCHEMA", file=sys.stderr)


if __name__ == "__main__":
    main()
