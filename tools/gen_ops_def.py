#!/usr/bin/python3
"""Generate candidate TS_OP entries for ir/ops.def from PyTorch's registry.

ir/ops.def is the maintained source; this script only seeds it. It collects
op kinds ("aten::add") from graph text files, plain lists (one kind per line,
'#' comments allowed) and --kinds, looks up every overload that PyTorch
registers for each, and prints TS_OP entries sorted by namespace, then name.

    /usr/bin/python3 tools/gen_ops_def.py --existing ir/ops.def \\
        ../shared/zoo/*/torch_graph.txt --kinds aten::relu_,aten::sub

With --existing, the kinds already in that ops.def are included too and keep
their flags, and an entry that is TS_NO_SCHEMA there stays so. Schemas come
from `torch._C._jit_get_all_schemas()` (Debian's python3-torch 1.13: run
with /usr/bin/python3), or from --schemas FILE holding one schema per line
as str(schema) prints it.
"""
import argparse
import re
import sys

KIND_RE = re.compile(r"\b([a-z_]+)::([A-Za-z_][A-Za-z0-9_]*)")

# Effects beyond what alias annotations say (see TS_OPF_SIDE_EFFECT).
SIDE_EFFECT = {
    "prim::RaiseException",
    "aten::warn",
    "prim::Print",
    "prim::CallFunction",
    "prim::CallMethod",
    "prim::SetAttr",
}


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
    ap.add_argument("--kinds", default="", help="comma-separated kinds to add")
    ap.add_argument("--existing", help="an ops.def whose kinds and flags are kept")
    ap.add_argument("--schemas", help="a dump of str(schema), one per line (default: ask torch)")
    ap.add_argument("--namespaces", default="aten,prim", help="namespaces to take from files")
    ap.add_argument("--ns-order", default="prim,aten", help="order of the namespace sections")
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
    kinds.update(k for k in args.kinds.split(",") if k)
    existing = read_existing(args.existing) if args.existing else {}
    kinds.update(existing)

    by_kind = {}
    for s in load_schemas(args.schemas):
        by_kind.setdefault(schema_kind(s), []).append(s)

    # "prim::FusionGroup_0" names a numbered subgraph of prim::FusionGroup.
    for k in sorted(kinds):
        base = re.sub(r"_[0-9]+$", "", k)
        if k not in by_kind and k not in existing and base != k and (base in by_kind or base in existing):
            kinds.discard(k)
            kinds.add(base)

    order = {ns: i for i, ns in enumerate(args.ns_order.split(","))}
    sections = {}
    for k in kinds:
        ns = k.split("::")[0]
        sections.setdefault(ns, []).append(k)
    unknown = []
    for ns in sorted(sections, key=lambda n: (order.get(n, len(order)), n)):
        print(f"/* {ns} */")
        for k in sorted(sections[ns], key=lambda k: k.split("::")[1]):
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
                if opaque or any("..." in s for s in by_kind.get(k, [])):
                    f.append("TS_OPF_VARIADIC")
                flags = " | ".join(f) if f else "TS_OPF_NONE"
                if not by_kind.get(k):
                    unknown.append(k)
            print(entry(k, flags, schemas))
        print()
    for k in unknown:
        print(f"warning: torch registers no schema for {k}; emitted as TS_NO_SCHEMA", file=sys.stderr)


if __name__ == "__main__":
    main()
